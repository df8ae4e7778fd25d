/**
 * Acceptance (issue #7): a recorded service day built through the device API, read back as trip
 * objects, stats and exports, against numbers computed by hand.
 *
 * Geometry: every trip runs S1 (48.850 N) → S2 (48.860) → S3 (48.870) along the meridian 2.35 E,
 * the shape is that line. cheap-ruler at 48.85 N: 0.001° of latitude = 0.11120683 km, 0.001° of
 * longitude = 0.07339127 km; tk = 0.02° of latitude = 2.224 km. Positions, when sent, are one a
 * minute, k minutes after the departure at latitude 48.850 + 0.001·k (S2 at k = 10).
 * Date 2026-03-02 (Monday), Europe/Paris = UTC+1: a trip at 08:00 local leaves at 07:00Z.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCsv } from '../../src/platform/csv.js';
import { systemClock } from '../../src/platform/clock.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { importZip, minimalZip } from '../helpers/gtfs.js';

const DATE = '2026-03-02';
const TRIPS = ['T1', 'T2', 'T3', 'T4', 'T5', 'T6', 'T7'];
const FEED = {
  'stops.txt': 'stop_id,stop_name,stop_lat,stop_lon\nS1,First,48.850,2.35\nS2,Second,48.860,2.35\nS3,Third,48.870,2.35\n',
  'trips.txt': 'route_id,service_id,trip_id,trip_headsign,direction_id,block_id,shape_id\n' + TRIPS.map((t) => `R1,WK,${t},Third,0,B1,SH1`).join('\n') + '\n',
  'shapes.txt': 'shape_id,shape_pt_lat,shape_pt_lon,shape_pt_sequence\nSH1,48.850,2.35,1\nSH1,48.870,2.35,2\n',
  'stop_times.txt': 'trip_id,arrival_time,departure_time,stop_id,stop_sequence\n' + TRIPS.map((t, i) => {
    const h = String(8 + i).padStart(2, '0');
    return `${t},${h}:00:00,${h}:00:00,S1,1\n${t},${h}:10:00,${h}:11:00,S2,2\n${t},${h}:20:00,${h}:20:00,S3,3`;
  }).join('\n') + '\n',
};
const KM = 0.11120683; // 0.001° of latitude

/** Trip i (T1 = 0) departs at 07:00Z + i hours: the instant m minutes and s seconds after it. */
const at = (i: number, m: number, s = 0) => new Date(Date.parse(`${DATE}T07:00:00Z`) + i * 3_600_000 + m * 60_000 + s * 1000).toISOString();
const ref = (trip: string) => ({ trip_id: trip, service_date: DATE });
const ev = (trip: string, when: string, event: 'stop_passed' | 'departure' | 'arrival', stop: string, extra: Record<string, unknown> = {}) => item('trip_event', when, { ...ref(trip), event, stop_id: stop, gps_valid: true, ...extra });
const pos = (trip: string, i: number, k: number, o: { lon?: number; valid?: boolean } = {}) =>
  item('position', at(i, k), { ...ref(trip), lat: Math.round((48.85 + 0.001 * k) * 1e6) / 1e6, lon: o.lon ?? 2.35, gps_valid: o.valid ?? true });
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k);

let t: TestApp;
let g: string;
let operator: TestUser;
let d1: Awaited<ReturnType<typeof newDevice>>;
let d2: Awaited<ReturnType<typeof newDevice>>;
let v1: string;
let v2: string;
let p1: string;
let p2: string;
const NOW = new Date(`${DATE}T15:00:00Z`);

