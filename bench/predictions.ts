/**
 * npm run bench:predictions (issue #17, section 3): the published predictions scored against a
 * simulated truth, side by side with a naive baseline (the current delay held constant to the end
 * of the trip).
 *
 * The demo network's GTFS is imported and published; the simulator's traffic model
 * (src/domains/simulate/traffic.ts, the hub as its busy stop) makes realistic weekdays of its timetable trips: per-segment congestion by hour band (a 7–9 h peak, strong on about a third
 * of the segments), a day-to-day factor, dwell by stop and hour (longer at the hub and at peak),
 * late starts, random incidents on the way (2–8 min), holding at timepoints when early, and the
 * next trip of a block starting no earlier than the vehicle's arrival plus a layover. Several past
 * weekdays form the history; buildModel learns from it; then one held-out weekday's morning is
 * replayed minute by minute with the app's clock (a fixed clock advanced by hand), and at each
 * minute predictTrips (the computation the feeds publish) is called and its predictions recorded.
 *
 * The history is written as passages (what tracking stores once it has matched the device
 * reports to the stops: trip_tracking, trip_tracking_stops): sending weeks of reports through the
 * device API would take far longer than this benchmark may. The held-out day goes through the real
 * device API (Fastify inject, one device and key per block, the service's clock at the replayed
 * minute): sign-on, trip start and end, arrival and departure events at each stop, and a position
 * every 10 s, every place off by a Gaussian GPS error (8 m RMS); tracking then matches them as in
 * production. `--replay tables` writes the day's passages directly instead (faster, no ingest).
 * The naive baseline reads the same tracking (the trip's current delay, trackingOf).
 *
 * Scored for both, over the stops ahead whose true arrival is 0–30 min away:
 * - accuracy: error = actual − predicted arrival within [−60·ln(T+1.3), +60·ln(T+1.5)] s, T the
 *   minutes to the actual arrival (Cal-ITP);
 * - completeness: share of the 1-minute bins in the 30 min before each stop's actual arrival,
 *   while its trip is in progress, that hold a prediction;
 * - wobble: change of a stop's predicted arrival from one minute to the next (median, seconds);
 * - mean absolute error by horizon band 0–5, 5–10, 10–20, 20–30 min.
 *
 * Options: --days N (past weekdays of history, 5), --routes L1,L2 (all), --from 06:30 --to 10:00
 * (the replayed window), --date YYYY-MM-DD (the held-out weekday), --seed N, --replay api | tables,
 * --gps-noise M (8), --position-every S (10), --clock-step S (PREDICTIONS_CLOCK_STEP_SECONDS: the service's default, 15); ENGINE=pglite (default without DATABASE_URL) | postgres.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import CheapRuler from 'cheap-ruler';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config.js';
import { demoFeedZip } from '../src/domains/demo/feed.js';
import { DEFAULT_SEED, generateNetwork, serviceOf, type DemoTrip } from '../src/domains/demo/network.js';
import { rngOf } from '../src/platform/random.js';
import { TrafficModel } from '../src/domains/simulate/traffic.js';
import { importGtfs } from '../src/domains/gtfs/import/importer.js';
import { createGroup } from '../src/domains/groups/service.js';
import { createApiKey, hostPrincipal, wholeGroup } from '../src/domains/auth/service.js';
import { buildModel } from '../src/domains/predictions/model.js';
import { predictTrips } from '../src/domains/predictions/service.js';
import { trackingOf } from '../src/domains/trips/tracking.js';
import { fixedClock } from '../src/platform/clock.js';
import type { Db } from '../src/platform/db/index.js';
import { addDays, instantOf } from '../src/platform/time.js';
import { benchDatabase, fmt } from './support.js';

const { values: args } = parseArgs({
  options: {
    days: { type: 'string', default: '5' },
    routes: { type: 'string' },
    from: { type: 'string', default: '06:30' },
    to: { type: 'string', default: '10:00' },
    seed: { type: 'string', default: String(DEFAULT_SEED) },
    date: { type: 'string', default: '2026-03-17' },
    replay: { type: 'string', default: 'api' },
    'gps-noise': { type: 'string', default: '8' },
    'position-every': { type: 'string', default: '10' },
    'clock-step': { type: 'string' },
  },
});
const ENGINE = (process.env['ENGINE'] ?? (process.env['DATABASE_URL'] ? 'postgres' : 'pglite')) as 'postgres' | 'pglite';
const SEED = Number(args.seed);
const DAY = args.date!;
const HISTORY_DAYS = Number(args.days);
const hhmm = (s: string) => Number(s.slice(0, 2)) * 3600 + Number(s.slice(3, 5)) * 60;
const FROM = hhmm(args.from!);
const TO = hhmm(args.to!);
const GROUP = 'bench';
const LAYOVER_S = 180;
const REPLAY = args.replay === 'tables' ? 'tables' : 'api';
const GPS_NOISE_M = Number(args['gps-noise']);
const POSITION_EVERY = Number(args['position-every']);
/** PREDICTIONS_CLOCK_STEP_SECONDS for the replayed day (the service's default when not given). */
const CLOCK_STEP = args['clock-step'] === undefined ? undefined : Number(args['clock-step']);
const BANDS: [number, number][] = [[0, 5], [5, 10], [10, 20], [20, 30]];

