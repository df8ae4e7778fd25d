/**
 * The database of a test file: embedded PGlite in memory by default; with DATABASE_URL, the real
 * PostgreSQL server, in a fresh schema dropped at the end, so runs never see each other's data.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inject } from 'vitest';
import pg from 'pg';
import { openPglite } from '../../src/platform/db/pglite.js';
import { openPostgres } from '../../src/platform/db/postgres.js';
import { migrate } from '../../src/platform/db/migrate.js';
import type { Db } from '../../src/platform/db/index.js';

export const databaseUrl = process.env['DATABASE_URL'] || undefined;
export const engine: 'postgres' | 'pglite' = databaseUrl ? 'postgres' : 'pglite';

export interface TestDb {
  db: Db;
  schema: string | undefined;
  /** Opens another connection to the same database (a second instance, a restart). */
  reopen(): Promise<Db>;
  drop(): Promise<void>;
}

/**
 * The files of a migrated PGlite database: a test database opens as a copy of them (under 1 s)
 * instead of running initdb and the migrations again (about 3 s). The suite makes them once
 * (global-setup.ts); a file run some other way makes them itself, once.
 */
let migrated: Promise<Blob> | undefined;
function migratedCopy(): Promise<Blob> {
  const made = inject('pgliteTemplate');
  migrated ??= made ? Promise.resolve(new Blob([readFileSync(made)])) : (async () => {
    const db = await openPglite('memory://');
    try {
      await migrate(db);
      return await db.dump();
    } finally {
      await db.close();
    }
  })();
  return migrated;
}

export async function openTestDb(o: { migrate?: boolean } = {}): Promise<TestDb> {
  if (!databaseUrl) {
    const db = o.migrate === false ? await openPglite('memory://') : await openPglite('memory://', { from: await migratedCopy() });
    return {
      db,
      schema: undefined,
      reopen: () => Promise.reject(new Error('an in-memory PGlite cannot be opened twice')),
      drop: () => db.close(),
    };
  }
  const schema = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  await admin.end();
  const open = () => openPostgres({ connectionString: databaseUrl, poolSize: 10, schema });
  const db = await open();
  if (o.migrate !== false) await migrate(db);
  const opened: Db[] = [db];
  return {
    db,
    schema,
    reopen: async () => {
      const another = await open();
      opened.push(another);
      return another;
    },
    drop: async () => {
      for (const d of opened) await d.close().catch(() => {});
      const c = new pg.Client({ connectionString: databaseUrl });
      await c.connect();
      await c.query(`DROP SCHEMA "${schema}" CASCADE`);
      await c.end();
    },
  };
}
