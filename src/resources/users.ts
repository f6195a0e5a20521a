/** The user summary, nested as `user` or `user_info` wherever a record refers to a profile. */
import type { ProfileRecord } from '../../projections/records.js';
import { date, FragmentCache, json, type JsonView, str } from './json.js';

const summaries = new FragmentCache<ProfileRecord, string>({
  nests: [],
  deps: () => [],
  build: (p) =>
    `{"id":${str(p.id)},"first_name":${str(p.first_name)},"last_name":${str(p.last_name)},"email":${str(p.email)},` +
    `"gender":${json(p.gender)},"address":${str(p.address)},"phone_number":${str(p.phone_number)},` +
    `"date_of_birth":${date(p.date_of_birth)},"timezone":${str(p.timezone)},` +
    `"address_coordinates":${json(p.latitude_longitude)}}`,
});

export const userSummaryJson = (profile: ProfileRecord | undefined, view: JsonView): string =>
  profile ? summaries.get(profile, view) : 'null';
