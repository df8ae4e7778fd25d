import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/platform/clock.js';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { newDevice } from '../helpers/fleet.js';

const clock = fixedClock('2026-03-31T21:30:00Z'); // 23:30 in Paris, still March there
let t: TestApp;
let g: string;
let operator: TestUser;
let reader: TestUser;
beforeAll(async () => {
  t = await setup({ clock });
  g = await newGroup(t, { timezone: 'Europe/Paris' });
  operator = await newUser(t, { groupId: g, role: 'operator' });
  reader = await newUser(t, { groupId: g, role: 'reader' });
});
afterAll(async () => t?.close());

const send = (app: TestApp, group: string, headers: Record<string, string>, payload: object) =>
  inject(app, { method: 'POST', url: `/api/v4/groups/${group}/notifications/sms`, headers, payload });
const count = async (q = '', headers = reader.auth) => (await inject(t, { url: `/api/v4/groups/${g}/notifications/sms-count${q}`, headers })).json;

describe('SMS notifications (log transport, the default)', () => {
  it('POST notifications/sms records the SMS with its device and GTFS context', async () => {
    const d = await newDevice(t, g);
    const r = await send(t, g, operator.auth, { to: '+33612345678', message: 'Your bus is 10 minutes late', device_id: d.device_id, gtfs_id: 'gtfs-2026-03' });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ to: '+33612345678', device_id: d.device_id, gtfs_id: 'gtfs-2026-03', transport: 'log', status: 'sent', error: null, created_at: '2026-03-31T21:30:00.000Z' });
    expect(r.json.notification_id).toMatch(/^[0-9a-f]{24}$/);
    const rows = await t.db.query('SELECT recipient, message, device_id, gtfs_id, transport, status, created_by FROM sms_notifications WHERE group_id = $1 AND notification_id = $2', [g, r.json.notification_id]);
    expect(rows).toEqual([{ recipient: '+33612345678', message: 'Your bus is 10 minutes late', device_id: d.device_id, gtfs_id: 'gtfs-2026-03', transport: 'log', status: 'sent', created_by: operator.userId }]);
  });

  it('refuses bad input: phone number, unknown device, roles not allowed', async () => {
    const phone = await send(t, g, operator.auth, { to: '0612345678', message: 'x' });
    expect(phone.json.detail[0].loc).toEqual(['body', 'to']);
    const device = await send(t, g, operator.auth, { to: '+33612345678', message: 'x', device_id: 'ghost' });
    expect(device.status).toBe(422);
    expect(device.json.detail[0].loc).toEqual(['body', 'device_id']);
    const refused = await send(t, g, reader.auth, { to: '+33612345678', message: 'x' });
    expect(refused.json.code).toBe('SendSmsRoleRequired');
    expect(await t.db.query("SELECT count(*)::int AS n FROM sms_notifications WHERE group_id = $1 AND message = 'x'", [g])).toEqual([{ n: 0 }]);
  });

  it('GET sms-count counts per month of the group\'s time zone, per device and per GTFS', async () => {
    const g2 = await newGroup(t, { timezone: 'Europe/Paris' });
    const op = await newUser(t, { groupId: g2, role: 'operator' });
    const rd = await newUser(t, { groupId: g2, role: 'regulator' });
    const d1 = await newDevice(t, g2);
    const d2 = await newDevice(t, g2);
    clock.set('2026-03-31T21:30:00Z'); // March in Paris
    await send(t, g2, op.auth, { to: '+33600000001', message: 'a', device_id: d1.device_id, gtfs_id: 'G1' });
    await send(t, g2, op.auth, { to: '+33600000002', message: 'b', device_id: d2.device_id, gtfs_id: 'G1' });
    clock.set('2026-03-31T22:30:00Z'); // 00:30 on April 1st in Paris
    await send(t, g2, op.auth, { to: '+33600000003', message: 'c', device_id: d1.device_id, gtfs_id: 'G2' });
    await send(t, g2, op.auth, { to: '+33600000004', message: 'd' });
    const c = async (q: string) => (await inject(t, { url: `/api/v4/groups/${g2}/notifications/sms-count${q}`, headers: rd.auth })).json;
    expect(await c('')).toEqual({ group_id: g2, period: null, device_id: null, gtfs_id: null, count: 4, failed: 0 });
    expect((await c('?period=2026-03')).count).toBe(2);
    expect((await c('?period=2026-04')).count).toBe(2);
    expect((await c('?period=2026-05')).count).toBe(0);
    expect(await c(`?period=2026-03&device_id=${d1.device_id}`)).toMatchObject({ period: '2026-03', device_id: d1.device_id, count: 1 });
    expect((await c(`?device_id=${d1.device_id}`)).count).toBe(2);
    expect((await c('?gtfs_id=G1')).count).toBe(2);
    expect((await c(`?gtfs_id=G2&device_id=${d1.device_id}`)).count).toBe(1);
    // spec: the endpoint accepts these optional headers
    const withHeaders = await inject(t, { url: `/api/v4/groups/${g2}/notifications/sms-count`, headers: { ...rd.auth, 'x-svc-api-batch-id': 'b1', 'x-svc-api-request-id': 'r1', 'x-svc-api-lazy-loading-router': 'x', 'user-agent': 'datahub/1.0' } });
    expect(withHeaders.json.count).toBe(4);
  });

  it('a caller limited to a team counts the SMS of their team\'s devices only, and names only those devices', async () => {
    const g3 = await newGroup(t);
    const a = await newTeam(t, g3);
    const b = await newTeam(t, g3);
    const inA = await newDevice(t, g3, { team_id: a });
    const inB = await newDevice(t, g3, { team_id: b });
    const op = await newUser(t, { groupId: g3, role: 'operator' });
    await send(t, g3, op.auth, { to: '+33600000001', message: 'a', device_id: inA.device_id });
    await send(t, g3, op.auth, { to: '+33600000002', message: 'b', device_id: inB.device_id });
    await send(t, g3, op.auth, { to: '+33600000003', message: 'c' });
    const limited = await newUser(t, { groupId: g3, role: 'operator', teams: [a] });
    const r = await inject(t, { url: `/api/v4/groups/${g3}/notifications/sms-count`, headers: limited.auth });
    expect(r.json.count).toBe(1);
    const other = await send(t, g3, limited.auth, { to: '+33600000004', message: 'd', device_id: inB.device_id });
    expect(other.status).toBe(403);
    expect(other.json.code).toBe('ForbiddenDifferentTeam');
  });

  it('GET sms-count is for RS1 roles', async () => {
    const admin = await newUser(t, { groupId: g, role: 'admin' });
    const r = await inject(t, { url: `/api/v4/groups/${g}/notifications/sms-count`, headers: admin.auth });
    expect(r.json.code).toBe('GetSmsCountRoleRequired');
    expect((await count('?period=2026-13')).detail[0].loc).toEqual(['query', 'period']);
  });
});

