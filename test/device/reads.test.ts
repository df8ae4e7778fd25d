import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIVE_CHANNEL, readLiveNotices } from '../../src/domains/device/live.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';

let t: TestApp;
let g: string;
let operator: TestUser;
let dev: Awaited<ReturnType<typeof newDevice>>;
let bus: string;
beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
  operator = await newUser(t, { groupId: g, role: 'operator' });
  dev = await newDevice(t, g);
  bus = await newVehicle(t, g);
  const driver = await newDriver(t, g);
  await send(t, g, dev.auth, [item('sign_on', '2026-07-01T05:00:00Z', { driver_id: driver, vehicle_id: bus })]);
});
afterAll(async () => t?.close());

const movement = (block: string | undefined, date: string, start: string) =>
  item('vehicle_movement', start, {
    kind: 'to_trip_start', service_date: date, ...(block ? { block_id: block } : {}),
    origin: { depot_id: 'D1', label: 'North depot' }, destination: { stop_id: 'S1' }, started_at: start, ended_at: new Date(Date.parse(start) + 900_000).toISOString(), distance_km: 5.2,
  });

describe('vehicle movements', () => {
  it('answer whether the group holds any movement at all', async () => {
    expect((await inject(t, { url: `/api/v4/groups/${g}/vehicle-movements/any`, headers: operator.auth })).json).toEqual({ any: false });
    await send(t, g, dev.auth, [movement('B1', '2026-07-01', '2026-07-01T05:10:00Z'), movement('B2', '2026-07-01', '2026-07-01T09:00:00Z'), movement(undefined, '2026-07-02', '2026-07-02T05:10:00Z')]);
    expect((await inject(t, { url: `/api/v4/groups/${g}/vehicle-movements/any`, headers: operator.auth })).json).toEqual({ any: true });
  });

  it('are read by day, by block in both spellings, over a period and one by one', async () => {
    const day = await inject(t, { url: `/api/v4/groups/${g}/vehicle-movements?date=2026-07-01`, headers: operator.auth });
    expect(day.json.map((m: any) => m.block_id)).toEqual(['B1', 'B2']);
    expect(day.json[0]).toMatchObject({ kind: 'to_trip_start', vehicle_id: bus, origin: { depot_id: 'D1', label: 'North depot' }, distance_km: 5.2 });
    for (const spelling of ['vehicle-movements', 'vehicle_movements']) {
      const block = await inject(t, { url: `/api/v4/groups/${g}/blocks/B2/${spelling}?date=20260701`, headers: operator.auth });
      expect(block.json.map((m: any) => m.block_id)).toEqual(['B2']);
    }
    const periodList = await inject(t, { url: `/api/v4/groups/${g}/vehicle_movements?start_date=2026-07-01&end_date=2026-07-02`, headers: operator.auth });
    expect(periodList.json).toHaveLength(3);
    const one = await inject(t, { url: `/api/v4/groups/${g}/vehicle-movements/${day.json[0].vehicle_movement_id}`, headers: operator.auth });
    expect(one.json).toEqual(day.json[0]);
    expect((await inject(t, { url: `/api/v4/groups/${g}/vehicle-movements/nope`, headers: operator.auth })).json.code).toBe('VehicleMovementNotFound');
  });
});

describe('danger zones', () => {
  it('are declared by operators, listed, and fetched by devices around a position', async () => {
    const create = (body: object) => inject(t, { method: 'POST', url: `/api/v4/groups/${g}/danger-zones`, headers: operator.auth, payload: body });
    const school = await create({ name: 'School', lat: 45.76, lon: 4.84, radius_m: 150, message: 'School exit: slow down' });
    expect(school.status).toBe(201);
    await create({ name: 'Far away', lat: 48.85, lon: 2.35, radius_m: 200, message: 'Paris' });
    await create({ name: 'Expired works', lat: 45.761, lon: 4.841, radius_m: 50, message: 'Works', active_from: '2020-01-01T00:00:00Z', active_to: '2020-02-01T00:00:00Z' });
    const bad = await create({ name: 'x', lat: 45, lon: 4, radius_m: 10, message: 'y', active_from: '2026-02-01T00:00:00Z', active_to: '2026-01-01T00:00:00Z' });
    expect(bad.json.detail[0].loc).toEqual(['body', 'active_to']);
    expect((await create({ name: 'x', lat: 95, lon: 4, radius_m: 10, message: 'y' })).json.detail[0].loc).toEqual(['body', 'lat']);

    const list = await inject(t, { url: `/api/v4/groups/${g}/danger-zones`, headers: operator.auth });
    expect(list.json.map((z: any) => z.name)).toEqual(['Expired works', 'Far away', 'School']);
    const near = await inject(t, { url: `/api/v4/groups/${g}/device/danger-zones?lat=45.765&lon=4.84&radius_m=1000`, headers: dev.auth });
    expect(near.status).toBe(200);
    expect(near.json.map((z: any) => z.name)).toEqual(['School']);
    // 0.005° of latitude is about 556 m; the zone edge is 150 m nearer
    expect(near.json[0].distance_m).toBeGreaterThan(390);
    expect(near.json[0].distance_m).toBeLessThan(420);

    const archived = await inject(t, { method: 'PATCH', url: `/api/v4/groups/${g}/danger-zones/${school.json.danger_zone_id}`, headers: operator.auth, payload: { archived: true } });
    expect(archived.json.archived).toBe(true);
    expect((await inject(t, { url: `/api/v4/groups/${g}/device/danger-zones?lat=45.765&lon=4.84`, headers: dev.auth })).json).toEqual([]);
  });
});

describe('live publication', () => {
  it('publishes every accepted report on the live channel', async () => {
    const heard: any[] = [];
    const stop = await t.db.listen(LIVE_CHANNEL, (p) => heard.push(...readLiveNotices(p)));
    const p = item('position', '2026-07-01T06:00:00Z', { lat: 45.7, lon: 4.8, gps_valid: true });
    await send(t, g, dev.auth, [p, { id: 'bad', type: 'position' }]);
    for (let i = 0; i < 50 && heard.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await stop();
    expect(heard).toEqual([{ group_id: g, device_id: dev.deviceId, items: [{ type: 'position', item: p }] }]);
  });
});
