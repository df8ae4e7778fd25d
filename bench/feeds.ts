/**
 * npm run bench:feeds: the passenger feeds of a city-size network on PostgreSQL (issue #16).
 *
 * The network: VEHICLES vehicles (devices, open duties, a position seen in the last minute each),
 * a published GTFS of TRIPS trips a day of 20 stops on 100 routes, and trip tracking with a delay
 * for every trip of yesterday (history) and for every trip of today already started.
 *
 * 1. VehiclePositions: building the feed from the snapshot (protobuf encoding plus the ETag
 *    fingerprint; target < 100 ms) and reading the vehicles.
 * 2. The whole snapshot rebuild (networkNow): cold (nothing remembered) and incremental (stop
 *    times and shapes remembered from the previous rebuild, as the feed cache does).
 * 2b. predictTrips for the whole network as the rebuild calls it (open tracking and schedule given),
 *    without and with SIRI's 60-minute schedule horizon, and the incremental rebuild with the horizon.
 * 3. Served for SECONDS through the app with FEEDS_REFRESH_SECONDS=1 while devices report
 *    continuously (REPORTS_PER_SECOND positions, dated by the database clock): the answer latency
 *    of GET vehicle-positions and trip-updates, apart for the answers given while a rebuild was
 *    under way; and the coverage of every answer: the vehicles in it over the vehicles that
 *    reported within the stale window (all of them), which must be 100 %.
 *
 * Options (env): VEHICLES (6000), TRIPS (6000), RUNS (10), SECONDS (15), REPORTS_PER_SECOND (2000), DATABASE_URL.
 */
import GtfsRealtimeBindings from 'gtfs-realtime-bindings';
import { createGroup } from '../src/domains/groups/service.js';
import { buildFeed } from '../src/domains/feeds/gtfs-rt/feeds.js';
import { ScheduleMemo } from '../src/domains/gtfs/schedule-memo.js';
import { networkNow, vehiclesNow, type NetworkNow } from '../src/domains/feeds/network.js';
import { addDays, localDate } from '../src/platform/time.js';
import { predictTrips } from '../src/domains/predictions/service.js';
import { trackingOf } from '../src/domains/trips/tracking.js';
import { observedDelays } from '../src/domains/trips/delays.js';
import { benchDatabase, fmt, percentile } from './support.js';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config.js';

const VEHICLES = Number(process.env['VEHICLES'] ?? 6000);
const TRIPS = Number(process.env['TRIPS'] ?? 6000);
const RUNS = Number(process.env['RUNS'] ?? 10);
const SECONDS = Number(process.env['SECONDS'] ?? 15);
const REPORTS_PER_SECOND = Number(process.env['REPORTS_PER_SECOND'] ?? 2000);
const STOPS_PER_TRIP = 20;
const TZ = 'Europe/Paris';
const rt = GtfsRealtimeBindings.transit_realtime;

