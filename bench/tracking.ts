/**
 * npm run bench:tracking: one round of tracking recomputation over the whole network (issue #16
 * §2: "set-based per round … keeps up with the whole network's reports").
 *
 * The network: a published GTFS of TRIPS trips running now (20 stops, 100 routes, a shape per
 * route), each with its device, open duty, trip_start, a departure event at its first stop, a
 * stop_passed event at its 5th stop, and a position every 15 s for the last MINUTES minutes along
 * its shape. A round is what the refresh after ingest does when every running trip reported
 * since the last one: one new position per trip is stored and every trip is marked dirty, then
 * the round recomputes them all (refreshRound, the drain's body). Each round is timed, and the
 * statements it sends to the database are counted (a counting wrapper around the Db).
 *
 * Prints, per engine and size: trips/s, statements per round (and per trip), round p50/p99/max.
 * Options (env): TRIPS ("400,4000"), MINUTES (30), ROUNDS (5), ENGINES ("postgres,pglite"), PROFILE (1: each statement's time), DATABASE_URL.
 */
import { randomUUID } from 'node:crypto';
import { createGroup } from '../src/domains/groups/service.js';
import { refreshRound } from '../src/domains/trips/tracking.js';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config.js';
import type { Db, Tx } from '../src/platform/db/index.js';
import { ensurePartitions } from '../src/platform/db/partitions.js';
import { localDate, serviceDayStart } from '../src/platform/time.js';
import { benchDatabase, fmt, percentile } from './support.js';

const SIZES = (process.env['TRIPS'] ?? '400,4000').split(',').map(Number);
const MINUTES = Number(process.env['MINUTES'] ?? 30);
const ROUNDS = Number(process.env['ROUNDS'] ?? 5);
const ENGINES = (process.env['ENGINES'] ?? 'postgres,pglite').split(',') as ('postgres' | 'pglite')[];
const STOPS = 20;
/** PROFILE=1: print each statement of a round with its time. */
const PROFILE = process.env['PROFILE'] === '1';
const TZ = 'Europe/Paris';
const G = 'bench';

/** Counts the statements sent through a Db and its transactions. */
function counting(db: Db): { db: Db; count: () => number } {
  let n = 0;
  const timed = <T>(text: string, p: Promise<T>) => {
    if (!PROFILE) return p;
    const t0 = performance.now();
    return p.finally(() => console.log(`    ${fmt(performance.now() - t0)} ms  ${text.replace(/\s+/g, ' ').slice(0, 90)}`));
  };
  const tx = (t: Tx): Tx => ({
    query: (text, params) => (n++, timed(text, t.query(text, params))),
    exec: (s) => (n++, t.exec(s)),
    copyFrom: (a, b, c) => (n++, t.copyFrom(a, b, c)),
    savepoint: (fn) => t.savepoint((inner) => fn(tx(inner))),
  });
  const wrapped: Db = Object.create(db, {
    query: { value: (text: string, params?: readonly unknown[]) => (n++, timed(text, db.query(text, params))) },
    exec: { value: (s: string) => (n++, db.exec(s)) },
    transaction: { value: <T>(fn: (t: Tx) => Promise<T>) => (n++, db.transaction((t) => fn(tx(t)))) },
  });
  return { db: wrapped, count: () => n };
}

