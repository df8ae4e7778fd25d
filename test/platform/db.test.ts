/** The database layer behaves the same on both engines (this file runs on each in CI). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/platform/db/migrate.js';
import { migrations } from '../../src/platform/db/migrations/index.js';
import { copyLine } from '../../src/platform/db/types.js';
import { engine, openTestDb, type TestDb } from '../helpers/db.js';

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb();
  await t.db.exec('CREATE TABLE probe (id integer PRIMARY KEY, label text, at timestamptz, day date, big int8, ratio numeric, tags text[], doc jsonb)');
});
afterAll(async () => t?.drop());

describe(`database on ${engine}`, () => {
  it('normalises types the same way on both engines', async () => {
    await t.db.query('INSERT INTO probe VALUES (1, $1, $2, $3, $4, $5, $6, $7)', ['a', new Date('2024-01-02T03:04:05Z'), '2024-01-02', 9007199254740, 1.25, ['x', 'y'], JSON.stringify({ k: 1 })]);
    const [row] = await t.db.query<any>('SELECT * FROM probe WHERE id = 1');
    expect(row.at).toBeInstanceOf(Date);
    expect(row.at.toISOString()).toBe('2024-01-02T03:04:05.000Z');
    expect(row.day).toBe('2024-01-02');
    expect(row.big).toBe(9007199254740);
    expect(row.ratio).toBe(1.25);
    expect(row.tags).toEqual(['x', 'y']);
    expect(row.doc).toEqual({ k: 1 });
  });

  it('rolls a failed transaction back entirely', async () => {
    await expect(
      t.db.transaction(async (tx) => {
        await tx.query("INSERT INTO probe (id, label) VALUES (10, 'kept?')");
        await tx.query("INSERT INTO probe (id, label) VALUES (10, 'duplicate')");
      }),
    ).rejects.toThrow();
    expect(await t.db.query('SELECT 1 FROM probe WHERE id = 10')).toEqual([]);
  });

  it('rolls a savepoint back without losing the rest of the transaction', async () => {
    await t.db.transaction(async (tx) => {
      await tx.query("INSERT INTO probe (id, label) VALUES (20, 'kept')");
      await expect(tx.savepoint((sp) => sp.query("INSERT INTO probe (id, label) VALUES (20, 'dup')"))).rejects.toThrow();
      await tx.query("INSERT INTO probe (id, label) VALUES (21, 'kept too')");
    });
    expect((await t.db.query<{ id: number }>('SELECT id FROM probe WHERE id IN (20, 21) ORDER BY id')).map((r) => r.id)).toEqual([20, 21]);
  });

  it('loads rows in bulk with COPY, quoting included', async () => {
    async function* chunks() {
      for (let i = 100; i < 1100; i++) yield copyLine([i, i === 100 ? 'a "quoted", line\nbreak' : null, null, '2024-03-01', null, null, ['p', 'q'], null]);
    }
    await t.db.copyFrom('probe', ['id', 'label', 'at', 'day', 'big', 'ratio', 'tags', 'doc'], chunks());
    const [n] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM probe WHERE id >= 100');
    expect(n!.n).toBe(1000);
    const [r] = await t.db.query<any>('SELECT label, tags FROM probe WHERE id = 100');
    expect(r.label).toBe('a "quoted", line\nbreak');
    expect(r.tags).toEqual(['p', 'q']);
    expect((await t.db.query<any>('SELECT label FROM probe WHERE id = 101'))[0].label).toBeNull();
  });

  it('streams a large result in batches through a cursor, with parameters', async () => {
    const sizes: number[] = [];
    let total = 0;
    for await (const batch of t.db.stream<{ id: number }>('SELECT id FROM probe WHERE id >= $1 ORDER BY id', [100], 300)) {
      sizes.push(batch.length);
      total += batch.reduce((s, r) => s + r.id, 0);
    }
    expect(sizes).toEqual([300, 300, 300, 100]);
    expect(total).toBe(((100 + 1099) * 1000) / 2);
  });

  it('stops a stream early without leaving the connection busy', async () => {
    for await (const batch of t.db.stream('SELECT id FROM probe ORDER BY id', [], 10)) {
      expect(batch.length).toBe(10);
      break;
    }
    expect((await t.db.query<{ one: number }>('SELECT 1 AS one'))[0]!.one).toBe(1);
  });

  it('delivers notifications to listeners', async () => {
    const got: string[] = [];
    const stop = await t.db.listen('probe_channel', (p) => got.push(p));
    await t.db.notify('probe_channel', 'hello');
    await t.db.notify('probe_channel', 'world');
    for (let i = 0; i < 50 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual(['hello', 'world']);
    await stop();
    await t.db.notify('probe_channel', 'unheard');
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toEqual(['hello', 'world']);
  });

  it('applies migrations once and knows when the database is newer than the code', async () => {
    expect((await migrate(t.db)).applied).toEqual([]);
    const rows = await t.db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((r) => r.version)).toEqual(migrations.map((m) => m.version));
    await t.db.query("INSERT INTO schema_migrations (version, name) VALUES (99999, 'from the future')");
    await expect(migrate(t.db)).rejects.toThrow(/newer transit-ops/);
    await t.db.query('DELETE FROM schema_migrations WHERE version = 99999');
  });

  it('leaves the schema untouched when a migration fails', async () => {
    const broken = [...migrations, { version: 99998, name: 'broken', sql: 'CREATE TABLE half_done (x int); SELECT * FROM no_such_table;' }];
    await expect(migrate(t.db, broken)).rejects.toThrow();
    expect(await t.db.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done'")).toEqual([]);
  });
});