beforeAll(async () => {
  t = await setup({ clock: { ...systemClock, now: () => NOW } });
  g = await newGroup(t);
  operator = await newUser(t, { groupId: g, role: 'admin' });
  await importZip(t, g, minimalZip(FEED), { publish: true });
  [d1, d2] = [await newDevice(t, g), await newDevice(t, g)];
  [v1, v2] = [await newVehicle(t, g), await newVehicle(t, g)];
  [p1, p2] = [await newDriver(t, g), await newDriver(t, g)];
  const ok = async (dev: typeof d1, items: unknown[]) => expect((await send(t, g, dev.auth, items)).json.rejected).toEqual([]);
  await ok(d1, [item('sign_on', `${DATE}T06:00:00Z`, { driver_id: p1, vehicle_id: v1 })]);
  await ok(d2, [item('sign_on', `${DATE}T12:05:00Z`, { driver_id: p2, vehicle_id: v2 })]);

  // T1 on time, with positions and passenger counts (doors 1 and 2).
  await ok(d1, [
    item('trip_start', at(0, -1), ref('T1')),
    ev('T1', at(0, 0, 30), 'departure', 'S1', { lat: 48.85, lon: 2.35 }),
    ev('T1', at(0, 11), 'stop_passed', 'S2'),
    ev('T1', at(0, 20), 'arrival', 'S3'),
    ...range(0, 20).map((k) => pos('T1', 0, k)),
    item('passenger_count', at(0, 0), { ...ref('T1'), stop_id: 'S1', door: 1, counts: [{ category: 'adult', boardings: 4, alightings: 0 }, { category: 'child', boardings: 1, alightings: 0 }] }),
    item('passenger_count', at(0, 0), { ...ref('T1'), stop_id: 'S1', door: 2, counts: [{ category: 'adult', boardings: 2, alightings: 0 }] }),
    item('passenger_count', at(0, 11), { ...ref('T1'), stop_id: 'S2', door: 1, counts: [{ category: 'adult', boardings: 1, alightings: 3 }] }),
    item('passenger_count', at(0, 20), { ...ref('T1'), stop_id: 'S3', door: 1, counts: [{ category: 'adult', boardings: 0, alightings: 5 }] }),
    item('trip_end', at(0, 21), ref('T1')),
  ]);
  // T2 late: 240, 240 and 300 s, no positions.
  await ok(d1, [
    item('trip_start', at(1, 0), ref('T2')),
    ev('T2', at(1, 4), 'departure', 'S1'), ev('T2', at(1, 15), 'stop_passed', 'S2'), ev('T2', at(1, 25), 'arrival', 'S3'),
    item('trip_end', at(1, 26), ref('T2')),
  ]);
  // T3: S2 skipped by the operator, not served.
  await ok(d1, [item('trip_start', at(2, 0), ref('T3')), ev('T3', at(2, 0), 'departure', 'S1'), ev('T3', at(2, 21), 'arrival', 'S3'), item('trip_end', at(2, 22), ref('T3'))]);
  // T4 with a GPS gap: positions k = 0..4 and 15..20 only; S2 neither reported nor seen.
  await ok(d1, [
    item('trip_start', at(3, 0), ref('T4')), ev('T4', at(3, 0), 'departure', 'S1'), ev('T4', at(3, 20), 'arrival', 'S3'),
    ...[...range(0, 4), ...range(15, 20)].map((k) => pos('T4', 3, k)), item('trip_end', at(3, 21), ref('T4')),
  ]);
  // T5 off itinerary: k = 8..12 are 0.002° east (146.8 m from the shape), around S2.
  await ok(d1, [
    item('trip_start', at(4, 0), ref('T5')), ev('T5', at(4, 0), 'departure', 'S1'), ev('T5', at(4, 20), 'arrival', 'S3'),
    ...range(0, 20).map((k) => pos('T5', 4, k, k >= 8 && k <= 12 ? { lon: 2.352 } : {})), item('trip_end', at(4, 21), ref('T5')),
  ]);
  // T6: vehicle swap; V1 leaves S1, V2 (device 2) takes over before S2.
  await ok(d1, [item('trip_start', at(5, 0), ref('T6')), ev('T6', at(5, 0), 'departure', 'S1'), item('trip_end', at(5, 6), ref('T6'))]);
  await ok(d2, [item('trip_start', at(5, 8), ref('T6')), ev('T6', at(5, 12), 'stop_passed', 'S2'), ev('T6', at(5, 22), 'arrival', 'S3'), item('trip_end', at(5, 23), ref('T6'))]);
  // T7: nothing recorded.

  const put = await inject(t, {
    method: 'PUT', url: `/api/v4/groups/${g}/trip-updates`, headers: operator.auth,
    payload: { update_id: 'skip-s2-t3', kind: 'skip_stop', trip_id: 'T3', start_date: DATE, end_date: DATE, stop: { stop_id: 'S2' } },
  });
  expect(put.status).toBeLessThan(300);
  // Planning: T6 was due with V1 and P1.
  const [version] = await t.db.query<{ gtfs_id: string }>('SELECT gtfs_id FROM gtfs_versions WHERE group_id = $1', [g]);
  await t.db.query('INSERT INTO plannings (group_id, service_date, trip_id, gtfs_id, vehicle_id, driver_id, updated_at) VALUES ($1, $2, $3, $4, $5, $6, now())', [g, DATE, 'T6', version!.gtfs_id, v1, p1]);
});
afterAll(async () => t?.close());