async function run(engine: 'postgres' | 'pglite', trips: number) {
  const { db, drop } = await benchDatabase(engine);
  const app = await buildApp({ config: testConfig({ logLevel: 'silent' }), db, logger: false });
  try {
    await createGroup(app.ctx, { group_id: G, name: 'Bench network', timezone: TZ });
    const now = new Date();
    const today = localDate(now, TZ);
    await ensurePartitions(db, [{ table: 'positions', at: now }, { table: 'positions', at: new Date(now.getTime() - MINUTES * 60_000 - 600_000) },
      { table: 'trip_events', at: now }, { table: 'trip_events', at: new Date(now.getTime() - MINUTES * 60_000 - 600_000) }]);
    const t0 = performance.now();
    await network(db, now, today, trips);
    console.log(`  loaded ${fmt(trips)} trips, ${fmt(trips * (MINUTES * 4 + 1))} positions in ${fmt((performance.now() - t0) / 1000, 1)} s`);
    const refs = Array.from({ length: trips }, (_v, i) => ({ trip_id: `T${i}`, service_date: today }));
    const c = counting(db);
    const times: number[] = [];
    const statements: number[] = [];
    for (let r = 0; r <= ROUNDS; r++) {
      // New reports: one position per trip, 15 s after its last; every trip marked dirty.
      await newPositions(db, now, today, trips, r);
      const before = c.count();
      const t = performance.now();
      await refreshRound(c.db, G, refs);
      const took = performance.now() - t;
      const n = c.count() - before;
      // The first round reads the schedule (a cold cache); the next ones are the steady state.
      if (r === 0) console.log(`  first round (cold): ${fmt(took)} ms, ${fmt(n)} statements`);
      else {
        times.push(took);
        statements.push(n);
      }
    }
    const left = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM trip_tracking_dirty');
    const stored = await db.query<{ n: number; passed: number }>('SELECT count(*)::int AS n, sum(recorded_stops)::int AS passed FROM trip_tracking WHERE group_id = $1', [G]);
    const s = [...times].sort((a, b) => a - b);
    console.log(`  check: ${fmt(stored[0]!.n)} trips stored, ${fmt(stored[0]!.passed)} stops passed, ${fmt(left[0]!.n)} marks left`);
    if (s.length === 0) return;
    const perRound = statements.reduce((a, b) => a + b, 0) / statements.length;
    console.log(`  ${engine}, ${fmt(trips)} trips × ${fmt(MINUTES * 4 + 1 + ROUNDS)} positions: ${fmt(trips / (percentile(s, 50) / 1000))} trips/s; ` +
      `round p50 ${fmt(percentile(s, 50))} ms, p99 ${fmt(percentile(s, 99))} ms, max ${fmt(s.at(-1)!)} ms (${ROUNDS} rounds); ` +
      `${fmt(perRound)} statements a round (${fmt(perRound / trips, 2)} a trip)`);
  } finally {
    await app.close();
    await drop();
  }
}