const net = generateNetwork(SEED);
const TZ = net.timezone;
const routes = args.routes ? new Set(args.routes.split(',')) : null;

// ---- The traffic model (the simulated truth): src/domains/simulate/traffic.ts, the hub as its busy stop ----

const traffic = new TrafficModel({ seed: SEED, busyStops: new Set([net.hubStop]), layoverSeconds: LAYOVER_S });

interface Truth {
  trip: DemoTrip;
  /** Actual arrival and passing (departure; arrival at the last stop), seconds of the service day. */
  arrival: number[];
  passing: number[];
}

/** The timetable trips of the date's service within the window (and the hour before). */
function tripsOf(date: string): DemoTrip[] {
  const service = serviceOf(date);
  return net.trips.filter((t) => t.service_id === service && !t.frequency && (!routes || routes.has(t.route_id)));
}

function simulateDay(date: string): Map<string, Truth> {
  const trips = new Map(tripsOf(date).map((t) => [t.trip_id, t]));
  const truth = traffic.day(date, 'weekday', [...trips.values()].map((t) => ({
    key: t.trip_id, trip_id: t.trip_id, arrival: t.stop_times.map((s) => s.arrival), departure: t.stop_times.map((s) => s.departure),
    stop_id: t.stop_times.map((s) => s.stop_id), timepoint: t.stop_times.map((s) => s.timepoint),
  })), (t) => trips.get(t.key)!.block_id);
  return new Map([...truth].map(([id, x]) => [id, { trip: trips.get(id)!, ...x }]));
}

// ---- Writing what tracking stores ---------------------------------------------------------------

