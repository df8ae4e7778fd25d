import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';

let t: TestApp;
let g: string;
let admin: TestUser;
beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
  admin = await newUser(t, { groupId: g, role: 'admin' });
  await t.db.query("INSERT INTO devices (group_id, device_id) VALUES ($1, 'dev-1')", [g]);
});
afterAll(async () => t?.close());

const create = (body: unknown, headers = admin.auth, group = g) => inject(t, { method: 'POST', url: `/api/v4/groups/${group}/api-keys`, headers, payload: body as object });

describe('API keys', () => {
  it('are created with exactly one principal', async () => {
    for (const body of [{}, { user_id: admin.userId, device_id: 'dev-1' }, { role: 'reader', group_ids: [g], user_id: admin.userId }]) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.detail[0].msg).toContain('exactly one principal');
    }
    const noGroups = await create({ role: 'reader' });
    expect(noGroups.status).toBe(422);
    expect(noGroups.json.detail[0].loc).toEqual(['body', 'group_ids']);
    const otherGroup = await create({ role: 'reader', group_ids: ['elsewhere'] });
    expect(otherGroup.status).toBe(422);
    const unknownDevice = await create({ device_id: 'dev-404' });
    expect(unknownDevice.json.detail[0].loc).toEqual(['body', 'device_id']);
  });

  it('carry the secret once, store it hashed, and work with both headers', async () => {
    const r = await create({ role: 'reader', group_ids: [g], name: 'warehouse' });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ principal: 'role', role: 'reader', group_ids: [g], name: 'warehouse', scopes: null });
    const key: string = r.json.value;
    expect(key).toMatch(/^tko_/);
    const stored = await t.db.query<{ key_hash: string }>('SELECT key_hash FROM api_keys WHERE api_key_id = $1', [r.json.api_key_id]);
    expect(stored[0]!.key_hash).not.toContain(key);
    for (const headers of [{ authorization: `Api-Key ${key}` }, { 'x-api-key': key }]) {
      const roles = await inject(t, { url: `/api/v4/groups/${g}/roles`, headers });
      expect(roles.status).toBe(200);
      expect(roles.json).toEqual([{ group_id: g, user_id: null, email: null, organization: null, role: 'reader', teams: [] }]);
    }
    const list = await inject(t, { url: `/api/v4/groups/${g}/api-keys`, headers: admin.auth });
    expect(list.status).toBe(200);
    const listed = list.json.find((k: any) => k.api_key_id === r.json.api_key_id);
    expect(listed).toBeDefined();
    expect(listed.value).toBeUndefined();
    expect(JSON.stringify(list.json)).not.toContain(key);
  });

  it('are revoked at once by DELETE', async () => {
    const r = await create({ role: 'operator', group_ids: [g] });
    const headers = { 'x-api-key': r.json.value };
    expect((await inject(t, { url: `/api/v4/groups/${g}/roles`, headers })).status).toBe(200);
    const del = await inject(t, { method: 'DELETE', url: `/api/v4/groups/${g}/api-keys/${r.json.api_key_id}`, headers: admin.auth });
    expect(del.status).toBe(204);
    const after = await inject(t, { url: `/api/v4/groups/${g}/roles`, headers });
    expect(after.status).toBe(401);
    expect(after.json.code).toBe('Unauthenticated');
    expect((await inject(t, { method: 'DELETE', url: `/api/v4/groups/${g}/api-keys/${r.json.api_key_id}`, headers: admin.auth })).json.code).toBe('ApiKeyNotFound');
  });

  it('act as their user, their device, or their role, within their group only', async () => {
    const other = await newGroup(t);
    const reader = await newUser(t, { groupId: g, role: 'reader' });
    await t.db.query("INSERT INTO memberships (group_id, user_id, role) VALUES ($1, $2, 'admin')", [other, reader.userId]);
    const userKey = (await create({ user_id: reader.userId })).json;
    expect(userKey.group_ids).toEqual([g]);
    const asUser = await inject(t, { url: `/api/v4/groups/${g}/roles`, headers: { 'x-api-key': userKey.value } });
    expect(asUser.json[0]).toMatchObject({ user_id: reader.userId, role: 'reader' });
    const outside = await inject(t, { url: `/api/v4/groups/${other}/roles`, headers: { 'x-api-key': userKey.value } });
    expect(outside.status).toBe(403);
    expect(outside.json.code).toBe('NoRole');

    const deviceKey = (await create({ device_id: 'dev-1' })).json;
    expect(deviceKey).toMatchObject({ principal: 'device', device_id: 'dev-1', role: 'driver', group_ids: [g] });
    const asDevice = await inject(t, { url: `/api/v4/groups/${g}/roles`, headers: { 'x-api-key': deviceKey.value } });
    expect(asDevice.json[0].role).toBe('driver');
  });

  it('honour scopes, teams and expiry', async () => {
    const team = await newTeam(t, g);
    const scoped = (await create({ role: 'reader', group_ids: [g], scopes: ['export'], teams: [team] })).json;
    expect(scoped.teams).toEqual([team]);
    const denied = await inject(t, { url: `/api/v4/groups/${g}/roles`, headers: { 'x-api-key': scoped.value } });
    expect(denied.status).toBe(403);
    expect(denied.json.code).toBe('ScopeNotAllowed');
    const badTeam = await create({ role: 'reader', group_ids: [g], teams: ['nope'] });
    expect(badTeam.status).toBe(422);
    expect(badTeam.json.detail[0].loc).toEqual(['body', 'teams']);
    const past = await create({ role: 'reader', group_ids: [g], expire: 1000 });
    expect(past.status).toBe(422);
    expect(past.json.detail[0].loc).toEqual(['body', 'expire']);
    const future = await create({ role: 'reader', group_ids: [g], expire: '2099-01-01' });
    expect(future.status).toBe(422);
    const soon = await create({ role: 'reader', group_ids: [g], expire: Math.floor(Date.now() / 1000) + 3600 });
    expect(soon.status).toBe(201);
    expect(new Date(soon.json.expires_at).getTime()).toBeGreaterThan(Date.now());
  });

  it('need a session holding admin to be created', async () => {
    const key = (await create({ user_id: admin.userId })).json.value;
    const fromKey = await create({ role: 'reader', group_ids: [g] }, { 'x-api-key': key });
    expect(fromKey.status).toBe(403);
    expect(fromKey.json.code).toBe('SessionRequired');
    const operator = await newUser(t, { groupId: g, role: 'operator' });
    const notAdmin = await create({ role: 'reader', group_ids: [g] }, operator.auth);
    expect(notAdmin.status).toBe(403);
    expect(notAdmin.json.code).toBe('CreateApiKeyRoleRequired');
  });

  it('span several groups through POST /api-keys (superuser only)', async () => {
    const second = await newGroup(t);
    const su = await newUser(t, { superuser: true });
    const body = { role: 'reader', group_ids: [g, second] };
    expect((await inject(t, { method: 'POST', url: '/api/v4/api-keys', headers: admin.auth, payload: body })).json.code).toBe('SuperuserRequired');
    const r = await inject(t, { method: 'POST', url: '/api/v4/api-keys', headers: su.auth, payload: body });
    expect(r.status).toBe(201);
    for (const group of [g, second]) {
      expect((await inject(t, { url: `/api/v4/groups/${group}/roles`, headers: { 'x-api-key': r.json.value } })).status).toBe(200);
    }
    const suKey = await inject(t, { method: 'POST', url: '/api/v4/api-keys', headers: su.auth, payload: { user_id: su.userId } });
    expect(suKey.status).toBe(201);
    const groups = await inject(t, { url: '/api/v4/groups', headers: { 'x-api-key': suKey.json.value } });
    expect(groups.json.map((x: any) => x.group_id)).toEqual(expect.arrayContaining([g, second]));
  });
});