describe('SMS notifications through the webhook transport', () => {
  let server: Server;
  let w: TestApp;
  let wg: string;
  let op: TestUser;
  const received: { headers: IncomingHttpHeaders; body: any }[] = [];
  let answer = { status: 200, body: '{"id":"gw-42"}' };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let data = '';
      req.on('data', (c) => (data += c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: JSON.parse(data) });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    w = await setup({ clock, config: { smsTransport: 'webhook', smsWebhookUrl: `http://127.0.0.1:${port}/sms`, smsWebhookToken: 'gateway-token', smsWebhookTimeoutMs: 5000 } });
    wg = await newGroup(w);
    op = await newUser(w, { groupId: wg, role: 'operator' });
  });
  afterAll(async () => {
    await w?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('POSTs each SMS to the webhook with its context, and records the gateway\'s id', async () => {
    const d = await newDevice(w, wg);
    const r = await send(w, wg, op.auth, { to: '+33611111111', message: 'Detour on line 4', device_id: d.device_id, gtfs_id: 'G9' });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ transport: 'webhook', status: 'sent', provider_message_id: 'gw-42' });
    expect(received).toHaveLength(1);
    expect(received[0]!.body).toEqual({ notification_id: r.json.notification_id, group_id: wg, to: '+33611111111', message: 'Detour on line 4', device_id: d.device_id, gtfs_id: 'G9' });
    expect(received[0]!.headers.authorization).toBe('Bearer gateway-token');
    expect(received[0]!.headers['idempotency-key']).toBe(r.json.notification_id);
    expect(await w.db.query('SELECT status, provider_message_id FROM sms_notifications WHERE group_id = $1 AND notification_id = $2', [wg, r.json.notification_id])).toEqual([{ status: 'sent', provider_message_id: 'gw-42' }]);
  });

  it('a refusal of the webhook answers 502 SmsNotSent, is recorded as failed and is not counted as sent', async () => {
    answer = { status: 503, body: 'gateway down' };
    const r = await send(w, wg, op.auth, { to: '+33622222222', message: 'x' });
    expect(r.status).toBe(502);
    expect(r.json.code).toBe('SmsNotSent');
    expect(r.json.detail).toContain('503');
    expect(r.json.notification).toMatchObject({ status: 'failed', to: '+33622222222' });
    expect(await w.db.query('SELECT status, error FROM sms_notifications WHERE group_id = $1 AND notification_id = $2', [wg, r.json.notification.notification_id])).toEqual([
      { status: 'failed', error: 'the SMS webhook answered 503: gateway down' },
    ]);
    const reader = await newUser(w, { groupId: wg, role: 'reader' });
    const c = await inject(w, { url: `/api/v4/groups/${wg}/notifications/sms-count`, headers: reader.auth });
    expect(c.json).toMatchObject({ count: 1, failed: 1 });
    answer = { status: 200, body: '' };
  });
});

describe('configuration of the transport', () => {
  it('SMS_TRANSPORT=webhook needs SMS_WEBHOOK_URL', async () => {
    const { loadConfig } = await import('../../src/config.js');
    expect(() => loadConfig({ SMS_TRANSPORT: 'webhook' })).toThrow(/SMS_WEBHOOK_URL/);
    expect(() => loadConfig({ SMS_TRANSPORT: 'pigeon' })).toThrow(/SMS_TRANSPORT/);
    expect(loadConfig({ SMS_TRANSPORT: 'webhook', SMS_WEBHOOK_URL: 'https://sms.example.org/send' }).smsWebhookUrl).toBe('https://sms.example.org/send');
    expect(loadConfig({}).smsTransport).toBe('log');
  });
});