/** Trip i: route R(i % 100); stop k (1…20) 0.005° of longitude (≈ 367 m) after the one before; 90 s between stops. */
async function network(db: Db, now: Date, today: string, trips: number) {
  const v = 'gtfs-bench';
  const dayStart = serviceDayStart(today, TZ);
  // Every trip started MINUTES minutes ago (± 2 min): first departure in seconds of the service day.
  const start0 = Math.round((now.getTime() - dayStart.getTime()) / 1000) - MINUTES * 60;
  await db.query("INSERT INTO gtfs_versions (group_id, gtfs_id, name, imported_at, counts, warnings, warning_count) VALUES ($1, $2, 'bench', $3, '{}', '[]', 0)", [G, v, now]);
  await db.query('INSERT INTO gtfs_publications (group_id, gtfs_id, published_at) VALUES ($1, $2, $3)', [G, v, new Date(now.getTime() - 30 * 86_400_000)]);
  await db.query(
    `INSERT INTO gtfs_calendars (group_id, gtfs_id, service_id, monday, tuesday, wednesday, thursday, friday, saturday, sunday, start_date, end_date)
     VALUES ($1, $2, 'ALL', true, true, true, true, true, true, true, $3::date - 30, $3::date + 30)`, [G, v, today]);
  await db.query("INSERT INTO gtfs_routes (group_id, gtfs_id, route_id, route_short_name, route_type) SELECT $1, $2, 'R' || r, r::text, 3 FROM generate_series(0, 99) r", [G, v]);
  await db.query(
    `INSERT INTO gtfs_stops (group_id, gtfs_id, stop_id, stop_name, stop_lat, stop_lon)
     SELECT $1, $2, 'S' || r || '_' || k, 'Stop ' || k, 48.8 + r * 0.01, 2.3 + (k - 1) * 0.005 FROM generate_series(0, 99) r, generate_series(1, $3::int) k`, [G, v, STOPS]);
  // The shape: a point every 0.001° along the line of the stops.
  await db.query(
    `INSERT INTO gtfs_shapes (group_id, gtfs_id, shape_id, shape_pt_sequence, shape_pt_lat, shape_pt_lon)
     SELECT $1, $2, 'SH' || r, p, 48.8 + r * 0.01, 2.3 + p * 0.001 FROM generate_series(0, 99) r, generate_series(0, ($3::int - 1) * 5) p`, [G, v, STOPS]);
  await db.query(
    `INSERT INTO gtfs_trips (group_id, gtfs_id, trip_id, route_id, service_id, direction_id, shape_id, first_stop_id, first_stop_sequence, first_departure, last_stop_id, last_stop_sequence, last_arrival, stop_count)
     SELECT $1, $2, 'T' || i, 'R' || (i % 100), 'ALL', 0, 'SH' || (i % 100), 'S' || (i % 100) || '_1', 1, $3::int + (i % 5) * 30, 'S' || (i % 100) || '_' || $5::int, $5::int, $3::int + (i % 5) * 30 + ($5::int - 1) * 90, $5::int
     FROM generate_series(0, $4::int - 1) i`, [G, v, start0, trips, STOPS]);
  await db.query(
    `INSERT INTO gtfs_stop_times (group_id, gtfs_id, trip_id, stop_sequence, stop_id, arrival_time, departure_time)
     SELECT $1, $2, 'T' || i, k, 'S' || (i % 100) || '_' || k, $3::int + (i % 5) * 30 + (k - 1) * 90, $3::int + (i % 5) * 30 + (k - 1) * 90
     FROM generate_series(0, $4::int - 1) i, generate_series(1, $5::int) k`, [G, v, start0, trips, STOPS]);
  await db.query("INSERT INTO vehicles (group_id, vehicle_id, fleet_number, license_plate) SELECT $1, 'v' || i, 'F' || i, 'P-' || i FROM generate_series(0, $2::int - 1) i", [G, trips]);
  await db.query("INSERT INTO devices (group_id, device_id) SELECT $1, 'd' || i FROM generate_series(0, $2::int - 1) i", [G, trips]);
  await db.query(
    `INSERT INTO duties (group_id, duty_id, device_id, driver_id, vehicle_id, signed_on_at, sign_on)
     SELECT $1, 'duty' || i, 'd' || i, lpad(to_hex(i + 1), 24, '0'), 'v' || i, $3::timestamptz - interval '2 hours', '{}' FROM generate_series(0, $2::int - 1) i`, [G, trips, now]);
  const from = new Date(now.getTime() - MINUTES * 60_000);
  await db.query(
    `INSERT INTO trip_runs (group_id, device_id, client_id, kind, at, trip_id, service_date, received_at)
     SELECT $1, 'd' || i, gen_random_uuid(), 'start', $3::timestamptz - interval '3 minutes', 'T' || i, $4::date, $3 FROM generate_series(0, $2::int - 1) i`, [G, trips, from, today]);
  // Events: departure from the first stop and stop_passed at the 5th (90 s a stop: 6 min later).
  await db.query(
    `INSERT INTO trip_events (group_id, device_id, client_id, at, event, trip_id, service_date, stop_id, stop_sequence, lat, lon, gps_valid, received_at)
     SELECT $1, 'd' || i, gen_random_uuid(), $3::timestamptz + e.after * interval '1 second', e.event, 'T' || i, $4::date, 'S' || (i % 100) || '_' || e.seq, e.seq,
            48.8 + (i % 100) * 0.01, 2.3 + (e.seq - 1) * 0.005, true, $3
     FROM generate_series(0, $2::int - 1) i, (VALUES ('departure', 1, 10), ('stop_passed', 5, 370)) AS e(event, seq, after)`, [G, trips, from, today]);
  // Positions: every 15 s from `from` to now, moving 0.005° of longitude in 90 s (one stop every 6 fixes).
  await db.query(
    `INSERT INTO positions (group_id, device_id, client_id, at, lat, lon, gps_valid, trip_id, service_date, received_at)
     SELECT $1, 'd' || i, gen_random_uuid(), $3::timestamptz + f * interval '15 seconds', 48.8 + (i % 100) * 0.01 + ((f * 7 + i) % 5 - 2) * 0.00003,
            2.3 + f * 0.005 / 6.0, true, 'T' || i, $4::date, $3
     FROM generate_series(0, $2::int - 1) i, generate_series(0, $5::int) f`, [G, trips, from, today, MINUTES * 4]);
  await db.query('ANALYZE');
}

/** Round r's new reports: fix MINUTES × 4 + 1 + r of every trip, and the dirty marks ingest writes with it. */
async function newPositions(db: Db, now: Date, today: string, trips: number, r: number) {
  const f = MINUTES * 4 + 1 + r;
  const from = new Date(now.getTime() - MINUTES * 60_000);
  await db.query(
    `INSERT INTO positions (group_id, device_id, client_id, at, lat, lon, gps_valid, trip_id, service_date, received_at)
     SELECT $1, 'd' || i, $6::uuid, $3::timestamptz + $5::int * interval '15 seconds', 48.8 + (i % 100) * 0.01, 2.3 + $5::int * 0.005 / 6.0, true, 'T' || i, $4::date, $3
     FROM generate_series(0, $2::int - 1) i`, [G, trips, from, today, f, randomUUID()]);
  await db.query(
    `INSERT INTO trip_tracking_dirty (group_id, service_date, trip_id, marked_at) SELECT $1, $3::date, 'T' || i, clock_timestamp() FROM generate_series(0, $2::int - 1) i
     ON CONFLICT (group_id, service_date, trip_id) DO UPDATE SET marked_at = EXCLUDED.marked_at`, [G, trips, today]);
}

for (const engine of ENGINES) {
  for (const trips of SIZES) {
    console.log(`${engine}, ${fmt(trips)} trips running, ${MINUTES} min of positions each:`);
    await run(engine, trips);
  }
}
