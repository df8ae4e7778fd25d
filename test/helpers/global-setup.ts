/**
 * Run once before the whole suite (vitest.config.ts globalSetup). On PGlite, every test file opens
 * its database as a copy of one migrated database, whose files are made here and kept in a
 * temporary file for the run: a copy opens in under 1 s, where initdb and the migrations take
 * about 3 s in each file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { openPglite } from '../../src/platform/db/pglite.js';
import { migrate } from '../../src/platform/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The file holding the migrated PGlite database's files (a tar), when the suite runs on PGlite. */
    pgliteTemplate: string | undefined;
  }
}

export default async function setup(project: TestProject) {
  if (process.env['DATABASE_URL']) {
    project.provide('pgliteTemplate', undefined);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'transit-ops-test-'));
  const file = join(dir, 'migrated.tar');
  const db = await openPglite('memory://');
  try {
    await migrate(db);
    writeFileSync(file, Buffer.from(await (await db.dump()).arrayBuffer()));
  } finally {
    await db.close();
  }
  project.provide('pgliteTemplate', file);
  return () => rmSync(dir, { recursive: true, force: true });
}