const trip = async (id: string, q = '') => {
  const r = await inject(t, { url: `/api/v4/groups/${g}/trips/${id}?date=${DATE}${q}`, headers: operator.auth });
  expect(r.status).toBe(200);
  return r.json;
};
const delays = (x: any) => x.delay.map((s: any) => [s.stop_id, s.delay_seconds, s.status]);

describe('a recorded service day', () => {
  it('trip objects: on time, with kilometres and passengers', async () => {
    const x = await trip('T1');
    expect(x).toMatchObject({
      id: 'T1', service_date: DATE, status: 'completed', temporality: 'past', formatted_name: '1 → Third 08:00',
      departure_time: at(0, 0), arrival_time: at(0, 20),
      route: { id: 'R1', color: 'FF0000', long_name: 'Line one', short_name: '1', text_color: 'FFFFFF' },
      first_stop: { id: 'S1', name: 'First', stop_sequence: 1 }, last_stop: { id: 'S3', name: 'Third', stop_sequence: 3 },
      passenger_count: { boardings: 8, alightings: 8, loading: 7 }, // on board: 7 after S1, 5 after S2, 0 after S3
      tk: 2.224, vk: 2.224, percent_km: 100, off_itinerary_km: 0, recorded_commercial_km: 2.224, reliable_km: 2.224, unreliable_km: 0,
      current_delay_seconds: 0, service: { recorded_stops: 3, planned_stops: 3 }, problems: {},
    });
    expect(delays(x)).toEqual([['S1', 30, 'passed'], ['S2', 0, 'passed'], ['S3', 0, 'passed']]);
    expect(x.vehicles.map((v: any) => v.id)).toEqual([v1]);
    expect(x.drivers.map((d: any) => d.id)).toEqual([p1]);
    expect(x.devices.map((d: any) => d.id)).toEqual([d1.deviceId]);
    expect(x.gtfs).toHaveLength(1);
  });

  it('trip objects: late, skipped stop, GPS gap, off itinerary, vehicle swap, not done', async () => {
    const late = await trip('T2');
    expect(delays(late)).toEqual([['S1', 240, 'passed'], ['S2', 240, 'passed'], ['S3', 300, 'passed']]);
    expect(late).toMatchObject({ current_delay_seconds: 300, vk: 0, percent_km: 0, status: 'completed' });

    const skipped = await trip('T3');
    expect(delays(skipped)).toEqual([['S1', 0, 'passed'], ['S2', null, 'skipped'], ['S3', 60, 'passed']]);
    expect(skipped.status).toBe('completed');
    expect(skipped.problems).toEqual({});
    expect(skipped.updates.skipped_stops).toEqual([{ stop_sequence: 2, update_id: 'skip-s2-t3' }]);

    // GPS gap: 9 one-minute segments (1.001 km) are reliable; the 11-minute gap (1.223 km) is not.
    const gap = await trip('T4');
    expect(gap).toMatchObject({ status: 'partial', vk: 2.224, reliable_km: 1.001, unreliable_km: 1.223, recorded_commercial_km: 2.224, percent_km: 100 });
    expect(delays(gap)).toEqual([['S1', 0, 'passed'], ['S2', null, 'missed'], ['S3', 0, 'passed']]);
    expect(Object.keys(gap.problems).sort()).toEqual(['gps_unreliable', 'missing_stops']);

    // Off itinerary: 14 segments on the shape (1.557 km of progress), 4 parallel segments off it
    // (4 × 0.111) and the two diagonals out and back (√(0.1112² + 0.1468²) = 0.18415 km each).
    const off = await trip('T5');
    expect(off).toMatchObject({ status: 'partial', tk: 2.224, vk: 2.370, off_itinerary_km: 0.813, recorded_commercial_km: 1.557, percent_km: 70 });
    expect(off.vk).toBeCloseTo(18 * KM + 2 * 0.18415, 3);
    expect(Object.keys(off.problems).sort()).toEqual(['missing_stops', 'off_itinerary']);

    const swap = await trip('T6');
    expect(swap.vehicles.map((v: any) => v.id)).toEqual([v1, v2]);
    expect(swap.drivers.map((d: any) => d.id)).toEqual([p1, p2]);
    expect(swap.delay.map((s: any) => s.vehicle_id)).toEqual([v1, v2, v2]);
    expect(swap.trips.map((r: any) => r.device_id)).toEqual([d1.deviceId, d2.deviceId]);
    expect(delays(swap)).toEqual([['S1', 0, 'passed'], ['S2', 60, 'passed'], ['S3', 120, 'passed']]);
    expect(Object.keys(swap.problems).sort()).toEqual(['different_driver', 'different_vehicle', 'vehicle_change']);

    const none = await trip('T7');
    expect(none).toMatchObject({ status: 'not_done', vk: 0, tk: 2.224, vehicles: [], problems: { no_sign_on: {} } });

    const missing = await inject(t, { url: `/api/v4/groups/${g}/trips/NOPE?date=${DATE}`, headers: operator.auth });
    expect([missing.status, missing.json.code]).toEqual([404, 'TripNotFound']);
  });

  it('a reader limited to another team gets 403 ForbiddenDifferentTeam', async () => {
    await t.db.query("INSERT INTO teams (group_id, team_id, name) VALUES ($1, 'north', 'North'), ($1, 'south', 'South')", [g]);
    await t.db.query("UPDATE vehicles SET teams = '{north}' WHERE group_id = $1", [g]);
    await t.db.query("UPDATE drivers SET teams = '{north}' WHERE group_id = $1", [g]);
    const south = await newUser(t, { groupId: g, role: 'reader', teams: ['south'] });
    const north = await newUser(t, { groupId: g, role: 'reader', teams: ['north'] });
    const r = await inject(t, { url: `/api/v4/groups/${g}/trips/T1?date=${DATE}`, headers: south.auth });
    expect([r.status, r.json.code]).toEqual([403, 'ForbiddenDifferentTeam']);
    expect((await inject(t, { url: `/api/v4/groups/${g}/trips/T1?date=${DATE}`, headers: north.auth })).status).toBe(200);
    await t.db.query("UPDATE vehicles SET teams = '{}' WHERE group_id = $1", [g]);
    await t.db.query("UPDATE drivers SET teams = '{}' WHERE group_id = $1", [g]);
  });

  it('the trips of the date list recorded and scheduled items', async () => {
    const r = await inject(t, { url: `/api/v4/groups/${g}/trips?date=20260302`, headers: operator.auth });
    expect(r.json.map((x: any) => [x.id, x.kind, x.status])).toEqual([
      ['T1', 'recorded', 'completed'], ['T2', 'recorded', 'completed'], ['T3', 'recorded', 'completed'], ['T4', 'recorded', 'partial'],
      ['T5', 'recorded', 'partial'], ['T6', 'recorded', 'completed'], ['T7', 'scheduled', 'not_done'],
    ]);
  });

  it('stats: punctuality, delays, completion and kilometres', async () => {
    const r = await inject(t, { url: `/api/v4/groups/${g}/stats/trip-tracking?start_date=${DATE}&end_date=${DATE}`, headers: operator.auth });
    expect(r.status).toBe(200);
    // 15 stop passages: eight at 0 s, then 30, 60, 60, 120, 240, 240, 300 (sum 1050).
    const expected = {
      trips: 7, completed_trips: 4, partial_trips: 2, not_done_trips: 1, missing_trips: 1, cancelled_trips: 0,
      stop_passages: 15, early: 0, on_time: 12, late: 3, punctuality_percent: 80, average_delay_seconds: 70,
      p50_delay_seconds: 0, p90_delay_seconds: 240, p95_delay_seconds: 300, max_delay_seconds: 300,
      tk: 15.568, vk: 6.818, off_itinerary_km: 0.813, // tk: 7 × 2.224 (each trip's km rounded to the metre)
    };
    expect(r.json.total).toMatchObject(expected);
    expect(r.json.by_day).toEqual([{ service_date: DATE, ...r.json.total }]);
    expect(r.json.by_route).toEqual([{ route_id: 'R1', ...r.json.total }]);
  });

  it('exports: trips (datahub), trip-tracking and vehicle exploitation (PCS-CNT)', async () => {
    const trips = await inject(t, { url: `/api/v4/groups/${g}/export/trips?date=20260302`, headers: operator.auth });
    expect(trips.headers['content-type']).toContain('text/csv');
    const tripsCsv = await readCsv(trips.body);
    expect(tripsCsv.records.map((r) => [r.values['trip_id'], r.values['status'], r.values['delay_seconds'], r.values['skipped_stops'], r.values['missed_stops']])).toEqual([
      ['T1', 'completed', '0', '0', '0'], ['T2', 'completed', '300', '0', '0'], ['T3', 'completed', '60', '1', '0'], ['T4', 'partial', '0', '0', '1'],
      ['T5', 'partial', '0', '0', '1'], ['T6', 'completed', '120', '0', '0'],
    ]);
    expect(tripsCsv.records[0]!.values).toMatchObject({ scheduled_departure: `${DATE}T08:00:00+01:00`, vk: '2.224', percent_km: '100', boardings: '8', loading: '7' });

    const tracking = await inject(t, { url: `/api/v4/groups/${g}/export/trip-tracking?start_date=${DATE}&end_date=20260302`, headers: operator.auth });
    const trackingCsv = await readCsv(tracking.body);
    expect(trackingCsv.records).toHaveLength(18); // 6 recorded trips × 3 stops
    expect(trackingCsv.records.filter((r) => r.values['trip_id'] === 'T3').map((r) => r.values['status'])).toEqual(['passed', 'skipped', 'passed']);
    expect(trackingCsv.records[0]!.values).toMatchObject({ stop_id: 'S1', actual_time: `${DATE}T08:00:30+01:00`, delay_seconds: '30', source: 'event', boardings: '7' });

    const pcs = await inject(t, { url: `/api/v4/groups/${g}/export/vehicle-exploitation?start_date=${DATE}&end_date=${DATE}`, headers: operator.auth });
    const lines = pcs.body.split('\r\n');
    expect(lines[0]).toBe('fileId;unitId;drivingMode;stopId;arrivalTime;departureTime;SAEvalidity;journey;journeyType;line;trip;tripDirection;vehicleService;stationOrigin;' +
      'stationDestination;station;stationCode;stationIndex;stationType;GPSvalidity;latitude;longitude;' +
      'PORTE_01_validity;PORTE_01_adults_in;PORTE_01_adults_out;PORTE_02_validity;PORTE_02_adults_in;PORTE_02_adults_out');
    expect(lines[1]).toBe(`${v1}_20260302;${v1};commercial;S1;${DATE}T08:00:30+01:00;${DATE}T08:00:30+01:00;1;20260302_T1;commercial;R1;T1;0;B1;S1;S3;First;S1;1;first;1;48,85;2,35;1;5;0;1;2;0`);
    expect(lines.filter((l) => l !== '')).toHaveLength(19);
  });
});
