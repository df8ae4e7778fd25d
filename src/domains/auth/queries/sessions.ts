/** The sessions table: the only place that reads or writes it (docs/architecture.md). */
import type { Queryable } from '../../../platform/db/index.js';
import type { Scope } from '../../../platform/http/access.js';

export interface NewSession {
  session_hash: string;
  user_id: string;
  device_group_id: string | null;
  device_id: string | null;
  scopes: Scope[] | null;
  expires_at: Date;
}

export async function insertSession(db: Queryable, s: NewSession, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO sessions (session_hash, user_id, device_group_id, device_id, scopes, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [s.session_hash, s.user_id, s.device_group_id, s.device_id, s.scopes, now, s.expires_at],
  );
}

/** Of these hashes, those of sessions not ended and not expired at `now`. */
export async function selectLiveSessionHashes(db: Queryable, hashes: readonly string[], now: Date): Promise<string[]> {
  const rows = await db.query<{ id: string }>('SELECT session_hash AS id FROM sessions WHERE session_hash = ANY($1) AND ended_at IS NULL AND expires_at > $2', [[...hashes], now]);
  return rows.map((r) => r.id);
}

export async function endSession(db: Queryable, hash: string, now: Date): Promise<void> {
  await db.query('UPDATE sessions SET ended_at = $2 WHERE session_hash = $1 AND ended_at IS NULL', [hash, now]);
}

export interface OpenSessionRow {
  user_id: string;
  email: string;
  superuser: boolean;
  scopes: Scope[] | null;
  device_group_id: string | null;
  device_id: string | null;
  expires_at: Date;
}

/** The session of this hash, not ended, with its account. A read model: it reads the account (users' table). */
export async function selectOpenSession(db: Queryable, hash: string): Promise<OpenSessionRow | null> {
  return (await db.query<OpenSessionRow>(
    `SELECT s.user_id, u.email, u.superuser, s.scopes, s.device_group_id, s.device_id, s.expires_at
     FROM sessions s JOIN users u USING (user_id)
     WHERE s.session_hash = $1 AND s.ended_at IS NULL`,
    [hash],
  ))[0] ?? null;
}
