/**
 * The feeds of the demo network with predictions, checked by the rules of MobilityData's
 * GTFS-Realtime validator that can be checked without the validator itself (rule ids from its
 * RULES.md), decoded with the official gtfs-realtime-bindings; the SIRI answers (ET, SM, VM)
 * validated against the official SIRI 2.1 schemas.
 *
 * The network: the demo city's GTFS (src/domains/demo; its third stops timed at the minute of the
 * second), Tuesday 2026-03-17, clock at 08:00 local.
 * The tracking (what tracking stores once it has matched the reports: passages) is written
 * directly for three past weekdays (the history the model learns from) and for the morning of
 * the day up to 08:00, from a simple traffic model (segments up to 40 % slower at the 7–9 h peak,
 * ±8 % noise per run, 20 s dwell), with the cases that stress the publication: a bus last seen
 * 20 minutes ago (every stop since held to "now"), buses standing at a stop, a bus waiting at
 * its first stop for a trip about to start. A few vehicles report positions through the device
 * API. What the test knows: which trips are in progress, and the GTFS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create } from 'xmlbuilder2';
import { demoFeedZip } from '../../src/domains/demo/feed.js';
import { generateNetwork, serviceOf, type DemoTrip } from '../../src/domains/demo/network.js';
import { between, normal, rngOf } from '../../src/platform/random.js';
import { buildModel } from '../../src/domains/predictions/model.js';
import { predictTrips } from '../../src/domains/predictions/service.js';
import { fixedClock } from '../../src/platform/clock.js';
import { addDays, instantOf } from '../../src/platform/time.js';
import { newGroup, newUser, setup } from '../helpers/app.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { importZip } from '../helpers/gtfs.js';
import { readFeed, settled, type FeedFixture } from './fixture.js';
import { siriErrors } from './siri-xsd.js';

const net = generateNetwork();
// A timetable at the minute, as many are: the third stop of each trip at the same time as the
// second (no running time between them), which a prediction must still publish a second apart.
for (const trip of net.trips) {
  const st = trip.stop_times;
  if (trip.frequency || st.length < 5) continue;
  st[2]!.arrival = st[2]!.departure = st[1]!.departure;
}
const TZ = net.timezone;
const DAY = '2026-03-17';
const HISTORY = ['2026-03-12', '2026-03-13', '2026-03-16'];
const NOW = 8 * 3600;
const list = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);

/** The timetable trips of a date's service. */
const tripsOf = (date: string) => net.trips.filter((t) => t.service_id === serviceOf(date) && !t.frequency);

/** The true passing times (departure; arrival at the last stop) and arrivals of a trip on a date. */
function truth(date: string, trip: DemoTrip): { arrival: number[]; passing: number[] } {
  const r = rngOf('validator', date, trip.trip_id);
  const st = trip.stop_times;
  const arrival = [st[0]!.departure + Math.round(between(r, 0, 90))];
  const passing = [arrival[0]!];
  for (let i = 1; i < st.length; i++) {
    const seg = rngOf('validator-segment', st[i - 1]!.stop_id, st[i]!.stop_id);
    const at = passing[i - 1]!;
    const peak = at >= 7 * 3600 && at < 9 * 3600 ? 1 + 0.4 * seg() : 1;
    const run = Math.max(20, st[i]!.arrival - st[i - 1]!.departure) * peak * Math.min(1.3, Math.max(0.8, normal(r, 1, 0.08)));
    arrival.push(Math.round(at + run));
    passing.push(i === st.length - 1 ? arrival[i]! : arrival[i]! + 20);
  }
  return { arrival, passing };
}

interface Written {
  trip: DemoTrip;
  /** Known up to `until` (seconds of the day): passings and arrivals at or before it. */
  arrival: (number | null)[];
  passing: (number | null)[];
}

let f: FeedFixture;
/** The trips written as in progress at 08:00 (the truth of what TripUpdates must carry). */
const running = new Set<string>();