describe('credential precedence', () => {
  it('reads the Authorization header first, then x-api-key, then the cookie, and never falls back from an invalid one', async () => {
    const reader = await newUser(t, { groupId: g, role: 'reader' });
    const operatorKey = (await create({ role: 'operator', group_ids: [g] })).json.value;
    const role = async (headers: Record<string, string>, cookies?: Record<string, string>) => {
      const r = await inject(t, { url: `/api/v4/groups/${g}/roles`, headers, ...(cookies ? { cookies } : {}) });
      return r.status === 200 ? r.json[0].role : r.json.code;
    };
    expect(await role({ ...reader.auth, 'x-api-key': operatorKey }, { session_id: admin.token })).toBe('reader');
    expect(await role({ 'x-api-key': operatorKey }, { session_id: reader.token })).toBe('operator');
    expect(await role({}, { session_id: reader.token })).toBe('reader');
    expect(await role({ authorization: 'Bearer not-a-session', 'x-api-key': operatorKey })).toBe('Unauthenticated');
    expect(await role({ 'x-api-key': 'tko_nope' }, { session_id: reader.token })).toBe('Unauthenticated');
    expect(await role({ authorization: 'Basic abc' })).toBe('Unauthenticated');
    expect(await role({})).toBe('Unauthenticated');
  });
});