const stats = (xs: number[], what = 'runs') => {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${fmt(percentile(s, 50), 1)} ms, p99 ${fmt(percentile(s, 99), 1)} ms, max ${fmt(s.at(-1) ?? NaN, 1)} ms (${fmt(s.length)} ${what})`;
};

async function main() {
  const { db, drop } = await benchDatabase('postgres');
  const app = await buildApp({ config: testConfig({ logLevel: 'silent', feeds: { refreshSeconds: 1, staleVehicleSeconds: 300, etHorizonMinutes: 60, etRefreshSeconds: 0, keepFresh: false, worker: 'off' } }), db, logger: false });
  try {
    await createGroup(app.ctx, { group_id: 'bench', name: 'Bench network', timezone: TZ });
    const now = new Date();
    const today = localDate(now, TZ);
    // Vehicles, devices, open duties and a latest position each (seen within the last minute), with its position row.
    await db.query("INSERT INTO vehicles (group_id, vehicle_id, fleet_number, license_plate) SELECT 'bench', 'v' || i, 'F' || i, 'P-' || i FROM generate_series(1, $1) i", [VEHICLES]);
    await db.query("INSERT INTO devices (group_id, device_id) SELECT 'bench', 'd' || i FROM generate_series(1, $1) i", [VEHICLES]);
    await db.query(
      `INSERT INTO duties (group_id, duty_id, device_id, driver_id, vehicle_id, signed_on_at, sign_on)
       SELECT 'bench', 'duty' || i, 'd' || i, lpad(to_hex(i), 24, '0'), 'v' || i, $2::timestamptz - interval '2 hours', '{}' FROM generate_series(1, $1) i`,
      [VEHICLES, now],
    );
    await db.query(
      `INSERT INTO positions (group_id, device_id, client_id, at, lat, lon, gps_valid, speed_kmh, bearing, received_at)
       SELECT 'bench', 'd' || i, gen_random_uuid(), $2::timestamptz - (i % 60) * interval '1 second', 48.8 + (i % 100) / 1000.0, 2.3 + (i / 100) / 1000.0, true, 30, i % 360, $2
       FROM generate_series(1, $1) i`,
      [VEHICLES, now],
    );
    await db.query(
      `INSERT INTO device_latest (group_id, device_id, position_at, lat, lon, gps_valid, speed_kmh, bearing, last_seen_at)
       SELECT group_id, device_id, at, lat, lon, gps_valid, speed_kmh, bearing, received_at FROM positions WHERE group_id = 'bench'`,
    );
    await network(db, now, today);
    await db.query('ANALYZE');

    // 1. VehiclePositions.
    const build: number[] = [];
    const read: number[] = [];
    let bytes = 0;
    for (let r = 0; r < RUNS; r++) {
      const t0 = performance.now();
      const vehicles = await vehiclesNow(db, 'bench', now, 300);
      const t1 = performance.now();
      const net: NetworkNow = { groupId: 'bench', timezone: TZ, now, dates: [], trips: [], updates: [], vehicles };
      const out = await buildFeed(net, 'vehicle-positions');
      const t2 = performance.now();
      if (vehicles.length !== VEHICLES) throw new Error(`read ${vehicles.length} vehicles, expected ${VEHICLES}`);
      bytes = out.body.length;
      read.push(t1 - t0);
      build.push(t2 - t1);
    }
    console.log(`VehiclePositions, ${fmt(VEHICLES)} vehicles, ${RUNS} runs, ${fmt(bytes / 1024)} KiB of protobuf`);
    console.log(`  build (encode + fingerprint): ${stats(build)} (target < 100 ms)`);
    console.log(`  read the vehicles (one statement): ${stats(read)}`);

    // 2. The whole snapshot rebuild.
    const cold: number[] = [];
    const warm: number[] = [];
    const memo = new ScheduleMemo();
    let trips = 0;
    for (let r = 0; r < RUNS; r++) {
      const t0 = performance.now();
      await networkNow(db, 'bench', now, { staleVehicleSeconds: 300, predictions: app.ctx.config.predictions });
      const t1 = performance.now();
      const net = await networkNow(db, 'bench', now, { staleVehicleSeconds: 300, predictions: app.ctx.config.predictions, memo });
      const t2 = performance.now();
      cold.push(t1 - t0);
      if (r > 0) warm.push(t2 - t1);
      trips = net.trips.length;
    }
    console.log(`Snapshot rebuild (networkNow), ${fmt(trips)} trips running with a delay of ${fmt(TRIPS)} a day, yesterday's all recorded; ${fmt(VEHICLES)} vehicles`);
    console.log(`  cold (stop times read): ${stats(cold)}`);
    console.log(`  incremental (stop times remembered): ${stats(warm)}`);

    // 2b. The predictions of the whole network (what each rebuild computes once per date): predictTrips
    // on the open tracking and the day's schedule read once, as the feeds call it, then with SIRI's 60-minute horizon.
    {
      const memo2 = new ScheduleMemo();
      const ctx = { db, clock: { now: () => now }, config: { predictions: app.ctx.config.predictions } };
      const t0 = performance.now();
      const tracking = await trackingOf(db, 'bench', today, undefined, { now, open: true });
      const t1 = performance.now();
      const schedule = await memo2.dayOf(db, 'bench', TZ, today);
      const t2 = performance.now();
      await trackingOf(db, 'bench', today, undefined, { now, open: true });
      const t3 = performance.now();
      await observedDelays(db, 'bench', [addDays(today, -1), today], new Date(now.getTime() - 1800_000));
      const t4 = performance.now();
      console.log(`The rebuild's reads: open tracking ${fmt(t1 - t0, 1)} ms (again: ${fmt(t3 - t2, 1)} ms), the day's schedule ${fmt(t2 - t1, 1)} ms (${fmt(schedule.trips.length)} trips), observed delays ${fmt(t4 - t3, 1)} ms`);
      const stopTimes = (gtfsId: string, ids: readonly string[]) => memo2.stopTimesOf(db, 'bench', gtfsId, ids);
      for (const [label, horizon] of [['trips in progress and their blocks', 0], ['with the 60-minute schedule horizon', 3600]] as const) {
        const took: number[] = [];
        let predicted: Awaited<ReturnType<typeof predictTrips>> = [];
        for (let r = 0; r < RUNS; r++) {
          const t0 = performance.now();
          predicted = await predictTrips(ctx, 'bench', today, { tracking, schedule, now, stopTimes, scheduleHorizonSeconds: horizon });
          took.push(performance.now() - t0);
        }
        const running = tracking.filter((t) => t.status === 'in_progress').length;
        console.log(`predictTrips, ${label}: ${fmt(running)} trips in progress, ${fmt(predicted.length)} trips and ${fmt(predicted.reduce((n, p) => n + p.stops.length, 0))} stops predicted`);
        console.log(`  ${stats(took.slice(1))} (the first run, reading the stop times: ${fmt(took[0]!, 1)} ms)`);
      }
      const rebuild: number[] = [];
      for (let r = 0; r < RUNS; r++) {
        const t0 = performance.now();
        await networkNow(db, 'bench', now, { staleVehicleSeconds: 300, predictions: app.ctx.config.predictions, memo: memo2, scheduleHorizonSeconds: 3600 });
        rebuild.push(performance.now() - t0);
      }
      console.log(`  snapshot rebuild with the horizon (incremental): ${stats(rebuild.slice(1))}`);
    }

    // 3. Served while devices report.
    const cache = app.ctx.services.feeds;
    const url = (feed: string) => `/api/v4/groups/bench/gtfs-rt/${feed}`;
    await app.inject({ url: url('vehicle-positions') });
    const idle: number[] = [];
    const during: number[] = [];
    const stamps = new Set<number>();
    let lowest = 1;
    let stop = false;
    let reports = 0;
    const batch = Math.max(1, Math.round(REPORTS_PER_SECOND / 20));
    const writer = (async () => {
      let next = 0;
      while (!stop) {
        const started = performance.now();
        const ids = Array.from({ length: batch }, () => 1 + (next++ % VEHICLES));
        await db.query(
          `WITH p AS (
             INSERT INTO positions (group_id, device_id, client_id, at, lat, lon, gps_valid, speed_kmh, bearing, received_at)
             SELECT 'bench', 'd' || i, gen_random_uuid(), clock_timestamp(), 48.8 + (i % 100) / 1000.0, 2.3 + (i / 100) / 1000.0, true, 30, i % 360, clock_timestamp()
             FROM unnest($1::int[]) i RETURNING device_id, at, lat, lon)
           UPDATE device_latest l SET position_at = p.at, lat = p.lat, lon = p.lon, last_seen_at = p.at FROM p
           WHERE l.group_id = 'bench' AND l.device_id = p.device_id AND l.position_at < p.at`,
          [ids],
        );
        reports += ids.length;
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, 50 - (performance.now() - started))));
      }
    })();
    const until = performance.now() + SECONDS * 1000;
    while (performance.now() < until) {
      for (const feed of ['vehicle-positions', 'trip-updates']) {
        const rebuilding = cache.rebuilding('bench');
        const t0 = performance.now();
        const res = await app.inject({ url: url(feed) });
        const took = performance.now() - t0;
        (rebuilding || cache.rebuilding('bench') ? during : idle).push(took);
        const m = rt.FeedMessage.decode(res.rawPayload);
        stamps.add(Number(m.header.timestamp));
        if (feed === 'vehicle-positions') lowest = Math.min(lowest, m.entity.length / VEHICLES);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    stop = true;
    await writer;
    console.log(`Served for ${SECONDS} s with FEEDS_REFRESH_SECONDS=1 while devices reported ${fmt(reports / SECONDS)} positions/s; ${fmt(stamps.size)} snapshots served`);
    console.log(`  answers while a rebuild was under way: ${stats(during, 'answers')}`);
    console.log(`  answers with no rebuild under way: ${stats(idle, 'answers')}`);
    console.log(`  coverage of VehiclePositions (vehicles reported in the stale window): lowest ${fmt(lowest * 100, 1)} %`);
  } finally {
    await app.close();
    await drop();
  }
}