/** Writes (replaces) a trip's tracking on `date` with what is known at `now` (seconds of the day; Infinity: all). */
async function writeTracking(db: Db, date: string, t: Truth, now: number): Promise<void> {
  const at = (s: number) => instantOf(date, s, TZ);
  const st = t.trip.stop_times;
  await db.query('DELETE FROM trip_tracking_stops WHERE group_id = $1 AND service_date = $2 AND trip_id = $3', [GROUP, date, t.trip.trip_id]);
  await db.query('DELETE FROM trip_tracking WHERE group_id = $1 AND service_date = $2 AND trip_id = $3', [GROUP, date, t.trip.trip_id]);
  const passed = st.flatMap((s, i) => (t.passing[i]! <= now ? [s.stop_sequence] : []));
  await db.query(
    `INSERT INTO trip_tracking (group_id, service_date, trip_id, route_id, direction_id, block_id, start_time, scheduled_start_at, scheduled_end_at, started_at,
       end_reported, planned_stops, recorded_stops, unpassed_stops, last_passed_sequence, vk, recorded_commercial_km, off_itinerary_km, reliable_km, unreliable_km,
       positions, invalid_positions, boardings, alightings, max_load, doors, device_ids, vehicle_ids, driver_ids, computed_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, false, $11, $12, '{}', $13, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '{}', '{bus}', '{}', now())`,
    [GROUP, date, t.trip.trip_id, t.trip.route_id, t.trip.direction_id, t.trip.block_id, st[0]!.departure, at(st[0]!.departure), at(st[st.length - 1]!.arrival),
      at(t.passing[0]!), st.length, passed.length, passed.length ? passed[passed.length - 1] : null],
  );
  const rows = st.map((s, i) => {
    const arrived = t.arrival[i]! <= now;
    const left = t.passing[i]! <= now;
    return {
      seq: s.stop_sequence, stop: s.stop_id, sa: at(s.arrival).toISOString(), sd: at(s.departure).toISOString(),
      actual: left ? at(t.passing[i]!).toISOString() : null,
      arr: arrived && i > 0 ? at(t.arrival[i]!).toISOString() : left ? at(t.passing[i]!).toISOString() : null,
      dep: left ? at(t.passing[i]!).toISOString() : null,
      delay: left ? t.passing[i]! - (i === st.length - 1 ? s.arrival : s.departure) : null,
    };
  });
  await db.query(
    `INSERT INTO trip_tracking_stops (group_id, service_date, trip_id, stop_sequence, stop_id, scheduled_arrival_at, scheduled_departure_at, actual_at,
       actual_arrival_at, actual_departure_at, source, delay_seconds, doors_in, doors_out)
     SELECT $1, $2, $3, r.seq, r.stop, r.sa, r.sd, r.actual, r.arr, r.dep, CASE WHEN r.actual IS NULL THEN NULL ELSE 'event' END, r.delay, '{}', '{}'
     FROM unnest($4::int[], $5::text[], $6::timestamptz[], $7::timestamptz[], $8::timestamptz[], $9::timestamptz[], $10::timestamptz[], $11::int[])
       AS r(seq, stop, sa, sd, actual, arr, dep, delay)`,
    [GROUP, date, t.trip.trip_id, rows.map((r) => r.seq), rows.map((r) => r.stop), rows.map((r) => r.sa), rows.map((r) => r.sd), rows.map((r) => r.actual),
      rows.map((r) => r.arr), rows.map((r) => r.dep), rows.map((r) => r.delay)],
  );
}

// ---- Replaying a day through the device API --------------------------------------------------

type Item = { id: string; type: string; at: string } & Record<string, unknown>;

/**
 * The device reports of a trip's truth, by time (seconds of the day): trip_start, an arrival and
 * a departure event at each stop (the first: departure; the last: arrival), trip_end, and a
 * position every POSITION_EVERY s along the shape, each fix (and each event's place) off by a
 * Gaussian GPS error of GPS_NOISE_M metres RMS.
 */
