/**
 * Versioned, forward-only migrations, identical on PGlite and PostgreSQL. Pending migrations
 * are applied in one transaction under an advisory lock, so several instances starting together
 * never apply one twice, and a failed migration leaves the schema as it was.
 */
import type { Db } from './types.js';
import { migrations } from './migrations/index.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export interface MigrateResult {
  applied: Migration[];
  current: number;
}

export async function migrate(db: Db, list: readonly Migration[] = migrations): Promise<MigrateResult> {
  checkOrder(list);
  return db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('transit-ops:migrate'))");
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Set((await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const known = new Set(list.map((m) => m.version));
    const unknown = [...done].filter((v) => !known.has(v));
    if (unknown.length > 0) {
      throw new Error(`the database has migrations this version does not know (${unknown.join(', ')}): it was migrated by a newer transit-ops`);
    }
    const applied: Migration[] = [];
    for (const m of list) {
      if (done.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m);
    }
    // A table created by a migration after the change feed's is watched too (0008_change_feed.ts).
    if (applied.length > 0 && (await tx.query<{ f: string | null }>("SELECT to_regproc('transit_ops_watch_tables')::text AS f"))[0]?.f) {
      await tx.query('SELECT transit_ops_watch_tables()');
    }
    return { applied, current: Math.max(0, ...list.map((m) => m.version)) };
  });
}

function checkOrder(list: readonly Migration[]) {
  list.forEach((m, i) => {
    if (i > 0 && m.version <= list[i - 1]!.version) throw new Error(`migrations out of order at ${m.version} ${m.name}`);
  });
}
