/**
 * Institutions and their API keys (stored as SHA-256 hashes only). An
 * institution registered again, or a key issued again, never reaches these
 * folds: the folder refuses such events (see EventFolder).
 */
import { put, type Projection } from './projection.js';

const shareBase = (url: string) => url.replace(/\/+$/, '');

export const institutions: Projection = {
  name: 'institutions',
  InstitutionRegistered: (_view, d, at) => [
    put('institution', {
      id: d.institution_id,
      name: d.name,
      share_base_url: shareBase(d.share_base_url),
      created_at: at,
      updated_at: at,
    }),
  ],
  InstitutionUpdated: (view, d, at) => {
    const institution = view.get('institution', d.institution_id);
    if (!institution) return [];
    return [
      put('institution', {
        ...institution,
        name: d.name ?? institution.name,
        share_base_url: d.share_base_url === undefined ? institution.share_base_url : shareBase(d.share_base_url),
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
