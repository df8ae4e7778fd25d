import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { badItem, item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';

let t: TestApp;
let g: string;
let operator: TestUser;
beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
  operator = await newUser(t, { groupId: g, role: 'operator' });
});
afterAll(async () => t?.close());

const at = (hhmm: string) => new Date(`2026-03-10T${hhmm}:00+01:00`);

describe('device reports', () => {
  it('open a duty by driver code, record a trip and close the duty at sign-off', async () => {
    const driver = await newDriver(t, g, { code: '4711' });
    const bus = await newVehicle(t, g);
    const dev = await newDevice(t, g);
    const signOn = item('sign_on', at('06:00'), { driver_code: '4711', vehicle_id: bus, odometer_km: 120500, info: { app_version: '3.2.0' } });
    const r = await send(t, g, dev.auth, [
      signOn,
      item('trip_start', at('06:10'), { trip_id: 'T1', service_date: '2026-03-10' }),
      item('trip_event', at('06:11'), { trip_id: 'T1', service_date: '2026-03-10', event: 'departure', stop_id: 'S1', stop_sequence: 1, lat: 45.75, lon: 4.85, gps_valid: true }),
      item('position', at('06:12'), { lat: 45.751, lon: 4.851, gps_valid: true, trip_id: 'T1', service_date: '2026-03-10' }),
      item('trip_end', at('06:40'), { trip_id: 'T1', service_date: '2026-03-10' }),
      item('sign_off', at('07:00'), { non_commercial_km: 3.5, odometer_km: 120540 }),
    ]);
    expect(r.status).toBe(200);
    expect(r.json.complete).toBe(true);
    expect(r.json.accepted).toHaveLength(6);
    expect(r.json.duties).toHaveLength(1);
    const dutyId = r.json.duties[0].duty_id;
    expect(r.json.duties[0].id).toBe(signOn.id);

    const duty = await inject(t, { url: `/api/v4/groups/${g}/duties/${dutyId}`, headers: operator.auth });
    expect(duty.status).toBe(200);
    expect(duty.json).toMatchObject({
      duty_id: dutyId, device_id: dev.deviceId, driver_id: driver, vehicle_id: bus,
      signed_on_at: at('06:00').toISOString(), signed_off_at: at('07:00').toISOString(), end_reason: 'sign_off', non_commercial_km: 3.5,
      trips: [{ trip_id: 'T1', service_date: '2026-03-10', started_at: at('06:10').toISOString(), ended_at: at('06:40').toISOString() }],
    });
    expect(duty.json.sign_on.odometer_km).toBe(120500);
    expect(duty.json.sign_on.info).toEqual({ app_version: '3.2.0' });

    const events = await inject(t, { url: `/api/v4/groups/${g}/trip-events?start_date=2026-03-10&end_date=20260310`, headers: operator.auth });
    expect(events.json).toEqual([expect.objectContaining({ trip_id: 'T1', event: 'departure', stop_id: 'S1', duty_id: dutyId, driver_id: driver, vehicle_id: bus, gps_valid: true })]);
    const who = await inject(t, { url: `/api/v4/groups/${g}/duties?start_date=2026-03-01&end_date=2026-03-31&vehicle_id=${bus}&at=${Math.floor(at('06:30').getTime() / 1000)}`, headers: operator.auth });
    expect(who.json.map((d: any) => d.driver_id)).toEqual([driver]);
    const nobody = await inject(t, { url: `/api/v4/groups/${g}/duties?start_date=2026-03-01&end_date=2026-03-31&vehicle_id=${bus}&at=${Math.floor(at('07:30').getTime() / 1000)}`, headers: operator.auth });
    expect(nobody.json).toEqual([]);
  });

  it('reject bad items one by one and keep the good ones', async () => {
    const bus = await newVehicle(t, g);
    const dev = await newDevice(t, g);
    const good = item('position', at('08:00'), { lat: 45.7, lon: 4.8, gps_valid: true });
    const r = await send(t, g, dev.auth, [
      good,
      item('position', at('08:01'), { lat: 200, lon: 4.8, gps_valid: true }),
      { id: 'x', type: 'teleport', at: at('08:02').toISOString() },
      item('sign_on', at('08:03'), { driver_code: 'nobody', vehicle_id: bus }),
      badItem('trip_event', at('08:04'), { trip_id: 'T', service_date: '2026-03-10', event: 'departure', gps_valid: true, colour: 'red' }),
      { ...item('position', at('08:05'), { lat: 45, lon: 4, gps_valid: true }), id: 'not-a-uuid' },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.accepted).toEqual([good.id]);
    expect(r.json.complete).toBe(false);
    const reasons = Object.fromEntries(r.json.rejected.map((x: any) => [x.index, x.errors.map((e: any) => e.loc.join('.'))]));
    expect(reasons).toEqual({ 1: ['lat'], 2: ['type'], 3: ['driver_code'], 4: ['colour'], 5: ['id'] });
    const stored = await t.db.query('SELECT client_id FROM positions WHERE group_id = $1 AND device_id = $2', [g, dev.deviceId]);
    expect(stored).toEqual([{ client_id: good.id }]);
  });

  it('acknowledge a retried item without storing it twice', async () => {
    const dev = await newDevice(t, g);
    const items = [item('position', at('09:00'), { lat: 45.7, lon: 4.8, gps_valid: true }), item('device_state', at('09:00'), { state: { battery_pct: 80 } })];
    const first = await send(t, g, dev.auth, items);
    const again = await send(t, g, dev.auth, [...items, items[0]]);
    expect(first.json.accepted).toHaveLength(2);
    expect(again.json.accepted).toEqual([]);
    expect(again.json.duplicates.sort()).toEqual([items[0]!.id, items[0]!.id, items[1]!.id].sort());
    const n = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM positions WHERE device_id = $1', [dev.deviceId]);
    expect(n[0]!.n).toBe(1);
  });

  it('close the open duty when the device signs on again', async () => {
    const d1 = await newDriver(t, g);
    const d2 = await newDriver(t, g);
    const bus = await newVehicle(t, g);
    const dev = await newDevice(t, g);
    await send(t, g, dev.auth, [item('sign_on', at('10:00'), { driver_id: d1, vehicle_id: bus })]);
    const second = await send(t, g, dev.auth, [item('sign_on', at('12:00'), { driver_id: d2, vehicle_id: bus })]);
    const duties = await inject(t, { url: `/api/v4/groups/${g}/duties?start_date=2026-03-10&end_date=2026-03-10&device_id=${dev.deviceId}`, headers: operator.auth });
    expect(duties.json.map((d: any) => [d.driver_id, d.signed_off_at, d.end_reason])).toEqual([
      [d1, at('12:00').toISOString(), 'next_sign_on'],
      [d2, null, null],
    ]);
    const current = await inject(t, { url: `/api/v4/groups/${g}/device/duty`, headers: dev.auth });
    expect(current.json.duty_id).toBe(second.json.duties[0].duty_id);
  });

  it('accept writes only from a credential bound to a device of the group', async () => {
    const other = await newGroup(t);
    const dev = await newDevice(t, g);
    const driverUser = await newUser(t, { groupId: g, role: 'driver' });
    const p = [item('position', at('11:00'), { lat: 45, lon: 4, gps_valid: true })];
    const unbound = await send(t, g, driverUser.auth, p);
    expect(unbound.status).toBe(403);
    expect(unbound.json.code).toBe('DeviceCredentialRequired');
    expect((await send(t, other, dev.auth, p)).json.code).toBe('NoRole');
    expect((await send(t, g, operator.auth, p)).json.code).toBe('DeviceApiRoleRequired');
    const empty = await send(t, g, dev.auth, []);
    expect(empty.status).toBe(422);
  });

  it('restrict duties to the caller\'s teams', async () => {
    const north = await newTeam(t, g);
    const south = await newTeam(t, g);
    const dn = await newDriver(t, g, { teams: [north] });
    const vn = await newVehicle(t, g, { teams: [north] });
    const ds = await newDriver(t, g, { teams: [south] });
    const vs = await newVehicle(t, g, { teams: [south] });
    const dev1 = await newDevice(t, g);
    const dev2 = await newDevice(t, g);
    const n = await send(t, g, dev1.auth, [item('sign_on', '2026-04-01T08:00:00Z', { driver_id: dn, vehicle_id: vn })]);
    const s = await send(t, g, dev2.auth, [item('sign_on', '2026-04-01T08:00:00Z', { driver_id: ds, vehicle_id: vs })]);
    const northReader = await newUser(t, { groupId: g, role: 'reader', teams: [north] });
    const list = await inject(t, { url: `/api/v4/groups/${g}/duties?start_date=2026-04-01&end_date=2026-04-01`, headers: northReader.auth });
    expect(list.json.map((d: any) => d.duty_id)).toEqual([n.json.duties[0].duty_id]);
    const forbidden = await inject(t, { url: `/api/v4/groups/${g}/duties/${s.json.duties[0].duty_id}`, headers: northReader.auth });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.code).toBe('ForbiddenDifferentTeam');
  });

  it('pages long lists with a Link header', async () => {
    const dev = await newDevice(t, g);
    const events = Array.from({ length: 25 }, (_, i) => item('trip_event', new Date(Date.UTC(2026, 4, 2, 8, 0, i)), { trip_id: 'P1', service_date: '2026-05-02', event: 'stop_passed', stop_sequence: i, gps_valid: true }));
    await send(t, g, dev.auth, events);
    const seen: number[] = [];
    let url: string | undefined = `/api/v4/groups/${g}/trip-events?start_date=2026-05-02&end_date=2026-05-02&limit=10`;
    while (url) {
      const r = await inject(t, { url, headers: operator.auth });
      expect(r.status).toBe(200);
      seen.push(...r.json.map((e: any) => e.stop_sequence));
      url = /<([^>]+)>; rel="next"/.exec(String(r.headers['link'] ?? ''))?.[1];
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => i));
    const bad = await inject(t, { url: `/api/v4/groups/${g}/trip-events?start_date=2026-05-02&end_date=2026-05-02&cursor=garbage`, headers: operator.auth });
    expect(bad.status).toBe(422);
    const long = await inject(t, { url: `/api/v4/groups/${g}/trip-events?start_date=2026-01-01&end_date=2026-03-01`, headers: operator.auth });
    expect(long.json.detail[0].loc).toEqual(['query', 'end_date']);
  });
});
