/**
 * What the live stream pushes: one envelope per stored fact, from real device reports through the
 * device API and real trip updates, with team scope per client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { importZip, minimalZip } from '../helpers/gtfs.js';
import { subscribe, type Stream } from '../helpers/live.js';

const clock = fixedClock('2026-03-10T07:00:00Z');
let t: TestApp;
let g: string;
let op: TestUser;
const open: Stream[] = [];
const sub = async (headers: Record<string, string>, groupId = g) => {
  const s = await subscribe(t.app, groupId, headers);
  open.push(s);
  return s;
};
beforeAll(async () => {
  t = await setup({ clock });
  g = await newGroup(t);
  op = await newUser(t, { groupId: g, role: 'operator' });
  await importZip(t, g, minimalZip(), { publish: true });
});
afterAll(async () => {
  for (const s of open) s.ws.close();
  await t?.close();
});

const at = (hhmm: string) => `2026-03-10T${hhmm}:00.000Z`;

describe('live stream messages', () => {
  it('push every kind of device report as an envelope, with the duty, driver and vehicle it is about', async () => {
    const stream = await sub(op.auth);
    const driver = await newDriver(t, g, { code: '77' });
    const bus = await newVehicle(t, g);
    const dev = await newDevice(t, g);
    const items = [
      item('sign_on', at('06:00'), { driver_code: '77', vehicle_id: bus }),
      item('trip_start', at('06:05'), { trip_id: 'T1', service_date: '2026-03-10' }),
      item('trip_event', at('06:06'), { trip_id: 'T1', service_date: '2026-03-10', event: 'departure', stop_id: 'S1', stop_sequence: 1, gps_valid: true }),
      item('position', at('06:07'), { lat: 48.851, lon: 2.351, gps_valid: true, speed_kmh: 22, trip_id: 'T1', service_date: '2026-03-10' }),
      item('passenger_count', at('06:08'), { trip_id: 'T1', service_date: '2026-03-10', stop_id: 'S1', door: 1, counts: [{ category: 'adults', boardings: 3, alightings: 0 }] }),
      item('device_state', at('06:09'), { state: { battery_pct: 80 } }),
      item('trip_end', at('06:30'), { trip_id: 'T1', service_date: '2026-03-10' }),
      item('sign_off', at('07:00'), { non_commercial_km: 2 }),
    ];
    const r = await send(t, g, dev.auth, items);
    expect(r.json.complete).toBe(true);
    const dutyId = r.json.duties[0].duty_id;
    const who = { device_id: dev.deviceId, duty_id: dutyId, driver_id: driver, vehicle_id: bus };

    const expected: [string, Record<string, unknown>][] = [
      ['duty_sign_on', { id: items[0]!.id, driver_code: '77', ...who }],
      ['trip_start', { id: items[1]!.id, trip_id: 'T1', service_date: '2026-03-10', ...who }],
      ['trip_event', { id: items[2]!.id, event: 'departure', stop_id: 'S1', stop_sequence: 1, gps_valid: true, ...who }],
      ['vehicle_position', { id: items[3]!.id, lat: 48.851, lon: 2.351, gps_valid: true, speed_kmh: 22, trip_id: 'T1', ...who }],
      ['passenger_count', { id: items[4]!.id, stop_id: 'S1', door: 1, counts: [{ category: 'adults', boardings: 3, alightings: 0 }], ...who }],
      ['device_state', { id: items[5]!.id, state: { battery_pct: 80 }, ...who }],
      ['trip_end', { id: items[6]!.id, trip_id: 'T1', ...who }],
      ['duty_sign_off', { id: items[7]!.id, non_commercial_km: 2, ...who }],
    ];
    for (const [i, [type, data]] of expected.entries()) {
      const m = await stream.next();
      expect(m).toMatchObject({ type, group_id: g, at: items[i]!.at, data });
      expect(m.data).not.toHaveProperty('type');
      expect(m.data).not.toHaveProperty('at');
    }

    // After the sign-off, the device's reports are about no duty: its provisioned vehicle (none here).
    await send(t, g, dev.auth, [item('device_state', at('07:05'), { state: { charging: true } })]);
    expect((await stream.next()).data).toMatchObject({ duty_id: null, driver_id: null, vehicle_id: null, device_id: dev.deviceId });

    // A retried report is acknowledged as a duplicate and not pushed again.
    const position = item('position', at('07:10'), { lat: 48.86, lon: 2.36, gps_valid: false });
    await send(t, g, dev.auth, [position]);
    await send(t, g, dev.auth, [position, item('device_state', at('07:11'), { state: { network: '4g' } })]);
    expect((await stream.next()).data.id).toBe(position.id);
    expect((await stream.next()).type).toBe('device_state');
  });

  it('push trip updates when recorded, ended early and removed', async () => {
    const stream = await sub(op.auth);
    const body = { update_id: 'live-cancel', kind: 'cancel', trip_id: 'T1', start_date: '2026-03-10', end_date: '2026-03-12' };
    expect((await inject(t, { method: 'PUT', url: `/api/v4/groups/${g}/trip-updates`, headers: op.auth, payload: body })).status).toBe(200);
    const put = await stream.next();
    expect(put).toMatchObject({ type: 'trip_update', group_id: g, at: clock.now().toISOString(), data: { action: 'put', update: { update_id: 'live-cancel', kind: 'cancel', trip_id: 'T1', status: 'in_force', end_date: '2026-03-12' } } });

    // The same PUT again is a retry: nothing new is pushed; the next message is the end.
    await inject(t, { method: 'PUT', url: `/api/v4/groups/${g}/trip-updates`, headers: op.auth, payload: body });
    await inject(t, { method: 'POST', url: `/api/v4/groups/${g}/trip-updates/live-cancel/end`, headers: op.auth, payload: { end_date: '2026-03-11' } });
    expect(await stream.next()).toMatchObject({ type: 'trip_update', data: { action: 'ended', update: { update_id: 'live-cancel', end_date: '2026-03-11' } } });

    await inject(t, { method: 'DELETE', url: `/api/v4/groups/${g}/trip-updates/live-cancel`, headers: op.auth });
    expect(await stream.next()).toMatchObject({ type: 'trip_update', data: { action: 'removed', update: { update_id: 'live-cancel', status: 'removed' } } });
  });

  it('send each client only what concerns its teams; trip updates to all', async () => {
    const north = await newTeam(t, g);
    const south = await newTeam(t, g);
    const northUser = await sub((await newUser(t, { groupId: g, role: 'reader', teams: [north] })).auth);
    const southUser = await sub((await newUser(t, { groupId: g, role: 'reader', teams: [south] })).auth);
    const everyone = await sub((await newUser(t, { groupId: g, role: 'reader' })).auth);

    // A north vehicle with a driver of no team: north and the whole group see it, south does not.
    const northBus = await newVehicle(t, g, { teams: [north] });
    const d1 = await newDevice(t, g);
    await send(t, g, d1.auth, [
      item('sign_on', at('08:00'), { driver_id: await newDriver(t, g), vehicle_id: northBus }),
      item('position', at('08:01'), { lat: 48.85, lon: 2.35, gps_valid: true }),
    ]);
    // A south driver on a vehicle of no team: south and the whole group see it.
    const d2 = await newDevice(t, g);
    const southDriver = await newDriver(t, g, { teams: [south] });
    await send(t, g, d2.auth, [item('sign_on', at('08:00'), { driver_id: southDriver, vehicle_id: await newVehicle(t, g) }), item('position', at('08:02'), { lat: 48.86, lon: 2.36, gps_valid: true })]);
    // A device with no duty and no team: only the whole group.
    const d3 = await newDevice(t, g);
    await send(t, g, d3.auth, [item('device_state', at('08:03'), { state: { battery_pct: 50 } })]);
    await inject(t, { method: 'PUT', url: `/api/v4/groups/${g}/trip-updates`, headers: op.auth, payload: { update_id: 'live-msg', kind: 'message', trip_id: 'T1', start_date: '2026-03-10', end_date: '2026-03-10', message: { header: 'Works' } } });

    const seen = async (s: Stream, n: number) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) {
        const m = await s.next();
        out.push(`${m.type} ${m.data['device_id'] ?? m.data['action']}`);
      }
      return out;
    };
    // Each device's messages in order; different devices and trip updates are not ordered among
    // themselves (they are dispatched independently, and publications are batched).
    const inOrder = (messages: string[], ...expected: string[][]) => {
      expect([...messages].sort()).toEqual(expected.flat().sort());
      for (const sequence of expected) expect(messages.filter((m) => sequence.includes(m))).toEqual(sequence);
    };
    const one = [`duty_sign_on ${d1.deviceId}`, `vehicle_position ${d1.deviceId}`];
    const two = [`duty_sign_on ${d2.deviceId}`, `vehicle_position ${d2.deviceId}`];
    inOrder(await seen(northUser, 3), one, ['trip_update put']);
    inOrder(await seen(southUser, 3), two, ['trip_update put']);
    inOrder(await seen(everyone, 6), one, two, [`device_state ${d3.deviceId}`], ['trip_update put']);
  });

  it('do not cross groups', async () => {
    const other = await newGroup(t);
    const here = await sub(op.auth);
    const dev = await newDevice(t, other);
    await send(t, other, dev.auth, [item('device_state', at('09:00'), { state: { battery_pct: 10 } })]);
    const mine = await newDevice(t, g);
    await send(t, g, mine.auth, [item('device_state', at('09:01'), { state: { battery_pct: 11 } })]);
    expect((await here.next()).data['device_id']).toBe(mine.deviceId);
  });
});
