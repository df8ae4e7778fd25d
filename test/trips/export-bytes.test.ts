/**
 * The bytes of export/trip-tracking and export/vehicle-exploitation, pinned whole: stored tracking
 * written by SQL with the values a fast path could get wrong (texts holding TAB, backslash, `;`,
 * quotes, line breaks, formula starts and non-ASCII; NULLs in every nullable column; negative
 * and long coordinates; door arrays of different lengths; times across the end of summer time in
 * Europe/Paris), read by an admin and by a team-scoped reader whose team name needs quoting as
 * an SQL literal. The expected texts were written by the exports before they moved to COPY.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/platform/clock.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';

let t: TestApp;
let g: string;
let admin: TestUser;
let reader: TestUser;
// Between the trips of 2026-10-26: the first is over (1 h past its scheduled end), the second not.
const NOW = new Date('2026-10-26T08:30:00Z');
const HOSTILE_TEAM = "o'b\\rien\t;--";

interface Trip {
  date: string;
  trip: string;
  route: string | null;
  direction: number | null;
  block: string | null;
  start: number | null;
  startAt: string;
  endAt: string | null;
  endReported: boolean;
  lastPassed: number | null;
  vehicles: string[];
  drivers: string[];
}

interface Stop {
  seq: number;
  id: string;
  name: string | null;
  arrival: string | null;
  departure: string | null;
  actual: string | null;
  source: 'event' | 'position' | null;
  delay: number | null;
  lat: number | null;
  lon: number | null;
  stopLat: number | null;
  stopLon: number | null;
  gps: boolean | null;
  vehicle: string | null;
  driver: string | null;
  doorsIn: (number | null)[];
  doorsOut: (number | null)[];
}

async function insertTrip(trip: Trip, stops: Stop[]) {
  const seqs = stops.map((s) => s.seq);
  await t.db.query(
    `INSERT INTO trip_tracking (group_id, service_date, trip_id, route_id, direction_id, block_id, headsign, start_time, gtfs_id, first_stop_id, last_stop_id, last_sequence,
       scheduled_start_at, scheduled_end_at, started_at, ended_at, end_reported, last_report_at, delay_seconds, delay_stop_sequence, planned_stops, recorded_stops,
       unpassed_stops, last_passed_sequence, tk, vk, recorded_commercial_km, off_itinerary_km, reliable_km, unreliable_km, percent_km, positions, invalid_positions,
       boardings, alightings, max_load, doors, device_ids, vehicle_ids, driver_ids, computed_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'Head', $7, 'gtfs', $8, $9, $10, $11, $12, $11, $12, $13, $12, 0, NULL, $14, $14, '{}', $15, 1, 1, 1, 0, 1, 0, 100, 1, 0, 0, 0, 0,
       $16, '{}', $17, $18, now())`,
    [g, trip.date, trip.trip, trip.route, trip.direction, trip.block, trip.start, stops[0]?.id ?? null, stops.at(-1)?.id ?? null, Math.max(...seqs), trip.startAt, trip.endAt,
      trip.endReported, stops.length, trip.lastPassed, Math.max(...stops.map((s) => s.doorsIn.length)), trip.vehicles, trip.drivers],
  );
  for (const s of stops) {
    await t.db.query(
      `INSERT INTO trip_tracking_stops (group_id, service_date, trip_id, stop_sequence, stop_id, stop_name, stop_lat, stop_lon, scheduled_arrival_at, scheduled_departure_at,
         actual_at, source, delay_seconds, lat, lon, gps_valid, device_id, vehicle_id, driver_id, doors_in, doors_out)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, NULL, $17, $18, $19, $20)`,
      [g, trip.date, trip.trip, s.seq, s.id, s.name, s.stopLat, s.stopLon, s.arrival, s.departure, s.actual, s.source, s.delay, s.lat, s.lon, s.gps, s.vehicle, s.driver, s.doorsIn, s.doorsOut],
    );
  }
}

const stop = (seq: number, o: Partial<Stop> = {}): Stop => ({
  seq, id: `S${seq}`, name: `Stop ${seq}`, arrival: null, departure: null, actual: null, source: null, delay: null, lat: null, lon: null, stopLat: 45.75, stopLon: 4.85,
  gps: null, vehicle: null, driver: null, doorsIn: [], doorsOut: [], ...o,
});

beforeAll(async () => {
  t = await setup({ clock: { ...systemClock, now: () => NOW } });
  g = await newGroup(t, { timezone: 'Europe/Paris' });
  await t.db.query('INSERT INTO teams (group_id, team_id, name) VALUES ($1, $2, $3)', [g, HOSTILE_TEAM, 'Hostile']);
  await t.db.query(`INSERT INTO vehicles (group_id, vehicle_id, fleet_number, license_plate, teams) VALUES ($1, 'bus-1', '1', 'AA-1', $2), ($1, 'bus\\2', '2', 'AA-2', '{}')`, [g, [HOSTILE_TEAM]]);
  admin = await newUser(t, { groupId: g, role: 'admin' });
  reader = await newUser(t, { groupId: g, role: 'reader', teams: [HOSTILE_TEAM] });
  // The night summer time ends: 02:59:59+02:00 is followed by 02:00:00+01:00 (01:00Z).
  await insertTrip({ date: '2026-10-25', trip: 'N1', route: 'R;1', direction: 1, block: 'B"1', start: 84600, startAt: '2026-10-25T00:30:00Z', endAt: '2026-10-25T01:30:00Z',
    endReported: true, lastPassed: 3, vehicles: ['bus-1'], drivers: ['drv\t1'] }, [
    stop(1, { name: 'Gare\tcentrale \\ nord', arrival: '2026-10-25T00:30:00Z', departure: '2026-10-25T00:30:20Z', actual: '2026-10-25T00:31:05.999Z', source: 'event', delay: 45,
      lat: 45.7512345678, lon: -4.5, gps: true, vehicle: 'bus-1', driver: 'drv\t1', doorsIn: [3, 0], doorsOut: [0, 2] }),
    stop(2, { id: '=S2', name: '=HYPERLINK("x");\r\nzwei', arrival: '2026-10-25T00:59:59Z', departure: '2026-10-25T01:00:00Z', actual: null, stopLat: -0.000001, stopLon: 179.999999,
      gps: false, doorsIn: [1], doorsOut: [null] }),
    stop(3, { name: 'Hôtel de ville — 終点', arrival: '2026-10-25T01:30:00Z', departure: null, actual: '2026-10-25T01:29:00Z', source: 'position', delay: -60, lat: 1e-7, lon: 12,
      gps: null, vehicle: 'bus\\2', doorsIn: [0, 0, 7], doorsOut: [1, 1, 1] }),
  ]);
  // A trip with no route, no start time, no scheduled end: never over by the clock, pending stops.
  await insertTrip({ date: '2026-10-26', trip: 'P-1', route: null, direction: null, block: null, start: null, startAt: '2026-10-26T06:00:00Z', endAt: null, endReported: false,
    lastPassed: 1, vehicles: [], drivers: [] }, [
    stop(1, { name: null, arrival: '2026-10-26T06:00:00Z', departure: '2026-10-26T06:00:00Z', actual: '2026-10-26T06:00:00Z', source: 'event', delay: 0, vehicle: 'bus-1' }),
    stop(2, { name: '-', arrival: '2026-10-26T06:10:00Z', departure: '2026-10-26T06:10:00Z' }),
    stop(4, { name: '', arrival: '2026-10-26T06:20:00Z', departure: '2026-10-26T06:20:00Z', stopLat: null, stopLon: null }),
  ]);
  // Over 1 h after its scheduled end (07:10Z + 1 h < NOW): the stops not passed are missed.
  await insertTrip({ date: '2026-10-26', trip: 'O@1', route: 'R2', direction: 0, block: 'B2', start: 25200, startAt: '2026-10-26T07:00:00Z', endAt: '2026-10-26T07:10:00Z',
    endReported: false, lastPassed: null, vehicles: ['bus\\2'], drivers: [] }, [
    stop(1, { arrival: '2026-10-26T07:00:00Z', departure: '2026-10-26T07:00:00Z', doorsIn: [2], doorsOut: [2] }),
    stop(2, { arrival: '2026-10-26T07:10:00Z', departure: '2026-10-26T07:10:00Z' }),
  ]);
  // Another day's trip outside the period, and a trip of another team only the admin sees.
  await insertTrip({ date: '2026-10-27', trip: 'X', route: 'R', direction: 0, block: null, start: 0, startAt: '2026-10-27T00:00:00Z', endAt: null, endReported: false,
    lastPassed: null, vehicles: [], drivers: [] }, [stop(1)]);
});

afterAll(async () => {
  await t?.close();
});

const get = async (who: TestUser, name: string) => {
  const res = await inject(t, { url: `/api/v4/groups/${g}/export/${name}?start_date=2026-10-24&end_date=2026-10-26`, headers: who.auth });
  expect(res.status, res.body).toBe(200);
  return res.body;
};

describe('tracking exports, byte for byte', () => {
  it('export/trip-tracking', async () => {
    expect(await get(admin, 'trip-tracking')).toBe(TRIP_TRACKING);
  });

  it('export/vehicle-exploitation', async () => {
    expect(await get(admin, 'vehicle-exploitation')).toBe(VEHICLE_EXPLOITATION);
  });

  it('a team-scoped reader sees the trips of its team\'s vehicles only', async () => {
    const lines = TRIP_TRACKING.split('\r\n');
    expect(await get(reader, 'trip-tracking')).toBe([...lines.slice(0, 5), ''].join('\r\n')); // header + N1 (a record of two lines)
  });
});

const TRIP_TRACKING = [
  "service_date;trip_id;route_id;start_time;stop_sequence;stop_id;stop_name;scheduled_arrival;scheduled_departure;actual_time;delay_seconds;source;status;vehicle_id;driver_id;boardings;alightings",
  "2026-10-25;N1;\"R;1\";23:30:00;1;S1;Gare\tcentrale \\ nord;2026-10-25T02:30:00+02:00;2026-10-25T02:30:20+02:00;2026-10-25T02:31:05+02:00;45;event;passed;bus-1;drv\t1;3;2",
  "2026-10-25;N1;\"R;1\";23:30:00;2;'=S2;\"'=HYPERLINK(\"\"x\"\");",
  "zwei\";2026-10-25T02:59:59+02:00;2026-10-25T02:00:00+01:00;;;;missed;;;1;0",
  "2026-10-25;N1;\"R;1\";23:30:00;3;S3;Hôtel de ville — 終点;2026-10-25T02:30:00+01:00;;2026-10-25T02:29:00+01:00;-60;position;passed;bus\\2;;7;3",
  "2026-10-26;O@1;R2;07:00:00;1;S1;Stop 1;2026-10-26T08:00:00+01:00;2026-10-26T08:00:00+01:00;;;;missed;;;2;2",
  "2026-10-26;O@1;R2;07:00:00;2;S2;Stop 2;2026-10-26T08:10:00+01:00;2026-10-26T08:10:00+01:00;;;;missed;;;0;0",
  "2026-10-26;P-1;;;1;S1;;2026-10-26T07:00:00+01:00;2026-10-26T07:00:00+01:00;2026-10-26T07:00:00+01:00;0;event;passed;bus-1;;0;0",
  "2026-10-26;P-1;;;2;S2;'-;2026-10-26T07:10:00+01:00;2026-10-26T07:10:00+01:00;;;;pending;;;0;0",
  "2026-10-26;P-1;;;4;S4;;2026-10-26T07:20:00+01:00;2026-10-26T07:20:00+01:00;;;;pending;;;0;0",
].join('\r\n') + '\r\n';
const VEHICLE_EXPLOITATION = [
  "fileId;unitId;drivingMode;stopId;arrivalTime;departureTime;SAEvalidity;journey;journeyType;line;trip;tripDirection;vehicleService;stationOrigin;stationDestination;station;stationCode;stationIndex;stationType;GPSvalidity;latitude;longitude;PORTE_01_validity;PORTE_01_adults_in;PORTE_01_adults_out;PORTE_02_validity;PORTE_02_adults_in;PORTE_02_adults_out;PORTE_03_validity;PORTE_03_adults_in;PORTE_03_adults_out",
  "bus-1_20261025;bus-1;commercial;S1;2026-10-25T02:31:05+02:00;2026-10-25T02:31:05+02:00;1;20261025_N1;commercial;\"R;1\";N1;1;\"B\"\"1\";S1;S3;Gare\tcentrale \\ nord;S1;1;first;1;45,7512345678;-4,5;1;3;0;1;0;2;0;0;0",
  "bus-1_20261025;bus-1;commercial;'=S2;;;0;20261025_N1;commercial;\"R;1\";N1;1;\"B\"\"1\";S1;S3;\"'=HYPERLINK(\"\"x\"\");",
  "zwei\";'=S2;2;intermediate;0;-0,000001;179,999999;1;1;;0;0;0;0;0;0",
  "bus\\2_20261025;bus\\2;commercial;S3;2026-10-25T02:29:00+01:00;2026-10-25T02:29:00+01:00;1;20261025_N1;commercial;\"R;1\";N1;1;\"B\"\"1\";S1;S3;Hôtel de ville — 終点;S3;3;last;0;1e-7;12;1;0;1;1;0;1;1;7;1",
  "bus\\2_20261026;bus\\2;commercial;S1;;;0;20261026_O@1;commercial;R2;O@1;0;B2;S1;S2;Stop 1;S1;1;first;0;45,75;4,85;1;2;2;0;0;0;0;0;0",
  "bus\\2_20261026;bus\\2;commercial;S2;;;0;20261026_O@1;commercial;R2;O@1;0;B2;S1;S2;Stop 2;S2;2;last;0;45,75;4,85;0;0;0;0;0;0;0;0;0",
  "bus-1_20261026;bus-1;commercial;S1;2026-10-26T07:00:00+01:00;2026-10-26T07:00:00+01:00;1;20261026_P-1;commercial;;P-1;;;S1;S4;;S1;1;first;0;45,75;4,85;0;0;0;0;0;0;0;0;0",
  "_20261026;;commercial;S2;;;0;20261026_P-1;commercial;;P-1;;;S1;S4;'-;S2;2;intermediate;0;45,75;4,85;0;0;0;0;0;0;0;0;0",
  "_20261026;;commercial;S4;;;0;20261026_P-1;commercial;;P-1;;;S1;S4;;S4;4;last;0;;;0;0;0;0;0;0;0;0;0",
].join('\r\n') + '\r\n';
