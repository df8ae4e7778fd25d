/**
 * npm run bench:exports: streams the datahub CSV exports over HTTP from PostgreSQL and prints
 * rows per second and peak memory (RSS, heap) at two sizes, to show memory stays flat as the
 * count grows. It runs in a fresh schema of DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test), dropped at the end.
 *
 *   BENCH_SIZES=20000,100000 (default)   the record counts, smallest first
 *
 *   BENCH_TRACKING=500x30 (default)      export/trip-tracking and export/vehicle-exploitation over a
 *                                        month: vehicles × days, 15 trips a vehicle a day, 30 stops a
 *                                        trip, tracking rows made by bulk SQL (0 skips them)
 *   BENCH_ONLY=tracking                  only the tracking exports
 *   BENCH_SCHEMA=bench_keep              run in this schema and keep it at the end; the tracking
 *                                        of a size already seeded there is reused (to iterate on
 *                                        the exports without the ~75 s of seeding; drop the
 *                                        schema by hand when done)
 *
 * Each export is one entry of EXPORTS (how to load n records, which URL exports them): a new
 * export (trips, issue #7) is one more entry. Server and client share this process, so the RSS
 * covers both; the client only counts bytes and lines.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config.js';
import { createGroup } from '../src/domains/groups/service.js';
import { migrate } from '../src/platform/db/migrate.js';
import { openPostgres } from '../src/platform/db/postgres.js';
import { copyLine, type Db } from '../src/platform/db/types.js';
import { hashSecret, newSecret, objectId } from '../src/platform/ids.js';

interface ExportBench {
  name: string;
  /** Loads n records into the group. */
  seed(db: Db, groupId: string, n: number): Promise<void>;
  url(groupId: string): string;
}

const hex = (i: number) => i.toString(16).padStart(24, '0');

async function copy(db: Db, table: string, columns: string[], n: number, line: (i: number) => unknown[]) {
  async function* chunks() {
    let buf = '';
    for (let i = 1; i <= n; i++) {
      buf += copyLine(line(i));
      if (buf.length > 1_000_000) {
        yield buf;
        buf = '';
      }
    }
    if (buf) yield buf;
  }
  await db.copyFrom(table, columns, chunks());
}

const STATUSES = ['active', 'active', 'active', 'maintenance', 'out_of_service', 'archived'];

const EXPORTS: ExportBench[] = [
  {
    name: 'export/vehicles',
    seed: (db, g, n) =>
      copy(db, 'vehicles', ['group_id', 'vehicle_id', 'fleet_number', 'license_plate', 'teams', 'comment', 'status', 'capacity'], n, (i) => [
        g, `bus-${i}`, String(1000 + i), `AB-${i}-CD`, i % 3 === 0 ? ['north', 'south'] : ['north'], i % 5 === 0 ? 'ramp; "manual" check' : null, STATUSES[i % STATUSES.length], 40 + (i % 60),
      ]),
    url: (g) => `/api/v4/groups/${g}/export/vehicles`,
  },
  {
    name: 'export/drivers',
    seed: (db, g, n) =>
      copy(db, 'drivers', ['group_id', 'driver_id', 'driver_name', 'staff_number', 'teams', 'comment', 'archived', 'code'], n, (i) => [
        g, hex(i), `Driver Number ${i}`, `P${i}`, i % 4 === 0 ? ['south'] : ['north', 'south'], i % 7 === 0 ? 'mornings only;\nno night shifts' : null, i % 10 === 0, `C${i}`,
      ]),
    url: (g) => `/api/v4/groups/${g}/export/drivers`,
  },
];

interface Measure {
  rows: number;
  bytes: number;
  seconds: number;
  rssBefore: number;
  rssPeak: number;
  heapBefore: number;
  heapPeak: number;
  /** Peaks of the heap V8 holds (used or not) and of the memory outside it (Buffers). */
  heapTotalPeak: number;
  externalPeak: number;
}

