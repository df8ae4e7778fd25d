/** The live stream under stress: slow clients, dead peers, and several instances on one database. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { buildApp } from '../../src/app.js';
import { createApiKey, revokeApiKey, hostPrincipal, wholeGroup } from '../../src/domains/auth/service.js';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { engine } from '../helpers/db.js';
import { connect, streamPath, subscribe, wrap, type Stream } from '../helpers/live.js';

let t: TestApp;
let g: string;
let reader: TestUser;
beforeAll(async () => {
  t = await setup({ config: { live: { allowedOrigins: [], maxBufferedBytes: 4096, heartbeatMs: 600_000, authTimeoutMs: 5000, batchMs: 50 } } });
  g = await newGroup(t);
  reader = await newUser(t, { groupId: g, role: 'reader' });
});
afterAll(async () => t?.close());

const at = (s: number) => new Date(Date.UTC(2026, 2, 10, 6, 0, s)).toISOString();

describe('live stream delivery', () => {
  it('sends by default one JSON array of envelopes per frame (a window of messages), and one envelope per frame with batch=false', async () => {
    const batched = await subscribe(t.app, g, reader.auth);
    const single = await subscribe(t.app, g, reader.auth, { batch: false });
    expect(batched.frames[0]).toEqual([expect.objectContaining({ type: 'subscribed', data: expect.objectContaining({ batch_ms: 50 }) })]);
    expect(single.frames[0]).toMatchObject({ type: 'subscribed', data: { batch_ms: null } });
    const dev = await newDevice(t, g);
    // One report: its items are dispatched one after the other, within one window.
    const items = [0, 1, 2].map((i) => item('device_state', at(600 + i), { state: { n: i } }));
    await send(t, g, dev.auth, items);
    for (const s of [batched, single]) for (const it of items) expect((await s.next('device_state')).data.id).toBe(it.id);
    expect(batched.frames.slice(1)).toEqual([items.map((it) => expect.objectContaining({ type: 'device_state', at: it.at, data: expect.objectContaining({ id: it.id }) }))]);
    expect(single.frames.slice(1)).toEqual(items.map((it) => expect.objectContaining({ type: 'device_state', data: expect.objectContaining({ id: it.id }) })));
    batched.ws.close();
    single.ws.close();
  });

  it('publishes reports stored at the same time (their notices share NOTIFY statements), each device in order', async () => {
    const stream = await subscribe(t.app, g, reader.auth);
    const devices = await Promise.all(Array.from({ length: 12 }, () => newDevice(t, g)));
    const sent = await Promise.all(devices.map(async (dev, i) => {
      const items = [0, 1].map((k) => item('position', at(800 + i * 2 + k), { lat: 48.85, lon: 2.35, gps_valid: true }));
      await send(t, g, dev.auth, [items[0]!]);
      await send(t, g, dev.auth, [items[1]!]);
      return items.map((it) => it.id);
    }));
    const got: string[] = [];
    while (got.length < 24) got.push((await stream.next('vehicle_position')).data.id as string);
    expect(new Set(got)).toEqual(new Set(sent.flat()));
    for (const [first, second] of sent) expect(got.indexOf(first!)).toBeLessThan(got.indexOf(second!));
    stream.ws.close();
  });

  it('gives the clients of one window what their teams allow, whichever batching they chose', async () => {
    const north = await newTeam(t, g);
    const south = await newTeam(t, g);
    const northUser = await newUser(t, { groupId: g, role: 'reader', teams: [north] });
    const streams = {
      north: await subscribe(t.app, g, northUser.auth),
      north2: await subscribe(t.app, g, northUser.auth),
      northSingle: await subscribe(t.app, g, northUser.auth, { batch: false }),
      south: await subscribe(t.app, g, (await newUser(t, { groupId: g, role: 'reader', teams: [south] })).auth),
      all: await subscribe(t.app, g, reader.auth),
      all2: await subscribe(t.app, g, reader.auth),
    };
    const onDuty = async (teams: string[]) => {
      const dev = await newDevice(t, g);
      await send(t, g, dev.auth, [item('sign_on', at(700), { driver_id: await newDriver(t, g), vehicle_id: await newVehicle(t, g, { teams }) })]);
      return dev;
    };
    const [n, s, none] = [await onDuty([north]), await onDuty([south]), await onDuty([])];
    const positions: { device: string; id: string }[] = [];
    for (const [i, dev] of [n, s, none, n].entries()) {
      const p = item('position', at(710 + i), { lat: 48.85, lon: 2.35, gps_valid: true });
      await send(t, g, dev.auth, [p]);
      positions.push({ device: dev.deviceId, id: p.id });
    }
    // Each device's messages reach a client in order, but two devices' messages may reach the group's
    // log in either order (their publications are independent). So a client has all it will ever get
    // of a device once it has a later "marker" position of that device. First the unrestricted
    // clients take everything, up to a marker of each device; then, the log holding every message
    // above, a second marker of a team's own device shows that team's clients are past all of them:
    // what they got is complete, and holds nothing of another team. (Stopping at the last position
    // sent raced another device's position on PostgreSQL; closing south as soon as the others had
    // theirs raced south's window on a loaded machine.)
    const marker = async (dev: { deviceId: string; auth: Record<string, string> }, second: number) => {
      const p = item('position', at(second), { lat: 48.85, lon: 2.35, gps_valid: true });
      await send(t, g, dev.auth, [p]);
      positions.push({ device: dev.deviceId, id: p.id });
      return p.id;
    };
    const until = async (stream: Stream, markers: string[]) => {
      const out: string[] = [];
      const waiting = new Set(markers);
      while (waiting.size > 0) {
        const id = (await stream.next('vehicle_position')).data.id as string;
        out.push(id);
        waiting.delete(id);
      }
      return out;
    };
    const ids = (...devices: string[]) => positions.filter((p) => devices.includes(p.device)).map((p) => p.id);
    const firstMarkers = [await marker(n, 720), await marker(s, 721), await marker(none, 722)];
    for (const k of ['all', 'all2'] as const) {
      const got = await until(streams[k], firstMarkers);
      expect(got, k).toHaveLength(positions.length);
      expect(new Set(got), k).toEqual(new Set(ids(n.deviceId, s.deviceId, none.deviceId)));
    }
    const [northMarker, southMarker] = [await marker(n, 730), await marker(s, 731)];
    for (const k of ['north', 'north2', 'northSingle'] as const) {
      const got = await until(streams[k], [northMarker]);
      expect(got, k).toEqual(ids(n.deviceId));
    }
    expect(await until(streams.south, [southMarker])).toEqual(ids(s.deviceId));
    expect(streams.south.received.filter((m) => m.type === 'duty_sign_on').map((m) => m.data.device_id)).toEqual([s.deviceId]);
    for (const stream of Object.values(streams)) stream.ws.close();
  });

  it('closes a client that does not read (4429 SlowClient) and keeps serving the others', async () => {
    let slow!: Stream;
    const ws = await t.app.injectWS(streamPath(g), { headers: reader.auth }, { onInit: (w: WebSocket) => void (slow = wrap(w)) });
    await slow.next('subscribed');
    const healthy = await subscribe(t.app, g, reader.auth);
    ws.pause();
    const dev = await newDevice(t, g);
    const padding = 'x'.repeat(900);
    let sent = 0;
    // Each message is about 1 kB; the bound is 4 kB, past what the in-process pipe holds (2 × 16 kB).
    for (let batch = 0; batch < 20 && t.ctx.services.live.stats.slowClientsClosed === 0; batch++) {
      const items = Array.from({ length: 25 }, (_, i) => item('device_state', at(batch * 25 + i), { state: { note: padding, n: batch * 25 + i } }));
      await send(t, g, dev.auth, items);
      sent += items.length;
      // the healthy client reads everything of this batch, so its messages are dispatched
      for (let i = 0; i < items.length; i++) await healthy.next('device_state');
    }
    expect(t.ctx.services.live.stats.slowClientsClosed).toBe(1);
    ws.resume();
    expect((await slow.closed).code).toBe(4429);
    expect(slow.received.filter((m) => m.type === 'device_state').length).toBeLessThan(sent);
    expect(healthy.ws.readyState).toBe(WebSocket.OPEN);
    healthy.ws.close();
  });

  describe('heartbeat', () => {
    // An app of its own (same database) with a short heartbeat: the paused client above would be dropped too.
    let quick: FastifyInstance;
    beforeAll(async () => {
      quick = await buildApp({ config: { ...t.ctx.config, live: { ...t.ctx.config.live, heartbeatMs: 1000 } }, db: t.db, logger: false, serializers: 'lazy' });
      await quick.ready();
    });
    afterAll(async () => quick?.close());

    it('drops a peer that stops answering pings', async () => {
      const deaf = await connect(quick, g, { headers: reader.auth, autoPong: false });
      const alive = await subscribe(quick, g, reader.auth);
      expect((await deaf.closed).code).toBe(1006);
      expect(quick.ctx.services.live.stats.deadPeersDropped).toBe(1);
      expect(alive.ws.readyState).toBe(WebSocket.OPEN);
      alive.ws.close();
    });

    it('ends the streams whose session ended or whose API key was revoked (4401)', async () => {
      const alive = await subscribe(quick, g, reader.auth);
      const leaving = await newUser(t, { groupId: g, role: 'reader' });
      const session = await subscribe(quick, g, leaving.auth);
      const key = await createApiKey(t.ctx, hostPrincipal, wholeGroup(g), { role: 'reader', group_ids: [g] });
      const byKey = await subscribe(quick, g, { 'x-api-key': key.value });
      expect((await inject(t, { url: '/api/v4/logout', headers: leaving.auth })).status).toBe(204);
      await revokeApiKey(t.ctx, wholeGroup(g), key.api_key_id);
      expect(await session.closed).toEqual({ code: 4401, reason: 'Unauthenticated' });
      expect(await byKey.closed).toEqual({ code: 4401, reason: 'Unauthenticated' });
      expect(session.received.at(-1)).toMatchObject({ type: 'error', data: { code: 'Unauthenticated' } });
      expect(alive.ws.readyState).toBe(WebSocket.OPEN);
      alive.ws.close();
    });
  });

  it.skipIf(engine === 'pglite')(
    'reaches the clients of every instance: a report stored by instance A is pushed by instance B (PostgreSQL only: an in-memory PGlite cannot be opened by a second instance)',
    async () => {
      const b = await buildApp({ config: t.ctx.config, db: await t.testDb.reopen(), logger: false, serializers: 'lazy' });
      try {
        await b.ready();
        const onB = await subscribe(b, g, reader.auth);
        const onA = await subscribe(t.app, g, reader.auth);
        const dev = await newDevice(t, g);
        const report = item('position', at(0), { lat: 48.85, lon: 2.35, gps_valid: true });
        await send(t, g, dev.auth, [report]);
        expect(await onB.next('vehicle_position')).toMatchObject({ group_id: g, data: { id: report.id, device_id: dev.deviceId } });
        expect((await onA.next('vehicle_position')).data.id).toBe(report.id);
        onA.ws.close();
        onB.ws.close();
      } finally {
        await b.close();
      }
    },
  );
});