/** Writes the tracking of trips on a date in two statements (trips, then their stops). */
async function writeTracking(date: string, trips: readonly Written[]) {
  const at = (s: number | null) => (s === null ? null : instantOf(date, s, TZ).toISOString());
  const g = f.g;
  const tt = trips.map((w) => {
    const st = w.trip.stop_times;
    const passed = st.filter((_, i) => w.passing[i] !== null).map((s) => s.stop_sequence);
    return { w, st, passed };
  });
  await f.t.db.query(
    `INSERT INTO trip_tracking (group_id, service_date, trip_id, route_id, direction_id, block_id, start_time, scheduled_start_at, scheduled_end_at, started_at,
       end_reported, planned_stops, recorded_stops, unpassed_stops, last_passed_sequence, vk, recorded_commercial_km, off_itinerary_km, reliable_km, unreliable_km,
       positions, invalid_positions, boardings, alightings, max_load, doors, device_ids, vehicle_ids, driver_ids, computed_at)
     SELECT $1, $2::date, x.trip_id, x.route_id, x.direction_id, x.block_id, x.start_time, x.s_start, x.s_end, x.started, false, x.planned, x.recorded, '{}', x.last,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '{}', ARRAY['bus-' || x.trip_id], '{}', now()
     FROM unnest($3::text[], $4::text[], $5::int[], $6::text[], $7::int[], $8::timestamptz[], $9::timestamptz[], $10::timestamptz[], $11::int[], $12::int[], $13::int[])
       AS x(trip_id, route_id, direction_id, block_id, start_time, s_start, s_end, started, planned, recorded, last)`,
    [g, date, tt.map((x) => x.w.trip.trip_id), tt.map((x) => x.w.trip.route_id), tt.map((x) => x.w.trip.direction_id), tt.map((x) => x.w.trip.block_id),
      tt.map((x) => x.st[0]!.departure), tt.map((x) => at(x.st[0]!.departure)), tt.map((x) => at(x.st[x.st.length - 1]!.arrival)),
      tt.map((x) => at(x.w.passing[0] ?? x.w.arrival[0] ?? x.st[0]!.departure)), tt.map((x) => x.st.length), tt.map((x) => x.passed.length), tt.map((x) => x.passed.at(-1) ?? null)],
  );
  const rows = tt.flatMap(({ w, st }) => st.map((s, i) => ({
    trip: w.trip.trip_id, seq: s.stop_sequence, stop: s.stop_id, sa: at(s.arrival), sd: at(s.departure), actual: at(w.passing[i]!), arr: at(w.arrival[i]!), dep: at(w.passing[i]!),
    delay: w.passing[i] === null ? null : w.passing[i]! - (i === st.length - 1 ? s.arrival : s.departure),
  })));
  const col = <K extends keyof (typeof rows)[number]>(k: K) => rows.map((r) => r[k]);
  await f.t.db.query(
    `INSERT INTO trip_tracking_stops (group_id, service_date, trip_id, stop_sequence, stop_id, scheduled_arrival_at, scheduled_departure_at, actual_at,
       actual_arrival_at, actual_departure_at, source, delay_seconds, doors_in, doors_out)
     SELECT $1, $2::date, r.trip, r.seq, r.stop, r.sa, r.sd, r.actual, r.arr, r.dep, CASE WHEN r.actual IS NULL THEN NULL ELSE 'event' END, r.delay, '{}', '{}'
     FROM unnest($3::text[], $4::int[], $5::text[], $6::timestamptz[], $7::timestamptz[], $8::timestamptz[], $9::timestamptz[], $10::timestamptz[], $11::int[])
       AS r(trip, seq, stop, sa, sd, actual, arr, dep, delay)`,
    [g, date, col('trip'), col('seq'), col('stop'), col('sa'), col('sd'), col('actual'), col('arr'), col('dep'), col('delay')],
  );
}

