import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { engine } from '../helpers/db.js';

let t: TestApp;
let su: TestUser;
beforeAll(async () => {
  t = await setup();
  su = await newUser(t, { superuser: true });
});
afterAll(async () => t?.close());

const post = (url: string, payload: object, headers = su.auth) => inject(t, { method: 'POST', url, headers, payload });
const patch = (url: string, payload: object, headers = su.auth) => inject(t, { method: 'PATCH', url, headers, payload });

describe('groups', () => {
  it('are created by a superuser with features, login and time zone', async () => {
    const r = await post('/api/v4/groups', { group_id: 'metro-1', name: 'Metro', features: ['on_demand'], auth: { provider: 'legacy' }, timezone: 'Europe/Paris' });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ group_id: 'metro-1', name: 'Metro', features: ['on_demand'], auth: { provider: 'legacy' }, timezone: 'Europe/Paris' });
    const again = await post('/api/v4/groups', { group_id: 'metro-1', name: 'Again' });
    expect(again.status).toBe(409);
    expect(again.json.code).toBe('GroupExists');
    const stored = await t.db.query('SELECT name, timezone FROM groups WHERE group_id = $1', ['metro-1']);
    expect(stored).toEqual([{ name: 'Metro', timezone: 'Europe/Paris' }]);
  });

  it('refuse bad input with the field named', async () => {
    const tz = await post('/api/v4/groups', { group_id: 'g-tz', name: 'x', timezone: 'Mars/Olympus' });
    expect(tz.status).toBe(422);
    expect(tz.json.detail[0].loc).toEqual(['body', 'timezone']);
    const feature = await post('/api/v4/groups', { group_id: 'g-f', name: 'x', features: ['teleport'] });
    expect(feature.json.detail[0].loc).toEqual(['body', 'features', 0]);
    const extra = await post('/api/v4/groups', { group_id: 'g-e', name: 'x', colour: 'red' });
    expect(extra.json.detail[0]).toMatchObject({ loc: ['body', 'colour'], type: 'extra_forbidden' });
    const id = await post('/api/v4/groups', { group_id: '../etc', name: 'x' });
    expect(id.json.detail[0].loc).toEqual(['body', 'group_id']);
    const auth0 = await post('/api/v4/groups', { group_id: 'g-a', name: 'x', auth: { provider: 'auth0', domain: 'example.org' } });
    expect(auth0.status).toBe(422);
    expect(await t.db.query("SELECT 1 FROM groups WHERE group_id LIKE 'g-%'")).toEqual([]);
  });

  it('change name, features and login through PATCH (superuser only)', async () => {
    const g = await newGroup(t);
    const r = await patch(`/api/v4/groups/${g}`, { name: 'Renamed', features: ['rail_data'], auth: { provider: 'auth0', domain: 'id.example.org', connection: 'c', audience: 'a' } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ name: 'Renamed', features: ['rail_data'], auth: { provider: 'auth0', domain: 'id.example.org' } });
    const admin = await newUser(t, { groupId: g, role: 'admin' });
    expect((await patch(`/api/v4/groups/${g}`, { name: 'Mine' }, admin.auth)).json.code).toBe('SuperuserRequired');
    expect((await patch('/api/v4/groups/ghost', { name: 'x' })).json.code).toBe('GroupNotFound');
  });

  it('are listed for their members, all of them for a superuser', async () => {
    const a = await newGroup(t);
    const b = await newGroup(t);
    const u = await newUser(t, { groupId: a, role: 'reader' });
    const mine = await inject(t, { url: '/api/v4/groups', headers: u.auth });
    expect(mine.json.map((x: any) => x.group_id)).toEqual([a]);
    const all = await inject(t, { url: '/api/v4/groups', headers: su.auth });
    expect(all.json.map((x: any) => x.group_id)).toEqual(expect.arrayContaining([a, b]));
  });
});