const gc = (globalThis as { gc?: () => void }).gc;

/**
 * One export, read to the end. The heap peak of an ordinary run mostly measures how lazily V8
 * collects garbage; with `live`, a full collection runs before each sample (every 50 ms), so the
 * peak is the memory the export really holds (slower: used for memory only, not for speed).
 */
async function measure(base: string, url: string, headers: Record<string, string>, live = false): Promise<Measure> {
  gc?.();
  const before = process.memoryUsage();
  let rssPeak = before.rss;
  let heapPeak = before.heapUsed;
  let heapTotalPeak = before.heapTotal;
  let externalPeak = before.external;
  const sample = setInterval(() => {
    if (live) gc?.();
    const m = process.memoryUsage();
    rssPeak = Math.max(rssPeak, m.rss);
    heapPeak = Math.max(heapPeak, m.heapUsed);
    heapTotalPeak = Math.max(heapTotalPeak, m.heapTotal);
    externalPeak = Math.max(externalPeak, m.external);
  }, live ? 50 : 10);
  const start = performance.now();
  const res = await fetch(base + url, { headers });
  if (res.status !== 200 || !res.body) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  let bytes = 0;
  // Records end with CRLF; a line break inside a quoted cell is a bare LF (the seeds hold no CR).
  let records = 0;
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    // Buffer's indexOf (memchr): the client shares the process, so it should cost the server little.
    const b = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    for (let i = b.indexOf(13); i >= 0; i = b.indexOf(13, i + 1)) records++;
  }
  const seconds = (performance.now() - start) / 1000;
  clearInterval(sample);
  const m = process.memoryUsage();
  return { rows: records - 1, bytes, seconds, rssBefore: before.rss, rssPeak: Math.max(rssPeak, m.rss), heapBefore: before.heapUsed, heapPeak: Math.max(heapPeak, m.heapUsed),
    heapTotalPeak, externalPeak };
}

const mb = (b: number) => (b / 1024 / 1024).toFixed(1);

async function main() {
  const url = process.env['DATABASE_URL'] || 'postgres://postgres@127.0.0.1:5432/test';
  const sizes = (process.env['BENCH_SIZES'] ?? '20000,100000').split(',').map(Number);
  const kept = process.env['BENCH_SCHEMA'];
  const schema = kept || `bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${kept ? 'IF NOT EXISTS ' : ''}"${schema}"`);
  const db = await openPostgres({ connectionString: url, poolSize: 4, schema });
  const app = await buildApp({ config: testConfig({ databaseUrl: url }), db, logger: false });
  let base = '';
  try {
    await migrate(db);
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    console.log(`exports over HTTP, PostgreSQL ${url.replace(/\/\/[^@]*@/, '//')} (schema ${schema}), Node ${process.version}${gc ? '' : ' (no --expose-gc: baselines are noisier)'}`);
    console.log('export              rows  seconds   rows/s   MB/s | MB: RSS before  RSS peak  heap before  heap peak  live heap peak');
    const warmup = await group(app.ctx, db);
    for (const e of EXPORTS) {
      await e.seed(db, warmup.groupId, 20_000);
      await measure(base, e.url(warmup.groupId), warmup.headers);
    }
    if (process.env['BENCH_ONLY'] !== 'tracking') await datahubExports();
    const tracking = process.env['BENCH_TRACKING'] ?? '500x30';
    if (tracking !== '0') await trackingExports(base, db, app.ctx, tracking);
  } finally {
    await app.close();
    await db.close();
    if (!kept) await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
    await admin.end();
  }

  async function datahubExports() {
    for (const n of sizes) {
      for (const e of EXPORTS) {
        const g = await group(app.ctx, db);
        await e.seed(db, g.groupId, n);
        const m = await measure(base, e.url(g.groupId), g.headers);
        if (m.rows !== n) throw new Error(`${e.name}: ${m.rows} rows exported, ${n} expected`);
        const live = gc ? mb((await measure(base, e.url(g.groupId), g.headers, true)).heapPeak) : 'n/a';
        console.log(
          `${e.name.padEnd(16)} ${String(n).padStart(7)}  ${m.seconds.toFixed(2).padStart(7)}  ${Math.round(n / m.seconds).toString().padStart(7)}  ${(m.bytes / 1024 / 1024 / m.seconds).toFixed(1).padStart(5)} |` +
            `  ${mb(m.rssBefore).padStart(14)}  ${mb(m.rssPeak).padStart(8)}  ${mb(m.heapBefore).padStart(11)}  ${mb(m.heapPeak).padStart(9)}  ${live.padStart(14)}`,
        );
      }
    }
  }
}

