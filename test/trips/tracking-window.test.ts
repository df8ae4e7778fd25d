/**
 * The reports a trip of a service date is computed from are those dated within its window,
 * [start of the service day − 1 h, start of the service day + 48 h) (tracking/round.ts,
 * reportWindow; docs/tracking.md): the reads are bounded so PostgreSQL reads only the partitions
 * of positions that can hold them. 2026-03-02 in Europe/Paris: the service day starts at
 * 2026-03-01T23:00:00Z, so the window is [2026-03-01T22:00:00Z, 2026-03-03T23:00:00Z).
 * Distances: 0.001° of latitude = 0.111 km at 48.85°N (S1 → S3 = 2.224 km).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { trackingOf } from '../../src/domains/trips/tracking.js';
import { reportWindow } from '../../src/domains/trips/tracking/round.js';
import { serviceDayStart } from '../../src/platform/time.js';
import { newGroup, setup, type TestApp } from '../helpers/app.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { importZip, minimalZip } from '../helpers/gtfs.js';

const DATE = '2026-03-02';
const FEED = {
  'stops.txt': 'stop_id,stop_name,stop_lat,stop_lon\nS1,First,48.850,2.35\nS2,Second,48.860,2.35\nS3,Third,48.870,2.35\n',
  'trips.txt': 'route_id,service_id,trip_id,trip_headsign,direction_id,block_id,shape_id\nR1,WK,T1,Third,0,B1,SH1\n',
  'shapes.txt': 'shape_id,shape_pt_lat,shape_pt_lon,shape_pt_sequence\nSH1,48.850,2.35,1\nSH1,48.870,2.35,2\n',
  'stop_times.txt': 'trip_id,arrival_time,departure_time,stop_id,stop_sequence\nT1,08:00:00,08:00:00,S1,1\nT1,08:10:00,08:11:00,S2,2\nT1,08:20:00,08:20:00,S3,3\n',
};

let t: TestApp;
let g: string;
beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
  await importZip(t, g, minimalZip(FEED), { publish: true });
});
afterAll(async () => t?.close());

it('counts the reports dated within [service day start − 1 h, + 48 h) and ignores those outside, to the second', async () => {
  expect(reportWindow(serviceDayStart(DATE, 'Europe/Paris'))).toEqual({ from: new Date('2026-03-01T22:00:00Z'), until: new Date('2026-03-03T23:00:00Z') });
  const ref = { trip_id: 'T1', service_date: DATE };
  const inside = await newDevice(t, g);
  const outside = await newDevice(t, g);
  for (const d of [inside, outside]) {
    const signOn = item('sign_on', '2026-03-01T20:00:00Z', { driver_id: await newDriver(t, g), vehicle_id: await newVehicle(t, g) });
    expect((await send(t, g, d.auth, [signOn])).json.complete).toBe(true);
  }
  const fix = (at: string, lat: number, lon = 2.35) => item('position', at, { ...ref, lat, lon, gps_valid: true });
  // The trip itself: S1 → S3 from 07:01 to 07:21Z, a fix a minute, 0.001° north each (2.224 km).
  const driven = Array.from({ length: 21 }, (_, k) => fix(new Date(Date.parse(`${DATE}T07:01:00Z`) + k * 60_000).toISOString(), 48.85 + 0.001 * k));
  const r = await send(t, g, inside.auth, [
    fix('2026-03-01T22:00:00Z', 48.85), // the first instant of the window, at S1: counted (the start)
    ...driven,
    fix('2026-03-03T22:59:59Z', 48.87), // the last second of the window, at S3: counted (the end)
  ]);
  expect(r.json.complete).toBe(true);
  // Just outside, 50 km away: counted, they would add off-itinerary km, an earlier start, a later end, a device.
  const o = await send(t, g, outside.auth, [fix('2026-03-01T21:59:59Z', 49.3, 2.9), fix('2026-03-03T23:00:00Z', 49.3, 2.9)]);
  expect(o.json.complete).toBe(true);

  const [trip] = await trackingOf(t.db, g, DATE, ['T1'], { now: new Date('2026-03-05T00:00:00Z') });
  expect(trip).toMatchObject({ recorded: true, started_at: '2026-03-01T22:00:00.000Z', ended_at: '2026-03-03T22:59:59.000Z', device_ids: [inside.deviceId] });
  expect(trip!.km).toMatchObject({ vk: 2.224, off_itinerary_km: 0 });
});