describe('teams and users', () => {
  it('teams are created by an admin and listed to every role', async () => {
    const g = await newGroup(t);
    const admin = await newUser(t, { groupId: g, role: 'admin' });
    const driver = await newUser(t, { groupId: g, role: 'driver' });
    expect((await post(`/api/v4/groups/${g}/teams`, { team_id: 'north', name: 'North depot' }, admin.auth)).status).toBe(201);
    expect((await post(`/api/v4/groups/${g}/teams`, { team_id: 'north', name: 'Again' }, admin.auth)).json.code).toBe('TeamExists');
    expect((await post(`/api/v4/groups/${g}/teams`, { team_id: 'south', name: 'x' }, driver.auth)).json.code).toBe('CreateTeamRoleRequired');
    const list = await inject(t, { url: `/api/v4/groups/${g}/teams`, headers: driver.auth });
    expect(list.json.map((x: any) => x.team_id)).toEqual(['north']);
  });

  it('an admin adds users with a role and teams; one account holds roles in several groups', async () => {
    const g1 = await newGroup(t);
    const g2 = await newGroup(t);
    const team = await newTeam(t, g1);
    const admin1 = await newUser(t, { groupId: g1, role: 'admin' });
    const admin2 = await newUser(t, { groupId: g2, role: 'admin' });
    const created = await post(`/api/v4/groups/${g1}/users`, { email: 'Pat@Example.org', password: 'pat password', role: 'operator', teams: [team], organization: 'Metro Ops' }, admin1.auth);
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ email: 'Pat@Example.org', role: 'operator', teams: [team], organization: 'Metro Ops', existing_user: false });
    expect(created.json.user_id).toMatch(/^[0-9a-f]{24}$/);

    const second = await post(`/api/v4/groups/${g2}/users`, { email: 'pat@example.org', password: 'attempted takeover', role: 'reader' }, admin2.auth);
    expect(second.status).toBe(201);
    expect(second.json).toMatchObject({ user_id: created.json.user_id, existing_user: true, role: 'reader' });
    // the second admin could not change the password
    const login = (password: string) =>
      inject(t, { method: 'POST', url: '/api/v4/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ email: 'pat@example.org', password }).toString() });
    expect((await login('attempted takeover')).status).toBe(401);
    const session = (await login('pat password')).json.session_id;
    const roles1 = await inject(t, { url: `/api/v4/groups/${g1}/roles`, headers: { authorization: `Bearer ${session}` } });
    expect(roles1.json).toEqual([{ group_id: g1, user_id: created.json.user_id, email: 'Pat@Example.org', organization: 'Metro Ops', role: 'operator', teams: [team] }]);
    const roles2 = await inject(t, { url: `/api/v4/groups/${g2}/roles`, headers: { authorization: `Bearer ${session}` } });
    expect(roles2.json[0].role).toBe('reader');

    expect((await post(`/api/v4/groups/${g1}/users`, { email: 'pat@example.org', role: 'reader' }, admin1.auth)).json.code).toBe('MembershipExists');
    const badTeam = await post(`/api/v4/groups/${g1}/users`, { email: 'x@example.org', password: 'long enough', role: 'reader', teams: ['nope'] }, admin1.auth);
    expect(badTeam.json.detail[0].loc).toEqual(['body', 'teams']);
    const noPassword = await post(`/api/v4/groups/${g1}/users`, { email: 'y@example.org', role: 'reader' }, admin1.auth);
    expect(noPassword.json.detail[0]).toMatchObject({ loc: ['body', 'password'], type: 'missing' });
    const badRole = await post(`/api/v4/groups/${g1}/users`, { email: 'z@example.org', password: 'long enough', role: 'boss' }, admin1.auth);
    expect(badRole.json.detail[0].loc).toEqual(['body', 'role']);
  });

  it('PATCH changes the role and DELETE removes the membership, not the account', async () => {
    const g = await newGroup(t);
    const admin = await newUser(t, { groupId: g, role: 'admin' });
    const u = await newUser(t, { groupId: g, role: 'reader' });
    const changed = await patch(`/api/v4/groups/${g}/users/${u.userId}`, { role: 'regulator' }, admin.auth);
    expect(changed.json.role).toBe('regulator');
    expect((await inject(t, { url: `/api/v4/groups/${g}/roles`, headers: u.auth })).json[0].role).toBe('regulator');
    const del = await inject(t, { method: 'DELETE', url: `/api/v4/groups/${g}/users/${u.userId}`, headers: admin.auth });
    expect(del.status).toBe(204);
    const gone = await inject(t, { url: `/api/v4/groups/${g}/roles`, headers: u.auth });
    expect(gone.json.code).toBe('NoRole');
    expect(await t.db.query('SELECT 1 FROM users WHERE user_id = $1', [u.userId])).toHaveLength(1);
    expect((await inject(t, { method: 'DELETE', url: `/api/v4/groups/${g}/users/${u.userId}`, headers: admin.auth })).json.code).toBe('UserNotFound');
  });

  it('GET /roles gives an admin the roles of every user, and anyone else only their own', async () => {
    const g = await newGroup(t);
    const admin = await newUser(t, { groupId: g, role: 'admin' });
    const reader = await newUser(t, { groupId: g, role: 'reader' });
    const all = await inject(t, { url: `/api/v4/groups/${g}/roles`, headers: admin.auth });
    expect(all.json.map((r: any) => r.user_id).sort()).toEqual([admin.userId, reader.userId].sort());
    const own = await inject(t, { url: `/api/v4/groups/${g}/roles`, headers: reader.auth });
    expect(own.json.map((r: any) => r.user_id)).toEqual([reader.userId]);
    const none = await inject(t, { url: `/api/v4/groups/${g}/roles` });
    expect(none.status).toBe(401);
    expect(none.json).toEqual({ detail: 'A valid credential is required', code: 'Unauthenticated' });
  });
});

describe.runIf(engine === 'pglite')('transit-ops user create', () => {
  it('creates a superuser from a password on standard input', () => {
    const root = resolve(import.meta.dirname, '../..');
    const run = (args: string[], input: string) =>
      spawnSync(process.execPath, ['--import', pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href, join(root, 'src/main.ts'), '--data-dir', 'memory://', ...args], {
        input,
        encoding: 'utf8',
        env: { ...process.env, DATABASE_URL: '' },
      });
    const ok = run(['user', 'create', '--email', 'root@example.org', '--password-stdin', '--superuser'], 'a strong password\n');
    expect(ok.status, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ email: 'root@example.org', superuser: true });
    const short = run(['user', 'create', '--email', 'x@example.org', '--password-stdin'], 'short\n');
    expect(short.status).toBe(2);
    expect(short.stderr).toContain('at least 8 characters');
    const noStdin = run(['user', 'create', '--email', 'x@example.org'], '');
    expect(noStdin.stderr).toContain('--password-stdin');
  }, 240_000); // three process starts, each compiling TypeScript: slow on a loaded machine
});
