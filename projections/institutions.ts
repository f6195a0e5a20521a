/** Institutions and their API keys (stored as SHA-256 hashes only). */
import { put, type Projection } from './projection.js';

export const institutions: Projection = {
  name: 'institutions',
  InstitutionRegistered: (view, d, at) => {
    const current = view.get('institution', d.institution_id);
    return [
      put('institution', {
        id: d.institution_id,
        name: d.name,
        share_base_url: d.share_base_url.replace(/\/+$/, ''),
        created_at: current?.created_at ?? at,
        updated_at: at,
      }),
    ];
  },
  ApiKeyIssued: (_view, d, at) => [
    put('apikey', {
      id: d.key_id,
      institution_id: d.institution_id,
      key_sha256: d.key_sha256,
      label: d.label ?? null,
      revoked: false,
      created_at: at,
      updated_at: at,
    }),
  ],
  ApiKeyRevoked: (view, d, at) => {
    const key = view.get('apikey', d.key_id);
    return key ? [put('apikey', { ...key, revoked: true, updated_at: at })] : [];
  },
};