beforeAll(async () => {
  const clock = fixedClock(instantOf(DAY, NOW, TZ));
  const t = await setup({ clock });
  const g = await newGroup(t, { timezone: TZ });
  f = { t, g, clock, op: await newUser(t, { groupId: g, role: 'operator' }) };
  await importZip(t, g, demoFeedZip(net, addDays(DAY, -30), addDays(DAY, 30)), { publish: true });

  // History: the mornings (05:30–09:30) of three weekdays, whole trips.
  for (const date of HISTORY) {
    const trips = tripsOf(date).filter((x) => x.stop_times[0]!.departure >= 5.5 * 3600 && x.stop_times[0]!.departure < 9.5 * 3600);
    await writeTracking(date, trips.map((trip) => ({ trip, ...truth(date, trip) })));
  }
  await buildModel(t.db, g, clock.now(), { historyDays: 7, bandSeconds: 3600 });

  // The day: every trip started by 08:00 and not over, known up to 08:00.
  const day: Written[] = [];
  for (const trip of tripsOf(DAY)) {
    const tr = truth(DAY, trip);
    if (tr.passing[0]! > NOW || tr.passing.at(-1)! <= NOW) continue;
    day.push({ trip, arrival: tr.arrival.map((s) => (s <= NOW ? s : null)), passing: tr.passing.map((s) => (s <= NOW ? s : null)) });
  }
  // One bus last seen leaving its first stop 20 minutes ago (a GPS gap): every stop since is held to "now".
  const gap = day.find((w) => w.trip.stop_times.length > 6 && w.passing[0]! <= NOW - 20 * 60);
  if (gap) gap.arrival = gap.passing = gap.trip.stop_times.map((_, i) => (i === 0 ? gap.passing[0]! : null));
  // Buses waiting at their first stop for trips about to start within 20 minutes (no trip of their block in progress).
  const blocksRunning = new Set(day.map((w) => w.trip.block_id));
  const waiting = tripsOf(DAY).filter((x) => x.stop_times[0]!.departure > NOW && x.stop_times[0]!.departure <= NOW + 20 * 60 && !blocksRunning.has(x.block_id)).slice(0, 2);
  for (const trip of waiting) day.push({ trip, arrival: trip.stop_times.map(() => null), passing: trip.stop_times.map(() => null) });
  await writeTracking(DAY, day);
  for (const w of day) running.add(w.trip.trip_id);
  expect(gap, 'a trip for the GPS gap').toBeDefined();
  expect(waiting.length).toBeGreaterThan(0);
  expect(day.some((w) => w.passing.some((p, i) => p === null && w.arrival[i] !== null)), 'a bus standing at a stop').toBe(true);

  // Three vehicles report a position through the device API, on trips in progress.
  for (const w of day.slice(0, 3)) {
    const device = await newDevice(t, g);
    const stop = net.stops.find((s) => s.stop_id === w.trip.stop_times[0]!.stop_id)!;
    const r = await send(t, g, device.auth, [
      item('sign_on', instantOf(DAY, NOW - 3600, TZ).toISOString(), { driver_id: await newDriver(t, g), vehicle_id: await newVehicle(t, g) }),
      item('position', instantOf(DAY, NOW - 30, TZ).toISOString(), { lat: stop.lat, lon: stop.lon, gps_valid: true, speed_kmh: 20, bearing: 270, trip_id: w.trip.trip_id, service_date: DAY }),
    ]);
    expect(r.json.rejected).toEqual([]);
  }
}, 240_000);
afterAll(async () => f?.t.close());

