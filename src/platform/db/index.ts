import type { Config } from '../../config.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';
import type { Db } from './types.js';

export type { Db, Tx, Queryable, Row } from './types.js';
export { isHandle, quoteIdent, uncopyText, violatedConstraint } from './types.js';

/** The database the configuration names: PostgreSQL when DATABASE_URL is set, else embedded PGlite. */
export function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir' | 'databasePoolSize'>, schema?: string): Promise<Db> {
  if (config.databaseUrl) {
    return openPostgres({ connectionString: config.databaseUrl, poolSize: config.databasePoolSize, ...(schema ? { schema } : {}) });
  }
  return openPglite(config.dataDir);
}

export function describeDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): string {
  if (config.databaseUrl) {
    const u = new URL(config.databaseUrl);
    return `PostgreSQL ${u.hostname}:${u.port || 5432}${u.pathname}`;
  }
  return config.dataDir.startsWith('memory://') ? 'embedded PGlite (in memory)' : `embedded PGlite in ${config.dataDir}`;
}

/**
 * Whether a PostgreSQL server runs without autovacuum: the report tables and their daily
 * partitions then never get statistics, and are planned as if empty (docs/operations.md §1).
 * False on the embedded engine (one process, its own defaults).
 */
export async function autovacuumOff(db: Db): Promise<boolean> {
  if (db.kind !== 'postgres') return false;
  const [setting] = await db.query<{ autovacuum: string }>('SHOW autovacuum');
  return setting?.autovacuum !== 'on';
}
