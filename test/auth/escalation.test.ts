/**
 * The privilege escalations of the security audit (issue #15, items 1, 2, 3 and 5), each replayed
 * as the attacker did it, through the API, with the secure outcome asserted. The attacker holds
 * one tenant's admin account; the victim is the instance (its superuser) or another tenant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { signToken, startProvider, type TestProvider } from '../helpers/oidc.js';

let t: TestApp;
let provider: TestProvider;
let a: string;
let b: string;
let d: string;
let superuser: TestUser;
let adminA: TestUser;
let adminB: TestUser;
const DOMAIN = 'idp.tenant-d.test';
const AUDIENCE = 'https://api.tenant-d.test';

beforeAll(async () => {
  provider = await startProvider([DOMAIN]);
  t = await setup({ config: { oidcIssuerTemplate: provider.template, oidcJwksCooldownMs: 0 } });
  a = await newGroup(t);
  b = await newGroup(t);
  d = await newGroup(t, { auth: { provider: 'auth0', domain: DOMAIN, connection: 'staff', audience: AUDIENCE } });
  superuser = await newUser(t, { superuser: true, email: 'root@instance.test' });
  adminA = await newUser(t, { groupId: a, role: 'admin', email: 'admin@tenant-a.test' });
  adminB = await newUser(t, { groupId: b, role: 'admin', email: 'admin@tenant-b.test' });
});
afterAll(async () => {
  await t?.close();
  provider?.close();
});

const key = (value: string) => ({ 'x-api-key': value });
const post = (url: string, headers: Record<string, string>, payload: object) => inject(t, { method: 'POST', url: `/api/v4${url}`, headers, payload });
const get = (url: string, headers: Record<string, string>) => inject(t, { url: `/api/v4${url}`, headers });

describe('item 1: a group admin cannot become superuser through a key for a superuser account', () => {
  it('a key made under a group for the superuser is refused without a membership, and with one acts only as that membership', async () => {
    // The attack: add the superuser's email to one's group, then make a key for its user_id.
    const added = await post(`/groups/${a}/users`, adminA.auth, { email: superuser.email, role: 'reader' });
    expect(added.status).toBe(201);
    const made = await post(`/groups/${a}/api-keys`, adminA.auth, { user_id: superuser.userId });
    expect(made.status).toBe(201);
    expect(made.json.origin).toBe('group');
    const k = key(made.json.value);

    // The key acts as the reader it was made for in group a, nothing more.
    const roles = await get(`/groups/${a}/roles`, k);
    expect(roles.status).toBe(200);
    expect(roles.json).toEqual([expect.objectContaining({ user_id: superuser.userId, role: 'reader' })]);
    expect((await post('/api-keys', k, { user_id: superuser.userId })).json.code).toBe('SuperuserRequired');
    expect((await post('/groups', k, { group_id: 'taken-over', name: 'x' })).json.code).toBe('SuperuserRequired');
    const patch = await inject(t, { method: 'PATCH', url: `/api/v4/groups/${b}`, headers: k, payload: { name: 'owned' } });
    expect(patch.json.code).toBe('SuperuserRequired');
    expect((await get(`/groups/${b}/roles`, k)).json.code).toBe('NoRole');
    const groups = await get('/groups', k);
    expect(groups.json.map((g: { group_id: string }) => g.group_id)).toEqual([a]);

    // ...and it dies with the membership.
    expect((await inject(t, { method: 'DELETE', url: `/api/v4/groups/${a}/users/${superuser.userId}`, headers: adminA.auth })).status).toBe(204);
    const after = await get(`/groups/${a}/roles`, k);
    expect(after.status).toBe(403);
    expect(after.json.code).toBe('NoRole');
  });

  it('a key for an account without a role in the group is refused, superuser or not', async () => {
    const r = await post(`/groups/${a}/api-keys`, adminA.auth, { user_id: superuser.userId });
    expect(r.status).toBe(422);
    expect(r.json.detail[0].loc).toEqual(['body', 'user_id']);
  });

  it('a key stops working when its creator no longer administers the group', async () => {
    const admin2 = await newUser(t, { groupId: a, role: 'admin' });
    const reader = await newUser(t, { groupId: a, role: 'reader' });
    const made = await post(`/groups/${a}/api-keys`, admin2.auth, { role: 'operator', group_ids: [a] });
    expect(made.status).toBe(201);
    expect((await get(`/groups/${a}/roles`, key(made.json.value))).status).toBe(200);
    const userKey = await post(`/groups/${a}/api-keys`, admin2.auth, { user_id: reader.userId });
    expect(userKey.status).toBe(201);
    const demoted = await inject(t, { method: 'PATCH', url: `/api/v4/groups/${a}/users/${admin2.userId}`, headers: adminA.auth, payload: { role: 'reader' } });
    expect(demoted.status).toBe(200);
    for (const v of [made.json.value, userKey.json.value]) {
      const r = await get(`/groups/${a}/roles`, key(v));
      expect(r.status).toBe(403);
      expect(r.json.code).toBe('NoRole');
    }
  });

  it('a superuser key comes only from POST /api-keys, by a superuser, and stops when its creator is no longer one', async () => {
    const made = await post('/api-keys', superuser.auth, { user_id: superuser.userId });
    expect(made.status).toBe(201);
    expect(made.json.origin).toBe('instance');
    const k = key(made.json.value);
    const created = await post('/groups', k, { group_id: `${a}-su`, name: 'made by a superuser key' });
    expect(created.status).toBe(201);
    // The superuser's own key for itself under a group is bound to that group and not a superuser.
    await post(`/groups/${a}/users`, superuser.auth, { email: superuser.email, role: 'admin' });
    const bound = await post(`/groups/${a}/api-keys`, superuser.auth, { user_id: superuser.userId });
    expect(bound.status).toBe(201);
    expect((await post('/groups', key(bound.json.value), { group_id: `${a}-no`, name: 'no' })).json.code).toBe('SuperuserRequired');
    expect((await get(`/groups/${b}/roles`, key(bound.json.value))).json.code).toBe('NoRole');
    // Another superuser made a key for a superuser account; once the creator is demoted, the key is not a superuser's.
    const other = await newUser(t, { superuser: true });
    const byOther = await post('/api-keys', other.auth, { user_id: superuser.userId });
    expect((await post('/groups', key(byOther.json.value), { group_id: `${a}-o1`, name: 'o1' })).status).toBe(201);
    await t.db.query('UPDATE users SET superuser = false WHERE user_id = $1', [other.userId]);
    t.db.changes.touch('users');
    const later = await post('/groups', key(byOther.json.value), { group_id: `${a}-o2`, name: 'o2' });
    expect(later.json.code).toBe('SuperuserRequired');
  });
});

describe('item 2: the identity provider of a delegated group cannot mint superusers or reach other groups', () => {
  const issuer = () => provider.issuerOf(DOMAIN);
  const bearer = async (claims: { sub: string; email: string; email_verified?: boolean }) =>
    ({ authorization: `Bearer ${await signToken(provider, { iss: issuer(), aud: AUDIENCE, ...claims })}` });

  it("a token carrying the superuser's email is no superuser, verified or not", async () => {
    for (const email_verified of [true, false, undefined]) {
      const h = await bearer({ sub: `auth0|evil-${String(email_verified)}`, email: superuser.email, ...(email_verified === undefined ? {} : { email_verified }) });
      expect((await post('/groups', h, { group_id: 'idp-made', name: 'x' })).status).toBe(401);
      expect((await post('/api-keys', h, { role: 'admin', group_ids: [a] })).status).toBe(401);
      expect((await get('/groups', h)).status).toBe(401);
    }
  });

  it("a token carrying another group's admin email lists and reaches nothing of that group", async () => {
    const h = await bearer({ sub: 'auth0|evil-admin-a', email: adminA.email, email_verified: true });
    expect((await get('/groups', h)).status).toBe(401);
    expect((await get(`/groups/${a}/roles`, h)).status).toBe(401);
  });

  it('maps an identity by (issuer, subject): linked once by email to an account of the group only, then never by email again', async () => {
    const member = await newUser(t, { groupId: d, role: 'operator', email: 'dispatch@tenant-d.test' });
    const first = await get(`/groups/${d}/roles`, await bearer({ sub: 'auth0|dispatch', email: member.email, email_verified: true }));
    expect(first.status).toBe(200);
    expect(first.json[0]).toMatchObject({ user_id: member.userId, role: 'operator' });
    const linked = await t.db.query<{ user_id: string }>('SELECT user_id FROM identities WHERE issuer = $1 AND subject = $2', [issuer(), 'auth0|dispatch']);
    expect(linked).toEqual([{ user_id: member.userId }]);
    // Another subject with the same email is not that account.
    expect((await get(`/groups/${d}/roles`, await bearer({ sub: 'auth0|impostor', email: member.email, email_verified: true }))).status).toBe(401);
    // The linked subject stays that account whatever email it later carries.
    const renamed = await get(`/groups/${d}/roles`, await bearer({ sub: 'auth0|dispatch', email: adminA.email }));
    expect(renamed.json[0]).toMatchObject({ user_id: member.userId });
    // A delegated group's token lists only the delegated groups, even when the account later gets a role elsewhere.
    await t.db.query("INSERT INTO memberships (group_id, user_id, role) VALUES ($1, $2, 'admin')", [a, member.userId]);
    t.db.changes.touch('memberships');
    const h = await bearer({ sub: 'auth0|dispatch', email: member.email });
    expect((await get('/groups', h)).json.map((g: { group_id: string }) => g.group_id)).toEqual([d]);
  });

  it('refuses an unverified email, and an account with a password or a role outside the group', async () => {
    const unverified = await newUser(t, { groupId: d, role: 'reader', email: 'unverified@tenant-d.test' });
    expect((await get(`/groups/${d}/roles`, await bearer({ sub: 'auth0|unverified', email: unverified.email, email_verified: false }))).status).toBe(401);
    const withPassword = await newUser(t, { groupId: d, role: 'reader', email: 'pw@tenant-d.test', password: 'a password here' });
    expect((await get(`/groups/${d}/roles`, await bearer({ sub: 'auth0|pw', email: withPassword.email }))).status).toBe(401);
  });
});

describe('item 3: a team-limited admin stays within its teams', () => {
  let g: string;
  let nord: string;
  let sud: string;
  let limited: TestUser;
  let whole: TestUser;
  beforeAll(async () => {
    g = await newGroup(t);
    nord = await newTeam(t, g, 'nord');
    sud = await newTeam(t, g, 'sud');
    limited = await newUser(t, { groupId: g, role: 'admin', teams: [nord] });
    whole = await newUser(t, { groupId: g, role: 'admin' });
    await t.db.query("INSERT INTO devices (group_id, device_id, team_id) VALUES ($1, 'tab-sud', $2), ($1, 'tab-nord', $3)", [g, sud, nord]);
    await t.db.query("INSERT INTO vehicles (group_id, vehicle_id, fleet_number, license_plate, teams) VALUES ($1, 'bus-sud', '1', 'AA-1', $2)", [g, [sud]]);
  });

  it('cannot make a key for the whole group, nor for another team; an absent teams means its own', async () => {
    for (const teams of [[], [sud], [nord, sud]]) {
      const r = await post(`/groups/${g}/api-keys`, limited.auth, { role: 'admin', group_ids: [g], teams });
      expect(r.status, JSON.stringify(teams)).toBe(403);
      expect(r.json.code).toBe('ForbiddenDifferentTeam');
    }
    const own = await post(`/groups/${g}/api-keys`, limited.auth, { role: 'admin', group_ids: [g] });
    expect(own.status).toBe(201);
    expect(own.json.teams).toEqual([nord]);
    // The key cannot touch what its creator cannot: a sud vehicle.
    const patch = await inject(t, { method: 'PATCH', url: `/api/v4/groups/${g}/vehicles/bus-sud`, headers: key(own.json.value), payload: { comment: 'mine' } });
    expect([403, 404]).toContain(patch.status);
  });

  it('cannot give roles to the whole group or another team, nor change or remove a wider admin, nor widen itself', async () => {
    for (const body of [{ role: 'admin' }, { role: 'admin', teams: [] }, { role: 'reader', teams: [sud] }]) {
      const r = await post(`/groups/${g}/users`, limited.auth, { email: `new-${JSON.stringify(body).length}-${Math.random()}@x.test`, ...body });
      expect(r.status, JSON.stringify(body)).toBe(403);
      expect(r.json.code).toBe('ForbiddenDifferentTeam');
    }
    const demote = await inject(t, { method: 'PATCH', url: `/api/v4/groups/${g}/users/${whole.userId}`, headers: limited.auth, payload: { role: 'reader' } });
    expect(demote.status).toBe(403);
    const remove = await inject(t, { method: 'DELETE', url: `/api/v4/groups/${g}/users/${whole.userId}`, headers: limited.auth });
    expect(remove.status).toBe(403);
    const widen = await inject(t, { method: 'PATCH', url: `/api/v4/groups/${g}/users/${limited.userId}`, headers: limited.auth, payload: { teams: [] } });
    expect(widen.status).toBe(403);
    const team = await post(`/groups/${g}/teams`, limited.auth, { team_id: 'own-new', name: 'x' });
    expect(team.status).toBe(403);
    const within = await post(`/groups/${g}/users`, limited.auth, { email: 'nord-reader@x.test', password: 'a long password', role: 'reader', teams: [nord] });
    expect(within.status).toBe(201);
    const standing = async (u: TestUser) => (await t.db.query<{ role: string; teams: string[] }>('SELECT role, teams FROM memberships WHERE group_id = $1 AND user_id = $2', [g, u.userId]))[0];
    expect(await standing(whole)).toEqual({ role: 'admin', teams: [] });
    expect(await standing(limited)).toEqual({ role: 'admin', teams: [nord] });
  });

  it('cannot make a key for a device of another team, nor for a wider user', async () => {
    const sudDevice = await post(`/groups/${g}/api-keys`, limited.auth, { device_id: 'tab-sud' });
    expect(sudDevice.status).toBe(403);
    expect(sudDevice.json.code).toBe('ForbiddenDifferentTeam');
    expect((await post(`/groups/${g}/api-keys`, limited.auth, { device_id: 'tab-nord' })).status).toBe(201);
    const wider = await post(`/groups/${g}/api-keys`, limited.auth, { user_id: whole.userId });
    expect(wider.status).toBe(403);
  });

  it("a key made by an unrestricted admin who is later limited carries only the admin's new teams", async () => {
    const later = await newUser(t, { groupId: g, role: 'admin' });
    const made = await post(`/groups/${g}/api-keys`, later.auth, { role: 'reader', group_ids: [g] });
    expect((await get(`/groups/${g}/roles`, key(made.json.value))).json[0].teams).toEqual([]);
    await inject(t, { method: 'PATCH', url: `/api/v4/groups/${g}/users/${later.userId}`, headers: whole.auth, payload: { teams: [nord] } });
    expect((await get(`/groups/${g}/roles`, key(made.json.value))).json[0].teams).toEqual([nord]);
  });
});

describe('item 5: adding an account of another organization discloses nothing of it', () => {
  it("answers, lists and shows roles with this group's own record of the account only", async () => {
    const stranger = await newUser(t, { groupId: b, role: 'operator', email: 'ops@tenant-b.test' });
    await t.db.query("UPDATE users SET organization = 'Tenant B secret org' WHERE user_id = $1", [stranger.userId]);
    const added = await post(`/groups/${a}/users`, adminA.auth, { email: stranger.email, role: 'reader' });
    expect(added.status).toBe(201);
    expect(added.body).not.toContain('Tenant B secret org');
    expect(added.json.organization).toBeNull();
    const list = await get(`/groups/${a}/users`, adminA.auth);
    expect(list.body).not.toContain('Tenant B secret org');
    const roles = await get(`/groups/${a}/roles`, adminA.auth);
    expect(roles.body).not.toContain('Tenant B secret org');
    // Group b still sees what it recorded.
    expect(adminB).toBeDefined();
  });
});