describe('the demo network\'s feeds with predictions, by the GTFS-Realtime validator\'s rules', () => {
  it('TripUpdates (official bindings): E001 E038 E048 E049 header; E012 entity timestamps not after it nor older than 3 h; every trip in progress present; E003 E004 E035 E020 E021 E023 E024 W009 descriptors', async () => {
    await settled(f);
    const header = secondsNow();
    const m = (await readFeed(f, 'trip-updates')).message!;
    // E038, E048, E049: version, timestamp and incrementality populated; E001: POSIX seconds, the service's clock (not in the future).
    expect(m.header).toEqual({ gtfsRealtimeVersion: '2.0', incrementality: 'FULL_DATASET', timestamp: header });
    const gtfs = await gtfsOf();
    const entities = m.entity as any[];
    expect(new Set(entities.map((e) => e.id)).size).toBe(entities.length);
    // Every trip in progress is there, on time or not, with the two about to start.
    const published = new Set(entities.map((e) => e.tripUpdate.trip.tripId));
    for (const id of running) expect(published.has(id), id).toBe(true);
    // The learned model is in use (not only the schedule).
    expect((await predictTrips(f.t.ctx, f.g, DAY, { now: f.clock.now() })).flatMap((p) => p.stops).filter((s) => s.basis === 'history').length).toBeGreaterThan(100);
    for (const e of entities) {
      const tu = e.tripUpdate;
      const trip = gtfs.trips.get(tu.trip.tripId);
      expect(trip, `E003 ${tu.trip.tripId}`).toBeDefined();
      expect(tu.trip.routeId, 'E004/E035').toBe(trip!.route_id);
      expect(gtfs.routes.has(tu.trip.routeId)).toBe(true);
      expect(tu.trip.directionId ?? null, 'E024').toBe(trip!.direction_id);
      expect(tu.trip.startTime, 'E020/E023').toBe(trip!.first_arrival);
      expect(tu.trip.startDate, 'E021').toBe('20260317');
      expect(tu.trip.scheduleRelationship, 'W009').toBe('SCHEDULED');
      // E012 (not after the header), and sane: not older than 3 hours.
      if (tu.timestamp !== undefined) {
        expect(tu.timestamp).toBeLessThanOrEqual(header);
        expect(tu.timestamp).toBeGreaterThan(header - 3 * 3600);
      }
    }
  });

  it('TripUpdates stop time updates: E041 E040 E011 E015 E045 E002 E036 E037 E043 E044 E025 E022 (times strictly increasing between sequential stops), uncertainty ≥ 0, SKIPPED without times', async () => {
    const m = (await readFeed(f, 'trip-updates')).message!;
    const gtfs = await gtfsOf();
    let checked = 0;
    for (const e of m.entity as any[]) {
      const tu = e.tripUpdate;
      const updates = (tu.stopTimeUpdate ?? []) as any[];
      expect(updates.length, `E041 ${tu.trip.tripId}`).toBeGreaterThan(0);
      const stopTimes = gtfs.stopTimes.get(tu.trip.tripId)!;
      let previous: { seq: number; stop: string; last: number } | null = null;
      for (const u of updates) {
        checked++;
        expect(u.stopSequence !== undefined && u.stopId !== undefined, 'E040').toBe(true);
        expect(gtfs.stops.get(u.stopId), `E011 ${u.stopId}`).toBe(0); // E015: location_type 0
        expect(stopTimes.get(u.stopSequence), 'E045').toBe(u.stopId);
        if (u.scheduleRelationship === 'SKIPPED') {
          expect(u.arrival ?? u.departure, 'SKIPPED without times').toBeUndefined();
          continue;
        }
        expect(u.scheduleRelationship ?? 'SCHEDULED').toBe('SCHEDULED');
        expect(u.arrival ?? u.departure, 'E043').toBeDefined();
        for (const ev of [u.arrival, u.departure].filter(Boolean)) {
          expect(ev.time ?? ev.delay, 'E044').toBeDefined();
          expect(ev.uncertainty ?? 0).toBeGreaterThanOrEqual(0);
          if (ev.time !== undefined) expect(ev.time, 'E001: seconds').toBeLessThan(1e10);
        }
        const arrival = u.arrival?.time ?? u.departure.time;
        const departure = u.departure?.time ?? u.arrival.time;
        expect(departure, 'E025').toBeGreaterThanOrEqual(arrival);
        if (previous) {
          expect(u.stopSequence, 'E002/E036').toBeGreaterThan(previous.seq);
          expect(u.stopId, 'E037').not.toBe(previous.stop);
          expect(arrival, `E022 ${tu.trip.tripId} stop_sequence ${u.stopSequence}`).toBeGreaterThan(previous.last);
        }
        previous = { seq: u.stopSequence, stop: u.stopId, last: departure };
      }
    }
    expect(checked).toBeGreaterThan(200);
  });

  it('VehiclePositions: E026 E027 positions and bearings, W002 vehicle ids populated and unique, E012 timestamps, E003 E004 trips of the GTFS', async () => {
    const m = (await readFeed(f, 'vehicle-positions')).message!;
    const gtfs = await gtfsOf();
    const vehicles = (m.entity as any[]).map((e) => e.vehicle);
    expect(vehicles).toHaveLength(3);
    expect(new Set(vehicles.map((v) => v.vehicle.id)).size).toBe(3);
    for (const v of vehicles) {
      expect(Math.abs(v.position.latitude)).toBeLessThanOrEqual(90);
      expect(Math.abs(v.position.longitude)).toBeLessThanOrEqual(180);
      expect(v.position.bearing).toBeGreaterThanOrEqual(0);
      expect(v.position.bearing).toBeLessThanOrEqual(360);
      expect(v.timestamp).toBeLessThanOrEqual(m.header.timestamp);
      expect(gtfs.trips.get(v.trip.tripId)?.route_id).toBe(v.trip.routeId);
    }
  });

  it('SIRI EstimatedTimetable, StopMonitoring (the hub, 1 h) and VehicleMonitoring validate against the SIRI 2.1 schemas, ET with the expected times of every trip in progress', async () => {
    const get = async (path: string) => {
      const res = await f.t.app.inject({ url: `/api/v4/groups/${f.g}/siri/${path}` });
      expect(res.statusCode, path).toBe(200);
      return res.body;
    };
    const et = await get('estimated-timetable');
    const sm = await get(`stop-monitoring?MonitoringRef=${net.hubStop}&PreviewInterval=PT1H&MaximumStopVisits=200`);
    const vm = await get('vehicle-monitoring');
    expect(await siriErrors(et, sm, vm)).toEqual([]);
    const journeys = list((create(et).end({ format: 'object' }) as any).Siri.ServiceDelivery.EstimatedTimetableDelivery.EstimatedJourneyVersionFrame.EstimatedVehicleJourney) as any[];
    const byId = new Map(journeys.map((j) => [j.FramedVehicleJourneyRef.DatedVehicleJourneyRef, j]));
    for (const id of running) {
      expect(byId.get(id)?.Monitored, id).toBe('true');
      const calls = list(byId.get(id).EstimatedCalls.EstimatedCall) as any[];
      expect(calls.every((c) => c.ExpectedArrivalTime ?? c.ExpectedDepartureTime)).toBe(true);
    }
    expect(journeys.some((j) => j.Monitored === 'false')).toBe(true);
  });
});