function deviceItems(date: string, t: Truth): { s: number; item: Item }[] {
  const r = rngOf(SEED, 'gps', date, t.trip.trip_id);
  const gauss = () => Math.sqrt(-2 * Math.log(Math.max(r(), 1e-12))) * Math.cos(2 * Math.PI * r());
  const shape = net.shapes.find((x) => x.shape_id === t.trip.shape_id)!;
  const ruler = new CheapRuler(net.center[1], 'meters');
  const noisy = (dist: number) => {
    const p = ruler.along(shape.points, dist);
    const [lon, lat] = ruler.offset(p, (gauss() * GPS_NOISE_M) / Math.SQRT2, (gauss() * GPS_NOISE_M) / Math.SQRT2);
    return { lat: Math.round(lat * 1e6) / 1e6, lon: Math.round(lon * 1e6) / 1e6 };
  };
  const ref = { trip_id: t.trip.trip_id, service_date: date };
  const at = (s: number) => instantOf(date, s, TZ).toISOString();
  const out: { s: number; item: Item }[] = [];
  const add = (s: number, type: string, fields: Record<string, unknown>) => out.push({ s, item: { id: randomUUID(), type, at: at(s), ...fields } });
  const st = t.trip.stop_times;
  add(t.passing[0]! - 60, 'trip_start', { ...ref, ...(t.trip.block_id ? { block_id: t.trip.block_id } : {}) });
  st.forEach((s, i) => {
    const ev = (event: string, when: number) => add(when, 'trip_event', { ...ref, event, stop_id: s.stop_id, stop_sequence: s.stop_sequence, ...noisy(s.dist), gps_valid: true });
    if (i > 0) ev('arrival', t.arrival[i]!);
    if (i < st.length - 1) ev('departure', t.passing[i]!);
  });
  for (let i = 1; i < st.length; i++) {
    // Moving from stop i − 1 (left at passing[i − 1]) to stop i (reached at arrival[i]), then dwelling.
    const from = t.passing[i - 1]!;
    const to = t.arrival[i]!;
    for (let s = Math.ceil(from / POSITION_EVERY) * POSITION_EVERY; s < t.passing[i]!; s += POSITION_EVERY) {
      const dist = s >= to ? st[i]!.dist : st[i - 1]!.dist + ((st[i]!.dist - st[i - 1]!.dist) * (s - from)) / Math.max(1, to - from);
      add(s, 'position', { ...ref, ...noisy(dist), gps_valid: true, accuracy_m: GPS_NOISE_M });
    }
  }
  add(t.passing[st.length - 1]! + 30, 'trip_end', ref);
  return out.sort((a, b) => a.s - b.s);
}

/** One vehicle per block (or per lone trip), its device and key, signed on before its first trip. */
interface Vehicle {
  key: string;
  queue: { s: number; item: Item }[];
  sent: number;
}

async function devicesFor(ctx: Parameters<typeof createApiKey>[0], db: Db, date: string, trips: readonly Truth[]): Promise<Map<string, Vehicle>> {
  const byBlock = new Map<string, Truth[]>();
  for (const t of trips) byBlock.set(t.trip.block_id ?? t.trip.trip_id, [...(byBlock.get(t.trip.block_id ?? t.trip.trip_id) ?? []), t]);
  const out = new Map<string, Vehicle>();
  let k = 0;
  for (const [block, ts] of byBlock) {
    k++;
    const driver = k.toString(16).padStart(24, '0');
    await db.query('INSERT INTO drivers (group_id, driver_id, driver_name, staff_number) VALUES ($1, $2, $3, $4)', [GROUP, driver, `Driver ${k}`, `S${k}`]);
    await db.query('INSERT INTO vehicles (group_id, vehicle_id, fleet_number, license_plate) VALUES ($1, $2, $3, $4)', [GROUP, `V${k}`, `F${k}`, `P${k}`]);
    await db.query('INSERT INTO devices (group_id, device_id) VALUES ($1, $2)', [GROUP, `D${k}`]);
    const key = (await createApiKey(ctx, hostPrincipal, wholeGroup(GROUP), { device_id: `D${k}` })).value;
    const first = Math.min(...ts.map((t) => t.passing[0]!));
    const queue = [{ s: first - 900, item: { id: randomUUID(), type: 'sign_on', at: instantOf(date, first - 900, TZ).toISOString(), driver_id: driver, vehicle_id: `V${k}` } as Item }, ...ts.flatMap((t) => deviceItems(date, t))];
    out.set(block, { key, queue: queue.sort((a, b) => a.s - b.s), sent: 0 });
  }
  return out;
}

// ---- Scoring -------------------------------------------------------------------------------------

interface Scores {
  n: number;
  accurate: number;
  bins: number;
  completeBins: number;
  wobble: number[];
  abs: number[][];
}
const emptyScores = (): Scores => ({ n: 0, accurate: 0, bins: 0, completeBins: 0, wobble: [], abs: BANDS.map(() => []) });

