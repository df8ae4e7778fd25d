/**
 * Where a running service's WAL goes, by relation: what a device batch's commit waits to flush.
 *
 *   node --import tsx bench/wal-by-relation.ts --database URL [--seconds 60] [--top 20] [--checkpoint]
 *
 * URL is the database the service writes (a `bench/network.ts --keep` run's, say, while it runs).
 * Marks the server's WAL position (flushed: pg_walinspect reads no further), waits --seconds, marks it again and reads the records written
 * in between with pg_walinspect (PostgreSQL 15 and later; created in the server's `postgres`
 * database if missing, which needs a superuser), before a checkpoint recycles them. Prints the
 * window's WAL bytes and full-page images (whole 8 KB pages written at a page's first change after
 * each checkpoint), then per relation of URL's database: its records, the bytes of those records,
 * and its full-page images (a record's images shared evenly between its blocks written whole).
 * The server's whole WAL is counted, other databases' included (named by their oid). --checkpoint
 * starts the window with a CHECKPOINT (server-wide): the minute after one is when the images are
 * written, and two runs sampled so compare.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { fmt } from './support.js';

const { values: args } = parseArgs({
  options: {
    database: { type: 'string' },
    seconds: { type: 'string', default: '60' },
    top: { type: 'string', default: '20' },
    checkpoint: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (args.help || !args.database) {
  console.log('node --import tsx bench/wal-by-relation.ts --database URL [--seconds 60] [--top 20] [--checkpoint]');
  process.exit(args.help ? 0 : 2);
}

const target = new pg.Client({ connectionString: args.database });
await target.connect();
const serverUrl = new URL(args.database);
serverUrl.pathname = '/postgres';
const server = new pg.Client({ connectionString: serverUrl.toString() });
await server.connect();
await server.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');

const lsn = async () => (await server.query<{ lsn: string }>('SELECT pg_current_wal_flush_lsn()::text AS lsn')).rows[0]!.lsn;
if (args.checkpoint) await server.query('CHECKPOINT');
const from = await lsn();
await new Promise((r) => setTimeout(r, Number(args.seconds) * 1000));
const to = await lsn();

// Each record's blocks (`rel spc/db/relfilenode fork F blk N`, "FPW" when written whole), its bytes
// to its first block, its images' bytes shared between the blocks written whole.
const { rows } = await server.query<{ db: string; node: string; records: string; bytes: string; fpw: string; fpi_bytes: string }>(
  `WITH r AS (
     SELECT w.start_lsn, w.record_length, w.fpi_length, b.m, b.n, count(*) FILTER (WHERE b.m[4] IS NOT NULL) OVER (PARTITION BY w.start_lsn) AS images
       FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn) w,
            LATERAL regexp_matches(w.block_ref, 'rel \\d+/(\\d+)/(\\d+) fork (\\w+) blk \\d+( \\(FPW\\))?', 'g') WITH ORDINALITY AS b(m, n)
   )
   SELECT m[1] AS db, m[2] AS node,
          count(*) FILTER (WHERE n = 1) AS records,
          coalesce(sum(record_length) FILTER (WHERE n = 1), 0) AS bytes,
          count(*) FILTER (WHERE m[4] IS NOT NULL) AS fpw,
          coalesce(sum(fpi_length::float8 / images) FILTER (WHERE m[4] IS NOT NULL), 0) AS fpi_bytes
     FROM r GROUP BY 1, 2`,
  [from, to],
);
const totals = (await server.query<{ records: string; bytes: string; fpi: string }>(
  'SELECT count(*) AS records, coalesce(sum(record_length), 0) AS bytes, coalesce(sum(fpi_length), 0) AS fpi FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)',
  [from, to],
)).rows[0]!;
const dbOid = (await target.query<{ oid: string }>('SELECT oid::text FROM pg_database WHERE datname = current_database()')).rows[0]!.oid;
const names = new Map(
  (await target.query<{ node: string; name: string }>(
    `SELECT pg_relation_filenode(c.oid)::text AS node, n.nspname || '.' || c.relname || CASE c.relkind WHEN 'i' THEN ' (index)' WHEN 't' THEN ' (toast)' ELSE '' END AS name
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE pg_relation_filenode(c.oid) IS NOT NULL`,
  )).rows.map((r) => [r.node, r.name]),
);

const mb = (b: number) => `${fmt(b / 1e6, 1)} MB`;
const seconds = Number(args.seconds);
console.log(`WAL ${from} → ${to} over ${seconds} s: ${fmt(Number(totals.records))} records, ${mb(Number(totals.bytes))} (${mb(Number(totals.bytes) / seconds)}/s), full-page images ${mb(Number(totals.fpi))} (${fmt((100 * Number(totals.fpi)) / Math.max(1, Number(totals.bytes)))} %)`);
const ranked = rows.map((r) => ({ ...r, bytes: Number(r.bytes), fpi: Number(r.fpi_bytes) })).sort((a, b) => b.bytes - a.bytes).slice(0, Number(args.top));
console.log('relation | records | bytes | full-page images | their bytes');
for (const r of ranked) {
  const name = r.db === dbOid ? names.get(r.node) ?? `relfilenode ${r.node}` : r.db === '0' ? `shared catalog ${r.node}` : `database ${r.db}, relfilenode ${r.node}`;
  console.log(`${name} | ${fmt(Number(r.records))} | ${mb(r.bytes)} | ${fmt(Number(r.fpw))} | ${mb(r.fpi)}`);
}
await target.end();
await server.end();
