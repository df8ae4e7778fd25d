/** The live stream under stress: slow clients, dead peers, and several instances on one database. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { buildApp } from '../../src/app.js';
import { createApiKey, revokeApiKey } from '../../src/domains/auth/service.js';
import { liveHub } from '../../src/domains/live/routes.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { item, newDevice, send } from '../helpers/actual.js';
import { engine } from '../helpers/db.js';
import { connect, streamPath, subscribe, wrap, type Stream } from '../helpers/live.js';

let t: TestApp;
let g: string;
let reader: TestUser;
beforeAll(async () => {
  t = await setup({ config: { live: { allowedOrigins: [], maxBufferedBytes: 4096, heartbeatMs: 600_000, authTimeoutMs: 5000 } } });
  g = await newGroup(t);
  reader = await newUser(t, { groupId: g, role: 'reader' });
});
afterAll(async () => t?.close());

const at = (s: number) => new Date(Date.UTC(2026, 2, 10, 6, 0, s)).toISOString();

describe('live stream delivery', () => {
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
    for (let batch = 0; batch < 20 && liveHub(t.ctx)!.stats.slowClientsClosed === 0; batch++) {
      const items = Array.from({ length: 25 }, (_, i) => item('device_state', at(batch * 25 + i), { state: { note: padding, n: batch * 25 + i } }));
      await send(t, g, dev.auth, items);
      sent += items.length;
      // the healthy client reads everything of this batch, so its messages are dispatched
      for (let i = 0; i < items.length; i++) await healthy.next('device_state');
    }
    expect(liveHub(t.ctx)!.stats.slowClientsClosed).toBe(1);
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
      quick = await buildApp({ config: { ...t.ctx.config, live: { ...t.ctx.config.live, heartbeatMs: 1000 } }, db: t.db, logger: false });
      await quick.ready();
    });
    afterAll(async () => quick?.close());

    it('drops a peer that stops answering pings', async () => {
      const deaf = await connect(quick, g, { headers: reader.auth, autoPong: false });
      const alive = await subscribe(quick, g, reader.auth);
      expect((await deaf.closed).code).toBe(1006);
      expect(liveHub(quick.ctx)!.stats.deadPeersDropped).toBe(1);
      expect(alive.ws.readyState).toBe(WebSocket.OPEN);
      alive.ws.close();
    });

    it('ends the streams whose session ended or whose API key was revoked (4401)', async () => {
      const alive = await subscribe(quick, g, reader.auth);
      const leaving = await newUser(t, { groupId: g, role: 'reader' });
      const session = await subscribe(quick, g, leaving.auth);
      const key = await createApiKey(t.ctx, { userId: null } as never, g, { role: 'reader', group_ids: [g] });
      const byKey = await subscribe(quick, g, { 'x-api-key': key.value });
      expect((await inject(t, { url: '/api/v4/logout', headers: leaving.auth })).status).toBe(204);
      await revokeApiKey(t.ctx, g, key.api_key_id);
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
      const b = await buildApp({ config: t.ctx.config, db: await t.testDb.reopen(), logger: false });
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