/** Records one prediction (`predicted`, seconds of the day) of a stop whose actual arrival is `actual`, made at `now`. */
function score(s: Scores, now: number, predicted: number, actual: number): void {
  const T = (actual - now) / 60;
  if (T < 0 || T >= 30) return;
  const error = actual - predicted;
  s.n++;
  if (error >= -60 * Math.log(T + 1.3) && error <= 60 * Math.log(T + 1.5)) s.accurate++;
  const band = BANDS.findIndex(([lo, hi]) => T >= lo && T < hi);
  s.abs[band]!.push(Math.abs(error));
}

async function main() {
  const started = Date.now();
  const { db, drop } = await benchDatabase(ENGINE);
  const clock = fixedClock(instantOf(DAY, 4 * 3600, TZ));
  const defaults = testConfig({ logLevel: 'silent' });
  const config = CLOCK_STEP === undefined ? defaults : testConfig({ logLevel: 'silent', predictions: { ...defaults.predictions, clockStepSeconds: CLOCK_STEP } });
  const app = await buildApp({ config, db, clock, logger: false });
  try {
    const ctx = app.ctx;
    await createGroup(ctx, { group_id: GROUP, name: 'Bench (demo network)', timezone: TZ });
    const dir = await mkdtemp(join(tmpdir(), 'bench-predictions-'));
    try {
      const path = join(dir, 'demo.zip');
      await writeFile(path, demoFeedZip(net, addDays(DAY, -90), addDays(DAY, 90)));
      await importGtfs(ctx, GROUP, path, { name: 'Demo network', publish: true });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    if (serviceOf(DAY) !== 'WK') throw new Error(`--date ${DAY} is not a weekday`);

    // History: the N weekdays before DAY (holidays run the Sunday service: skipped).
    const history: string[] = [];
    for (let d = addDays(DAY, -1); history.length < HISTORY_DAYS; d = addDays(d, -1)) if (serviceOf(d) === 'WK') history.push(d);
    const t0 = Date.now();
    let historyTrips = 0;
    for (const date of history) {
      for (const t of simulateDay(date).values()) {
        await writeTracking(db, date, t, Infinity);
        historyTrips++;
      }
    }
    const historyMs = Date.now() - t0;
    const historyDays = Math.round((Date.parse(DAY) - Date.parse(history[history.length - 1]!)) / 86_400_000);
    const model = (await buildModel(db, GROUP, clock.now(), { historyDays, bandSeconds: ctx.config.predictions.bandMinutes * 60 }))!;

    // The held-out day, replayed minute by minute.
    const truth = simulateDay(DAY);
    const model_ = emptyScores();
    /** The published predictions of the trips in progress only (not through a block's earlier trip): the naive baseline's set. */
    const own = emptyScores();
    const naive = emptyScores();
    /** Per trip|stop_sequence: predictions by minute, for completeness and wobble. */
    const seen = { model: new Map<string, Map<number, number>>(), naive: new Map<string, Map<number, number>>() };
    const record = (which: 'model' | 'naive', key: string, minute: number, predicted: number) => {
      const m = seen[which].get(key) ?? new Map<number, number>();
      m.set(minute, predicted);
      seen[which].set(key, m);
    };
    const written = new Map<string, string>();
    const replayed = [...truth.values()].filter((t) => t.passing[0]! <= TO && t.passing[t.passing.length - 1]! >= FROM - 1800);
    const vehicles = REPLAY === 'api' ? await devicesFor(ctx, db, DAY, replayed) : new Map<string, Vehicle>();
    const device = { requests: 0, items: 0, rejected: 0, ms: 0 };
    let predictMs = 0;
    let predictCalls = 0;
    let blockAhead = 0;
    const dayStart = instantOf(DAY, 0, TZ).getTime();
    for (let now = FROM; now <= TO; now += 60) {
      clock.set(new Date(dayStart + now * 1000));
      // The devices send what happened up to `now`, one request each (the service's clock is `now`).
      for (const v of vehicles.values()) {
        const items: Item[] = [];
        while (v.sent < v.queue.length && v.queue[v.sent]!.s <= now) items.push(v.queue[v.sent++]!.item);
        if (items.length === 0) continue;
        const d0 = Date.now();
        const res = await app.inject({ method: 'POST', url: `/api/v4/groups/${GROUP}/device/reports`, headers: { 'x-api-key': v.key }, payload: { items } });
        device.ms += Date.now() - d0;
        if (res.statusCode !== 200) throw new Error(`device reports: ${res.statusCode} ${res.body}`);
        const body = res.json() as { rejected?: unknown[] };
        device.requests++;
        device.items += items.length;
        device.rejected += body.rejected?.length ?? 0;
        if (body.rejected?.length && device.rejected <= body.rejected.length) console.error('rejected, e.g.:', JSON.stringify(body.rejected[0]).slice(0, 400));
      }
      // Or what tracking knows at `now`, written directly: the trips started, with their stops arrived at and passed.
      for (const t of REPLAY === 'api' ? [] : truth.values()) {
        if (t.passing[0]! > now) continue;
        const state = `${t.arrival.filter((a) => a <= now).length}/${t.passing.filter((p) => p <= now).length}`;
        if (written.get(t.trip.trip_id) === state) continue;
        await writeTracking(db, DAY, t, now);
        written.set(t.trip.trip_id, state);
      }
      const p0 = Date.now();
      const predictions = await predictTrips(ctx, GROUP, DAY);
      predictMs += Date.now() - p0;
      predictCalls++;
      const minute = now / 60;
      for (const p of predictions) {
        const t = truth.get(p.trip_id);
        if (!t) continue;
        if (p.from_trip_id !== p.trip_id) blockAhead++;
        for (const s of p.stops) {
          const i = t.trip.stop_times.findIndex((x) => x.stop_sequence === s.stop_sequence);
          if (i < 0 || t.arrival[i]! <= now) continue;
          const predicted = (s.arrival_at.getTime() - dayStart) / 1000;
          score(model_, now, predicted, t.arrival[i]!);
          if (p.from_trip_id === p.trip_id) score(own, now, predicted, t.arrival[i]!);
          record('model', `${p.trip_id}|${s.stop_sequence}`, minute, predicted);
        }
      }
      // The naive baseline, from the same tracking: the trip's current delay (at the last stop
      // passed) held constant to the end of the trip.
      for (const tt of await trackingOf(db, GROUP, DAY, undefined, { now: clock.now() })) {
        const t = truth.get(tt.trip_id);
        if (!t || tt.status !== 'in_progress' || tt.delay_seconds === null) continue;
        const st = t.trip.stop_times;
        const last = Math.max(...tt.stops.flatMap((x) => (x.actual_at !== null ? [x.stop_sequence] : [])));
        for (let i = 0; i < st.length; i++) {
          if (st[i]!.stop_sequence <= last || t.arrival[i]! <= now) continue;
          const predicted = Math.max(now, st[i]!.arrival + tt.delay_seconds);
          score(naive, now, predicted, t.arrival[i]!);
          record('naive', `${t.trip.trip_id}|${st[i]!.stop_sequence}`, minute, predicted);
        }
      }
    }

    // Completeness: the minutes in the 30 before each stop's actual arrival, within the window, while its trip was in progress.
    for (const t of truth.values()) {
      t.trip.stop_times.forEach((s, i) => {
        if (i === 0) return;
        const key = `${t.trip.trip_id}|${s.stop_sequence}`;
        for (let now = Math.ceil((t.arrival[i]! - 1800) / 60) * 60; now < t.arrival[i]!; now += 60) {
          if (now < FROM || now > TO || now < t.passing[0]!) continue;
          for (const [which, sc] of [['model', model_], ['naive', naive]] as const) {
            sc.bins++;
            if (seen[which].get(key)?.has(now / 60)) sc.completeBins++;
          }
        }
      });
    }
    for (const [which, sc] of [['model', model_], ['naive', naive]] as const) {
      for (const byMinute of seen[which].values()) {
        for (const [m, p] of byMinute) {
          const before = byMinute.get(m - 1);
          if (before !== undefined) sc.wobble.push(Math.abs(p - before));
        }
      }
    }

    const pct = (a: number, b: number) => (b === 0 ? 'n/a' : `${fmt((100 * a) / b, 1)} %`);
    const mean = (xs: number[]) => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
    const median = (xs: number[]) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
    const mae1030 = (s: Scores) => mean([...s.abs[2]!, ...s.abs[3]!]);
    const dayTrips = [...truth.values()].filter((t) => t.passing[0]! <= TO && t.passing[t.passing.length - 1]! >= FROM).length;
    console.log('');
    console.log(`engine                   ${ENGINE}; demo network seed ${SEED}${routes ? `, routes ${[...routes].join(',')}` : ', all routes'} (timetable trips; frequency trips are not predicted)`);
    console.log(`history                  ${history.length} weekdays (${history[history.length - 1]} … ${history[0]}), ${fmt(historyTrips)} trips, written to the tracking tables directly in ${fmt(historyMs / 1000, 1)} s`);
    console.log(`model                    ${fmt(model.runs)} runs, ${fmt(model.segments)} segments, built in ${fmt(model.took_ms)} ms (bands of ${ctx.config.predictions.bandMinutes} min, min samples ${ctx.config.predictions.minSamples}; overdue stops held to steps of ${ctx.config.predictions.clockStepSeconds} s)`);
    console.log(REPLAY === 'api'
      ? `replay                   ${DAY} ${args.from}–${args.to}, ${dayTrips} trips, through the device API (Fastify inject): ${fmt(device.items)} reports (positions every ${POSITION_EVERY} s, ${GPS_NOISE_M} m GPS noise, arrival and departure events) in ${fmt(device.requests)} requests, ${fmt(device.rejected)} rejected, ${fmt(device.ms / 1000, 1)} s`
      : `replay                   ${DAY} ${args.from}–${args.to}, ${dayTrips} trips, passages written to the tracking tables each minute (--replay tables: not through the device API)`);
    console.log(`predictTrips             ${predictCalls} calls, mean ${fmt(predictMs / predictCalls)} ms; ${fmt(blockAhead)} trip predictions through a block's earlier trip`);
    console.log('');
    const row = (label: string, f: (s: Scores) => string) => console.log(`${label.padEnd(25)}${f(model_).padStart(14)}${f(own).padStart(18)}${f(naive).padStart(14)}`);
    console.log(`${''.padEnd(25)}${'published'.padStart(14)}${'(trips running)'.padStart(18)}${'naive'.padStart(14)}`);
    row('predictions scored', (s) => fmt(s.n));
    row('accuracy (Cal-ITP)', (s) => pct(s.accurate, s.n));
    row('completeness', (s) => (s === own ? '' : pct(s.completeBins, s.bins)));
    row('wobble median / mean', (s) => (s === own ? '' : `${fmt(median(s.wobble))} / ${fmt(mean(s.wobble))} s`));
    BANDS.forEach(([lo, hi], b) => row(`MAE ${lo}–${hi} min`, (s) => `${fmt(mean(s.abs[b]!))} s`));
    row('MAE 10–30 min', (s) => `${fmt(mae1030(s))} s`);
    console.log('');
    const gain = 1 - mae1030(model_) / mae1030(naive);
    const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
    console.log(`target accuracy ≥ 85 %                 ${pct(model_.accurate, model_.n)}: ${met(model_.accurate / model_.n >= 0.85)}`);
    console.log(`target completeness ≥ 99 %             ${pct(model_.completeBins, model_.bins)}: ${met(model_.completeBins / model_.bins >= 0.99)}`);
    console.log(`target MAE 10–30 min ≥ 30 % below naive ${fmt(gain * 100, 1)} % lower: ${met(gain >= 0.3)}`);
    console.log('');
    console.log(`took ${fmt((Date.now() - started) / 1000, 1)} s; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    await app.close();
    await drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