const secondsNow = () => Math.floor(f.clock.now().getTime() / 1000);

/** The published GTFS: trips (route, direction, first arrival), their stop_sequence → stop_id, stops' location_type. */
async function gtfsOf() {
  const q = <T>(sql: string) => f.t.db.query<T>(sql, [f.g]);
  const trips = new Map((await q<{ trip_id: string; route_id: string; direction_id: number | null; first_arrival: string }>(
    `SELECT t.trip_id, t.route_id, t.direction_id, st.arrival_time AS first_arrival_s, t.first_departure
     FROM gtfs_trips t JOIN gtfs_stop_times st ON st.group_id = t.group_id AND st.gtfs_id = t.gtfs_id AND st.trip_id = t.trip_id AND st.stop_sequence = t.first_stop_sequence
     WHERE t.group_id = $1`,
  )).map((r: any) => [r.trip_id, { route_id: r.route_id, direction_id: r.direction_id, first_arrival: hhmmss(r.first_arrival_s ?? r.first_departure) }]));
  const stopTimes = new Map<string, Map<number, string>>();
  for (const r of await q<{ trip_id: string; stop_sequence: number; stop_id: string }>('SELECT trip_id, stop_sequence, stop_id FROM gtfs_stop_times WHERE group_id = $1')) {
    (stopTimes.get(r.trip_id) ?? stopTimes.set(r.trip_id, new Map()).get(r.trip_id)!).set(r.stop_sequence, r.stop_id);
  }
  const stops = new Map((await q<{ stop_id: string; location_type: number | null }>('SELECT stop_id, location_type FROM gtfs_stops WHERE group_id = $1')).map((r) => [r.stop_id, r.location_type ?? 0]));
  const routes = new Set((await q<{ route_id: string }>('SELECT route_id FROM gtfs_routes WHERE group_id = $1')).map((r) => r.route_id));
  return { trips, stopTimes, stops, routes };
}

function hhmmss(s: number): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(Math.floor(s / 3600))}:${p(Math.floor(s / 60) % 60)}:${p(s % 60)}`;
}
