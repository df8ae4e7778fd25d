/**
 * Regression tests of the audit's item 9e (issue #15): an open live stream kept the authorization
 * it had when it opened. A removed membership, a role no longer allowed, a logout and narrowed
 * teams now reach open streams within seconds (the change feed), long before the heartbeat.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { closeOf, subscribe, type Stream } from '../helpers/live.js';

const clock = fixedClock('2026-03-10T07:00:00Z');
let t: TestApp;
let g: string;
let admin: TestUser;
const open: Stream[] = [];
beforeAll(async () => {
  // A heartbeat far away: what closes or re-filters a stream here is the change feed, not the heartbeat's check.
  t = await setup({ clock, config: { live: { allowedOrigins: [], maxBufferedBytes: 1_048_576, heartbeatMs: 600_000, authTimeoutMs: 5000, batchMs: 50 } } });
  g = await newGroup(t);
  admin = await newUser(t, { groupId: g, role: 'admin' });
});
afterAll(async () => {
  for (const s of open) s.ws.close();
  await t?.close();
});

const sub = async (headers: Record<string, string>) => {
  const s = await subscribe(t.app, g, headers);
  open.push(s);
  return s;
};

describe('an open live stream keeps the authorization it had when it opened', () => {
  it('a removed membership closes the stream with 4403 NoRole', async () => {
    const reader = await newUser(t, { groupId: g, role: 'reader' });
    const s = await sub(reader.auth);
    const removed = await inject(t, { method: 'DELETE', url: `/api/v4/groups/${g}/users/${reader.userId}`, headers: admin.auth });
    expect(removed.status).toBe(204);
    expect(await closeOf(s)).toEqual({ code: 4403, reason: 'NoRole' });
    expect(s.received.at(-1)).toMatchObject({ type: 'error', data: { code: 'NoRole' } });
  });

  it('a role changed to one that may not subscribe closes the stream with 4403 and the role error', async () => {
    const reader = await newUser(t, { groupId: g, role: 'reader' });
    const s = await sub(reader.auth);
    expect((await inject(t, { method: 'PATCH', url: `/api/v4/groups/${g}/users/${reader.userId}`, headers: admin.auth, payload: { role: 'driver' } })).status).toBe(200);
    expect(await closeOf(s)).toEqual({ code: 4403, reason: 'SubscribeEventsRoleRequired' });
  });

  it('a logout closes the stream with 4401 without waiting for the heartbeat', async () => {
    const reader = await newUser(t, { groupId: g, role: 'reader' });
    const s = await sub(reader.auth);
    expect((await inject(t, { url: '/api/v4/logout', headers: reader.auth })).status).toBe(204);
    expect(await closeOf(s)).toEqual({ code: 4401, reason: 'Unauthenticated' });
  });

  it('narrowed teams stop the delivery of the removed team\'s messages, the stream staying open', async () => {
    const north = await newTeam(t, g);
    const south = await newTeam(t, g);
    const user = await newUser(t, { groupId: g, role: 'reader', teams: [north, south] });
    const s = await sub(user.auth);
    const northBus = await newVehicle(t, g, { teams: [north] });
    const southBus = await newVehicle(t, g, { teams: [south] });
    const driver = await newDriver(t, g);
    const dev = await newDevice(t, g);

    // One report: a south duty and its position, then a north duty and its position. The items of
    // a report reach a client in one frame, in order: when the north position arrives, the south
    // one came before it or was not for this client.
    let minute = 0;
    const round = async () => {
      const base = Date.parse('2026-03-10T08:00:00Z') + 60_000 * minute++;
      const at = (seconds: number) => new Date(base + seconds * 1000);
      const onSouth = item('sign_on', at(0), { driver_id: driver, vehicle_id: southBus });
      const south = item('position', at(10), { lat: 45.7, lon: 4.8, gps_valid: true });
      const onNorth = item('sign_on', at(20), { driver_id: driver, vehicle_id: northBus });
      const north = item('position', at(30), { lat: 45.8, lon: 4.9, gps_valid: true });
      const r = await send(t, g, dev.auth, [onSouth, south, onNorth, north]);
      expect(r.json.complete, JSON.stringify(r.json)).toBe(true);
      for (;;) {
        const m = await s.next('vehicle_position');
        if (m.data['id'] === north.id) break;
      }
      return s.received.some((m) => m.type === 'vehicle_position' && m.data['id'] === south.id);
    };
    expect(await round()).toBe(true);

    const patched = await inject(t, { method: 'PATCH', url: `/api/v4/groups/${g}/users/${user.userId}`, headers: admin.auth, payload: { teams: [north] } });
    expect(patched.status).toBe(200);
    const deadline = Date.now() + 20_000;
    while (await round()) {
      if (Date.now() > deadline) throw new Error('the south team\'s messages were still delivered');
    }
    // From then on, none of the south team's messages are delivered, and the stream is open.
    expect(await round()).toBe(false);
    expect(await round()).toBe(false);
    expect(s.ws.readyState).toBe(s.ws.OPEN);
  });
});
