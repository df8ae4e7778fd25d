import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { importZip } from '../helpers/gtfs.js';
import { smallNetworkZip } from '../simulate/feed.js';

describe('GET /groups/{g}/schedule: the published schedule of a service day', () => {
  let t: TestApp;
  let g: string;
  let reader: TestUser;
  beforeAll(async () => {
    t = await setup({ clock: fixedClock('2026-11-23T06:00:00+01:00') });
    g = await newGroup(t);
    reader = await newUser(t, { groupId: g, role: 'reader' });
    await importZip(t, g, smallNetworkZip(), { publish: true });
  }, 60_000);
  afterAll(() => t.close());

  const get = (query: string) => inject(t, { url: `/api/v4/groups/${g}/schedule?${query}`, headers: reader.auth });

  it('lists the trips of a weekday with block, shape and every stop time, the stops they call at and their shapes', async () => {
    const res = await get('date=2026-11-23');
    expect(res.status).toBe(200);
    const s = res.json;
    expect(s).toMatchObject({ service_date: '2026-11-23', timezone: 'Europe/Paris', day_type: 'weekday', day_start: '2026-11-22T23:00:00.000Z' });
    expect(s.trips.map((x: { trip_id: string }) => x.trip_id)).toEqual(['T1', 'T3', 'T2']);
    const t2 = s.trips.find((x: { trip_id: string }) => x.trip_id === 'T2');
    expect(t2).toMatchObject({ route_id: 'R1', block_id: 'B1', shape_id: 'BACK', direction_id: 1, start_time: '08:30:00', first_departure: 8.5 * 3600, last_arrival: 8.5 * 3600 + 21 * 60 });
    expect(t2.stop_times.stop_id).toEqual(['S4', 'S3', 'S2', 'S1']);
    expect(t2.stop_times.arrival).toEqual([30600, 31020, 31440, 31860]);
    expect(t2.stop_times.departure).toEqual([30600, 31050, 31470, 31860]);
    expect(s.trips.find((x: { trip_id: string }) => x.trip_id === 'T3').block_id).toBeNull();
    expect(s.stops.map((x: { stop_id: string }) => x.stop_id)).toEqual(['S1', 'S2', 'S3', 'S4']);
    expect(s.shapes.map((x: { shape_id: string; lat: number[] }) => [x.shape_id, x.lat.length])).toEqual([['BACK', 16], ['OUT', 16]]);
  });

  it('keeps the routes asked and the trips running in the window, and leaves shapes out on request', async () => {
    const byRoute = (await get('date=20261123&route_id=R2')).json;
    expect(byRoute.trips.map((x: { trip_id: string }) => x.trip_id)).toEqual(['T3']);
    const window = (await get('date=2026-11-23&from=08:22:00&to=08:40:00&include_shapes=false')).json;
    expect(window.trips.map((x: { trip_id: string }) => x.trip_id)).toEqual(['T3', 'T2']);
    expect(window.shapes).toEqual([]);
  });

  it('answers no trips on a day no service runs (a Sunday), with its day type', async () => {
    const s = (await get('date=2026-11-22')).json;
    expect(s).toMatchObject({ day_type: 'sunday', trips: [], stops: [] });
  });

  it('refuses a window ending before it starts, and a bad date, with a 422 naming the field', async () => {
    const res = await get('date=2026-11-23&from=09:00:00&to=08:00:00');
    expect(res.status).toBe(422);
    expect(res.json.detail[0].loc).toEqual(['query', 'to']);
    const bad = await get('date=2026-1-23');
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(['query', 'date']);
  });

  it('needs a credential of the group', async () => {
    expect((await inject(t, { url: `/api/v4/groups/${g}/schedule?date=2026-11-23` })).status).toBe(401);
  });
});