const TRIPS_PER_VEHICLE_DAY = 15;
const STOPS_PER_TRIP = 30;

/**
 * The tracking of a month of a network, made by bulk SQL (no device reports, no GTFS: the exports
 * read the stored tracking only), then exported over HTTP.
 */
async function trackingExports(base: string, db: Db, ctx: Parameters<typeof createGroup>[0], spec: string) {
  const [vehicles, days] = spec.split('x').map(Number) as [number, number];
  // Named after its size, so a kept schema (BENCH_SCHEMA) finds it again.
  const trackingGroup = `bench-tracking-${vehicles}x${days}`;
  const seeded = (await db.query('SELECT 1 FROM trip_tracking WHERE group_id = $1 LIMIT 1', [trackingGroup])).length > 0;
  const g = await group(ctx, db, trackingGroup);
  const start = '2026-10-01';
  const end = new Date(Date.parse(`${start}T00:00:00Z`) + (days - 1) * 86_400_000).toISOString().slice(0, 10);
  const t0 = performance.now();
  if (!seeded) await seedTracking(db, g.groupId, start, end, vehicles);
  const rows = vehicles * days * TRIPS_PER_VEHICLE_DAY * STOPS_PER_TRIP;
  console.log(`\ntracking of ${vehicles} vehicles × ${days} days × ${TRIPS_PER_VEHICLE_DAY} trips × ${STOPS_PER_TRIP} stops = ${rows} stop rows, ${seeded ? 'reused' : `made in ${((performance.now() - t0) / 1000).toFixed(1)} s`}`);
  console.log('export                        rows  seconds   rows/s   MB/s | MB: RSS before  RSS peak  heap before  heap peak  heap total peak  external peak');
  for (const name of ['trip-tracking', 'vehicle-exploitation']) {
    const m = await measure(base, `/api/v4/groups/${g.groupId}/export/${name}?start_date=${start}&end_date=${end}`, g.headers);
    if (m.rows !== rows) throw new Error(`export/${name}: ${m.rows} rows exported, ${rows} expected`);
    console.log(
      `export/${name.padEnd(20)} ${String(rows).padStart(8)}  ${m.seconds.toFixed(2).padStart(7)}  ${Math.round(rows / m.seconds).toString().padStart(7)}  ${(m.bytes / 1024 / 1024 / m.seconds).toFixed(1).padStart(5)} |` +
        `  ${mb(m.rssBefore).padStart(14)}  ${mb(m.rssPeak).padStart(8)}  ${mb(m.heapBefore).padStart(11)}  ${mb(m.heapPeak).padStart(9)}  ${mb(m.heapTotalPeak).padStart(15)}  ${mb(m.externalPeak).padStart(13)}`,
    );
  }
}

