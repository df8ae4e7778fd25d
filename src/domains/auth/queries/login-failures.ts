/**
 * The login_failures table: the only place that reads or writes it (docs/architecture.md). Keys
 * are not scoped to a group: an address or an email is throttled across groups (auth/throttle.ts).
 */
import type { Queryable } from '../../../platform/db/index.js';

/** The failures of each of `keys` after `since`, for the keys that have any. */
export function countLoginFailures(db: Queryable, keys: readonly string[], since: Date): Promise<{ key: string; n: number }[]> {
  return db.query<{ key: string; n: number }>(
    'SELECT key, count(*)::int AS n FROM login_failures WHERE key = ANY($1) AND at > $2 GROUP BY key',
    [[...keys], since],
  );
}

/** The time of the failure of `key` after `since` that has `offset` later ones, or null. */
export async function selectLoginFailureAt(db: Queryable, key: string, since: Date, offset: number): Promise<Date | null> {
  const rows = await db.query<{ at: Date }>('SELECT at FROM login_failures WHERE key = $1 AND at > $2 ORDER BY at DESC OFFSET $3 LIMIT 1', [key, since, offset]);
  return rows[0]?.at ?? null;
}

/** Everything at or before `before`, whatever its key (index login_failures_at, migration 0011). */
export async function deleteLoginFailuresUntil(db: Queryable, before: Date): Promise<void> {
  await db.query('DELETE FROM login_failures WHERE at <= $1', [before]);
}

/** One failure of each of `keys` at `at`. */
export async function insertLoginFailures(db: Queryable, keys: readonly string[], at: Date): Promise<void> {
  await db.query('INSERT INTO login_failures (key, at) SELECT unnest($1::text[]), $2', [[...keys], at]);
}

export async function deleteLoginFailuresOf(db: Queryable, key: string): Promise<void> {
  await db.query('DELETE FROM login_failures WHERE key = $1', [key]);
}
