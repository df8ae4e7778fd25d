/** The database layer behaves the same on both engines (this file runs on each in CI). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/platform/db/migrate.js';
import { migrations } from '../../src/platform/db/migrations/index.js';
import { copyLine, copyText, sqlLiteral, uncopyText, withLiterals } from '../../src/platform/db/types.js';
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

  it('reads a result as COPY text, escapes and NULLs as PostgreSQL writes them', async () => {
    const sql = `SELECT x.* FROM (VALUES
        (1, 'tab\there', E'back\\\\slash', E'line\\nbreak\\rcr', '\\N', NULL::text, true, 1e-7::float8, -42::int8, ARRAY[1, NULL, 3], ARRAY['a b', 'c"d', NULL]),
        (2, 'Hôtel — 終点', '', E'\\b\\f' || chr(11), 'x', 'y', false, -0.5::float8, 0::int8, '{}'::int[], '{}'::text[])
      ) AS x ORDER BY 1`;
    let text = '';
    for await (const chunk of t.db.copyOut(sql, [])) text += chunk;
    expect(text).toBe(
      '1\ttab\\there\tback\\\\slash\tline\\nbreak\\rcr\t\\\\N\t\\N\tt\t1e-07\t-42\t{1,NULL,3}\t{"a b","c\\\\"d",NULL}\n' +
        '2\tHôtel — 終点\t\t\\b\\f\\v\tx\ty\tf\t-0.5\t0\t{}\t{}\n',
    );
    const [first] = text.split('\n').map((line) => line.split('\t').map(uncopyText));
    expect(first!.slice(1, 5)).toEqual(['tab\there', 'back\\slash', 'line\nbreak\rcr', '\\N']);
    expect(copyText('a\tb\\c\nd\re\bf\fg\vh')).toBe('a\\tb\\\\c\\nd\\re\\bf\\fg\\vh');
    expect(uncopyText(copyText('a\tb\\c\nd\re\bf\fg\vh \\N'))).toBe('a\tb\\c\nd\re\bf\fg\vh \\N');
  });

  it('writes the parameters of COPY in as literals that hostile text cannot escape', async () => {
    const hostile = ["o'b\\rien", "'; DROP TABLE probe; --", 'E\'\\\'', '$1 $2', '\\', "''", '終点\t\n'];
    let text = '';
    const sql = 'SELECT $1::text AS a, $2::int AS b, $3::text[] AS c, $4::text AS d, $5::boolean AS e, $6::int - $7::int AS f';
    for await (const chunk of t.db.copyOut(sql, [hostile[0], -5, hostile, null, true, 1, -1])) text += chunk;
    const columns = text.slice(0, -1).split('\t');
    expect(columns[3]).toBe('\\N');
    const [a, b, c, , e, f] = columns.map(uncopyText);
    expect(a).toBe(hostile[0]);
    expect(b).toBe('-5');
    expect([e, f]).toEqual(['t', '2']);
    // The array text of PostgreSQL, its items back as given.
    const items = [...c!.slice(1, -1).matchAll(/"((?:[^"\\]|\\.)*)"|([^,]+)/g)].map((m) => (m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]));
    expect(items).toEqual(hostile);
    expect((await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM probe'))[0]!.n).toBeGreaterThan(0);
    expect(() => sqlLiteral('a\0b')).toThrow();
    expect(() => sqlLiteral(Number.NaN)).toThrow();
    expect(() => sqlLiteral({ a: 1 })).toThrow();
    expect(() => withLiterals('SELECT $2', [1])).toThrow();
  });

  it('reads a large COPY result in chunks of whole lines, and stops early without leaving the connection busy', async () => {
    let lines = 0;
    let sum = 0;
    for await (const chunk of t.db.copyOut('SELECT n, repeat($2, n % 7) FROM generate_series(1, $1::int) AS n', [200_000, 'é'])) {
      expect(chunk.endsWith('\n')).toBe(true);
      for (const line of chunk.slice(0, -1).split('\n')) {
        const [n, s] = line.split('\t');
        expect(s).toBe('é'.repeat(Number(n) % 7));
        sum += Number(n);
        lines++;
      }
    }
    expect(lines).toBe(200_000);
    expect(sum).toBe((200_000 * 200_001) / 2);
    for await (const chunk of t.db.copyOut('SELECT n FROM generate_series(1, 1000000) AS n', [])) {
      expect(chunk.startsWith('1\n')).toBe(true);
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