/** In one transaction, so an interrupted seeding leaves nothing a kept schema would reuse. */
function seedTracking(db: Db, groupId: string, start: string, end: string, vehicles: number) {
  return db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO trip_tracking (group_id, service_date, trip_id, route_id, direction_id, block_id, headsign, start_time, gtfs_id, first_stop_id, last_stop_id, last_sequence,
         scheduled_start_at, scheduled_end_at, started_at, ended_at, end_reported, last_report_at, delay_seconds, delay_stop_sequence, planned_stops, recorded_stops,
         unpassed_stops, last_passed_sequence, tk, vk, recorded_commercial_km, off_itinerary_km, reliable_km, unreliable_km, percent_km, positions, invalid_positions,
         boardings, alightings, max_load, doors, device_ids, vehicle_ids, driver_ids, computed_at)
       SELECT $1, d::date, 'T' || v || '-' || k, 'R' || (v % 40), k % 2, 'B' || v, 'Terminus', 18000 + k * 4200, 'bench', 'S' || v || '-1', 'S' || v || '-${STOPS_PER_TRIP}', ${STOPS_PER_TRIP},
         d + make_interval(secs => 18000 + k * 4200), d + make_interval(secs => 21600 + k * 4200), d + make_interval(secs => 18000 + k * 4200), d + make_interval(secs => 21660 + k * 4200),
         true, d + make_interval(secs => 21660 + k * 4200), 60, ${STOPS_PER_TRIP}, ${STOPS_PER_TRIP}, ${STOPS_PER_TRIP}, '{}', ${STOPS_PER_TRIP},
         12.5, 12.7, 12.4, 0.1, 12.6, 0.1, 99.2, 720, 3, 40, 40, 25, 2, ARRAY['dev-' || v], ARRAY['bus-' || v], ARRAY['drv-' || v], now()
       FROM generate_series($2::date, $3::date, interval '1 day') AS d, generate_series(1, $4::int) AS v, generate_series(0, ${TRIPS_PER_VEHICLE_DAY - 1}) AS k`,
      [groupId, start, end, vehicles],
    );
    await tx.query(
      `INSERT INTO trip_tracking_stops (group_id, service_date, trip_id, stop_sequence, stop_id, stop_name, stop_lat, stop_lon, scheduled_arrival_at, scheduled_departure_at,
         actual_at, source, delay_seconds, lat, lon, gps_valid, device_id, vehicle_id, driver_id, doors_in, doors_out)
       SELECT tt.group_id, tt.service_date, tt.trip_id, s, 'S' || s, 'Stop ' || s, 45.75 + s * 0.001, 4.85 - s * 0.001,
         tt.scheduled_start_at + make_interval(secs => s * 120), tt.scheduled_start_at + make_interval(secs => s * 120 + 20),
         tt.scheduled_start_at + make_interval(secs => s * 120 + 80), 'event', 60, 45.75 + s * 0.001, 4.85 - s * 0.001, true, tt.device_ids[1], tt.vehicle_ids[1], tt.driver_ids[1],
         ARRAY[s % 3, s % 2], ARRAY[s % 2, s % 3]
       FROM trip_tracking tt, generate_series(1, ${STOPS_PER_TRIP}) AS s WHERE tt.group_id = $1`,
      [groupId],
    );
    await tx.query('ANALYZE trip_tracking; ANALYZE trip_tracking_stops');
  });
}

/** A group with its teams and a reader's session (the exports' audience). */
async function group(ctx: Parameters<typeof createGroup>[0], db: Db, groupId = `bench-${objectId()}`) {
  if ((await db.query('SELECT 1 FROM groups WHERE group_id = $1', [groupId])).length === 0) {
    await createGroup(ctx, { group_id: groupId, name: groupId });
    await db.query("INSERT INTO teams (group_id, team_id, name) VALUES ($1, 'north', 'North'), ($1, 'south', 'South')", [groupId]);
  }
  const userId = objectId();
  await db.query('INSERT INTO users (user_id, email) VALUES ($1, $2)', [userId, `${userId}@bench.invalid`]);
  await db.query("INSERT INTO memberships (group_id, user_id, role) VALUES ($1, $2, 'reader')", [groupId, userId]);
  const token = newSecret('');
  await db.query("INSERT INTO sessions (session_hash, user_id, expires_at) VALUES ($1, $2, now() + interval '1 hour')", [hashSecret(token), userId]);
  return { groupId, headers: { authorization: `Bearer ${token}` } };
}

await main();