/**
 * A published GTFS of TRIPS trips a day (20 stops each, 100 routes, every day of the month) and
 * the tracking of yesterday (every trip, a delay each) and of today (the trips already started).
 */
async function network(db: Awaited<ReturnType<typeof benchDatabase>>['db'], now: Date, today: string) {
  const g = 'bench';
  const v = 'gtfs-bench';
  await db.query("INSERT INTO gtfs_versions (group_id, gtfs_id, name, imported_at, counts, warnings, warning_count) VALUES ($1, $2, 'bench', $3, '{}', '[]', 0)", [g, v, now]);
  await db.query('INSERT INTO gtfs_publications (group_id, gtfs_id, published_at) VALUES ($1, $2, $3)', [g, v, new Date(now.getTime() - 30 * 86_400_000)]);
  await db.query(
    `INSERT INTO gtfs_calendars (group_id, gtfs_id, service_id, monday, tuesday, wednesday, thursday, friday, saturday, sunday, start_date, end_date)
     VALUES ($1, $2, 'ALL', true, true, true, true, true, true, true, $3::date - 30, $3::date + 30)`,
    [g, v, today],
  );
  await db.query("INSERT INTO gtfs_routes (group_id, gtfs_id, route_id, route_short_name, route_type) SELECT $1, $2, 'R' || r, r::text, 3 FROM generate_series(0, 99) r", [g, v]);
  await db.query("INSERT INTO gtfs_stops (group_id, gtfs_id, stop_id, stop_name, stop_lat, stop_lon) SELECT $1, $2, 'S' || s, 'Stop ' || s, 48.8 + (s % 50) / 500.0, 2.3 + (s / 50) / 500.0 FROM generate_series(0, 1999) s", [g, v]);
  // Trip i leaves at 05:00 + i × (19 h / TRIPS), a stop every 2 minutes.
  await db.query(
    `INSERT INTO gtfs_trips (group_id, gtfs_id, trip_id, route_id, service_id, direction_id, first_stop_id, first_stop_sequence, first_departure, last_stop_id, last_stop_sequence, last_arrival, stop_count)
     SELECT $1, $2, 'T' || i, 'R' || (i % 100), 'ALL', 0, 'S' || ((i * 7) % 2000), 1, 18000 + (i * 68400 / $3), 'S' || ((i * 7 + $4 - 1) % 2000), $4, 18000 + (i * 68400 / $3) + ($4 - 1) * 120, $4
     FROM generate_series(0, $3 - 1) i`,
    [g, v, TRIPS, STOPS_PER_TRIP],
  );
  await db.query(
    `INSERT INTO gtfs_stop_times (group_id, gtfs_id, trip_id, stop_sequence, stop_id, arrival_time, departure_time)
     SELECT $1, $2, 'T' || i, k, 'S' || ((i * 7 + k - 1) % 2000), 18000 + (i * 68400 / $3) + (k - 1) * 120, 18000 + (i * 68400 / $3) + (k - 1) * 120
     FROM generate_series(0, $3 - 1) i, generate_series(1, $4) k`,
    [g, v, TRIPS, STOPS_PER_TRIP],
  );
  await db.query('ANALYZE');
  // Tracking: every trip of yesterday, today's trips that have started; 90 s late at their 5th stop (or their last passed).
  for (const date of [addDays(today, -1), today]) {
    const dayStart = `(($3::date + time '12:00') AT TIME ZONE '${TZ}') - interval '12 hours'`;
    await db.query(
      `INSERT INTO trip_tracking (group_id, service_date, trip_id, route_id, start_time, gtfs_id, last_sequence, scheduled_start_at, scheduled_end_at, started_at, end_reported,
                                 delay_seconds, delay_stop_sequence, planned_stops, recorded_stops, unpassed_stops, last_passed_sequence, vk, recorded_commercial_km, off_itinerary_km,
                                 reliable_km, unreliable_km, positions, invalid_positions, boardings, alightings, max_load, doors, device_ids, vehicle_ids, driver_ids, computed_at)
       SELECT $1, $3::date, t.trip_id, t.route_id, NULL, $2, t.last_stop_sequence, ${dayStart} + t.first_departure * interval '1 second', ${dayStart} + t.last_arrival * interval '1 second',
              ${dayStart} + t.first_departure * interval '1 second', false, 90, 5, t.stop_count, 5, '{}', 5, 1, 1, 0, 1, 0, 10, 0, 0, 0, 0, 1, '{}', '{}', '{}', $4
       FROM gtfs_trips t WHERE t.group_id = $1 AND t.gtfs_id = $2 AND ${dayStart} + (t.first_departure + 600) * interval '1 second' <= $4`,
      [g, v, date, now],
    );
    await db.query('ANALYZE trip_tracking');
    await db.query(
      `INSERT INTO trip_tracking_stops (group_id, service_date, trip_id, stop_sequence, stop_id, scheduled_arrival_at, scheduled_departure_at, actual_at, source, delay_seconds, doors_in, doors_out)
       SELECT $1, $3::date, st.trip_id, st.stop_sequence, st.stop_id, ${dayStart} + st.arrival_time * interval '1 second', ${dayStart} + st.departure_time * interval '1 second',
              CASE WHEN st.stop_sequence <= 5 THEN ${dayStart} + (st.departure_time + 90) * interval '1 second' END, CASE WHEN st.stop_sequence <= 5 THEN 'position' END,
              CASE WHEN st.stop_sequence <= 5 THEN 90 END, '{}', '{}'
       FROM gtfs_stop_times st JOIN trip_tracking tt ON tt.group_id = $1 AND tt.service_date = $3::date AND tt.trip_id = st.trip_id
       WHERE st.group_id = $1 AND st.gtfs_id = $2`,
      [g, v, date],
    );
  }
}

await main();
