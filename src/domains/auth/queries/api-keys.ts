/** The api_keys table: the only place that reads or writes it (docs/architecture.md). */
import type { Queryable } from '../../../platform/db/index.js';
import type { Role, Scope } from '../../../platform/http/access.js';

export interface KeyRow {
  api_key_id: string;
  name: string | null;
  principal: 'user' | 'device' | 'role';
  user_id: string | null;
  device_id: string | null;
  role: Role | null;
  group_ids: string[];
  teams: string[];
  scopes: Scope[] | null;
  expires_at: Date | null;
  created_by: string | null;
  origin: 'group' | 'instance';
  created_at: Date;
  last_used_at: Date | null;
}

const COLUMNS = 'api_key_id, name, principal, user_id, device_id, role, group_ids, teams, scopes, expires_at, created_by, origin, created_at, last_used_at';

/** Of these ids, those of keys not revoked and not expired at `now`. */
export async function selectLiveApiKeyIds(db: Queryable, ids: readonly string[], now: Date): Promise<string[]> {
  const rows = await db.query<{ id: string }>('SELECT api_key_id AS id FROM api_keys WHERE api_key_id = ANY($1) AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)', [[...ids], now]);
  return rows.map((r) => r.id);
}

export type KeyLookupRow = KeyRow & { email: string | null; superuser: boolean | null; creator_superuser: boolean | null };

/**
 * A key that is not revoked, by its hash or its id, with its account and its creator. A read
 * model: it reads both accounts (users' table).
 */
export async function selectKey(db: Queryable, where: 'k.key_hash = $1' | 'k.api_key_id = $1', value: string): Promise<KeyLookupRow | undefined> {
  return (await db.query<KeyLookupRow>(
    `SELECT k.api_key_id, k.principal, k.user_id, k.device_id, k.role, k.group_ids, k.teams, k.scopes, k.expires_at,
            k.created_by, k.origin, u.email, u.superuser, c.superuser AS creator_superuser
     FROM api_keys k LEFT JOIN users u ON u.user_id = k.user_id LEFT JOIN users c ON c.user_id = k.created_by
     WHERE ${where} AND k.revoked_at IS NULL`,
    [value],
  ))[0];
}

export type NewKey = Omit<KeyRow, 'created_at' | 'last_used_at'> & { key_hash: string };

export async function insertApiKey(db: Queryable, k: NewKey, now: Date): Promise<KeyRow> {
  const rows = await db.query<KeyRow>(
    `INSERT INTO api_keys (api_key_id, key_hash, name, principal, user_id, device_id, role, group_ids, teams, scopes, expires_at, created_by, origin, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
     RETURNING ${COLUMNS}`,
    [k.api_key_id, k.key_hash, k.name, k.principal, k.user_id, k.device_id, k.role, k.group_ids, k.teams, k.scopes, k.expires_at, k.created_by, k.origin, now],
  );
  return rows[0]!;
}

/** The group's keys not revoked, oldest first. */
export function selectGroupKeys(db: Queryable, groupId: string): Promise<KeyRow[]> {
  return db.query<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE $1 = ANY(group_ids) AND revoked_at IS NULL ORDER BY created_at, api_key_id`, [groupId]);
}

/** The teams of a key of the group not revoked; null when there is none. */
export async function selectGroupKeyTeams(db: Queryable, groupId: string, apiKeyId: string): Promise<string[] | null> {
  const rows = await db.query<{ teams: string[] }>('SELECT teams FROM api_keys WHERE api_key_id = $1 AND $2 = ANY(group_ids) AND revoked_at IS NULL', [apiKeyId, groupId]);
  return rows[0]?.teams ?? null;
}

export async function revokeGroupKey(db: Queryable, groupId: string, apiKeyId: string, now: Date): Promise<void> {
  await db.query('UPDATE api_keys SET revoked_at = $3 WHERE api_key_id = $1 AND $2 = ANY(group_ids) AND revoked_at IS NULL', [apiKeyId, groupId, now]);
}
