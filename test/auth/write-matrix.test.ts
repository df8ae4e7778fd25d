/**
 * The write-side authorization matrix, generated from the routes the server registers: every
 * write operation × every role × {unrestricted, team-limited} × {own group, other group} ×
 * {session, login-scoped session, API key made for that principal}, against the access list the
 * operation declares. Then, for every credential, account and membership an admin can make, that
 * what was made carries no more than its maker (security audit, issue #15).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLES, SCOPES, type Access, type Role, type Scope } from '../../src/platform/http/access.js';
import { hashSecret, newSecret } from '../../src/platform/ids.js';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { apiRoutes, callRoute, groupWriteRoutes, WRITE_METHODS } from '../helpers/routes.js';

let t: TestApp;
let g: string;
let other: string;
let nord: string;
let sud: string;
const TEAMINGS = ['unrestricted', 'nord'] as const;
type Teaming = (typeof TEAMINGS)[number];
const KINDS = ['session', 'scoped session', 'api key'] as const;
type Kind = (typeof KINDS)[number];
/** The credentials of each role × teaming × kind. */
const credentials = new Map<string, Record<string, string>>();
const members = new Map<string, TestUser>();
const admins = {} as Record<Teaming, TestUser>;
const teamsOf = (teaming: Teaming) => (teaming === 'nord' ? [nord] : []);

/** A login-scoped session of the user, as POST /login-scoped makes it (the row a login writes). */
async function scopedSession(u: TestUser, scopes: readonly Scope[]): Promise<Record<string, string>> {
  const token = newSecret('');
  await t.db.query("INSERT INTO sessions (session_hash, user_id, scopes, expires_at) VALUES ($1, $2, $3, now() + interval '1 day')", [hashSecret(token), u.userId, [...scopes]]);
  return { authorization: `Bearer ${token}` };
}

async function makeKey(maker: Record<string, string>, body: object) {
  return inject(t, { method: 'POST', url: `/api/v4/groups/${g}/api-keys`, headers: maker, payload: body });
}

beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
  other = await newGroup(t);
  nord = await newTeam(t, g, 'nord');
  sud = await newTeam(t, g, 'sud');
  for (const teaming of TEAMINGS) admins[teaming] = await newUser(t, { groupId: g, role: 'admin', teams: teamsOf(teaming) });
  for (const role of ROLES) {
    for (const teaming of TEAMINGS) {
      const u = role === 'admin' ? admins[teaming] : await newUser(t, { groupId: g, role, teams: teamsOf(teaming) });
      members.set(`${role}/${teaming}`, u);
      credentials.set(`${role}/${teaming}/session`, u.auth);
      credentials.set(`${role}/${teaming}/scoped session`, await scopedSession(u, SCOPES));
      // The key is made by the admin of the same teams (for the admin, by itself).
      const key = await makeKey(admins[teaming].auth, { user_id: u.userId, name: `${role} ${teaming}` });
      expect(key.status, `key for ${role}/${teaming}: ${key.body}`).toBe(201);
      credentials.set(`${role}/${teaming}/api key`, { 'x-api-key': key.json.value });
    }
  }
  await t.db.query("INSERT INTO devices (group_id, device_id, team_id) VALUES ($1, 'tab-nord', $2), ($1, 'tab-sud', $3), ($1, 'tab-none', NULL)", [g, nord, sud]);
});
afterAll(async () => t?.close());

describe('write authorization matrix', () => {
  it('every write operation answers each role, teaming and credential kind as declared, in its group and in another', async () => {
    const failures: string[] = [];
    let checked = 0;
    const routes = groupWriteRoutes(t);
    expect(routes.length).toBeGreaterThan(25);
    for (const r of routes) {
      const name = `${r.method} ${r.url}`;
      for (const role of ROLES) {
        const allowed = r.access.roles.includes(role);
        for (const teaming of TEAMINGS) {
          for (const kind of KINDS) {
            const who = `${role}/${teaming}/${kind}`;
            const headers = credentials.get(who)!;
            const res = await callRoute(t, r.method, r.url, g, headers);
            const code = res.json?.code as string | undefined;
            // A key never makes keys (spec: Authentication 7: creation needs a session).
            const sessionOnly = kind === 'api key' && r.url.endsWith('/api-keys') && r.method === 'POST';
            if (!allowed) {
              if (res.status !== 403 || code !== r.access.roleError) failures.push(`${name} let ${who} through: ${res.status} ${res.body.slice(0, 160)}`);
            } else if (sessionOnly) {
              if (code !== 'SessionRequired') failures.push(`${name} ${who}: ${res.status} ${code}`);
            } else if (res.status === 401 || code === r.access.roleError || code === 'NoRole' || code === 'ScopeNotAllowed') {
              failures.push(`${name} refused ${who}: ${res.status} ${res.body.slice(0, 160)}`);
            }
            const foreign = await callRoute(t, r.method, r.url, other, headers);
            if (foreign.status !== 403 || foreign.json?.code !== 'NoRole') failures.push(`${name} in another group for ${who}: ${foreign.status} ${foreign.body.slice(0, 160)}`);
            checked += 2;
          }
        }
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBe(routes.length * ROLES.length * TEAMINGS.length * KINDS.length * 2);
  }, 600_000); // thousands of requests: minutes on a loaded machine

  it('superuser write operations refuse every group credential', async () => {
    const failures: string[] = [];
    const routes = apiRoutes(t).filter((r) => WRITE_METHODS.includes(r.method) && (r.access as Access).kind === 'superuser');
    expect(routes.length).toBeGreaterThanOrEqual(3);
    for (const r of routes) {
      for (const [who, headers] of credentials) {
        const res = await callRoute(t, r.method, r.url, g, headers);
        if (res.status !== 403 || res.json?.code !== 'SuperuserRequired') failures.push(`${r.method} ${r.url} ${who}: ${res.status} ${res.body.slice(0, 120)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('nothing made carries more than its maker', () => {
  const asked: (readonly string[] | undefined)[] = [undefined, [], ['nord'], ['sud'], ['nord', 'sud']];
  const within = (teams: readonly string[], bound: readonly string[]) => (bound.length === 0 ? true : teams.length > 0 && teams.every((x) => bound.includes(x)));

  /** What a key carries: its standing read back through the API, and whether it reaches further. */
  async function carried(value: string) {
    const headers = { 'x-api-key': value };
    const roles = await inject(t, { url: `/api/v4/groups/${g}/roles`, headers });
    const elsewhere = await inject(t, { url: `/api/v4/groups/${other}/roles`, headers });
    const superuser = await inject(t, { method: 'POST', url: '/api/v4/groups', headers, payload: { group_id: 'x', name: 'x' } });
    // A write to a record of team sud, which a nord-limited maker cannot make.
    const sudWrite = await inject(t, { method: 'PATCH', url: `/api/v4/groups/${g}/devices/tab-sud`, headers, payload: { label: 'probe' } });
    return { roles, elsewhere, superuser, sudWrite };
  }

  for (const teaming of TEAMINGS) {
    for (const scoped of [false, true]) {
      it(`keys and roles made by an admin (${teaming}, ${scoped ? 'a session scoped to admin, read and write' : 'a full session'})`, async () => {
        const maker = admins[teaming];
        const makerScopes: Scope[] | null = scoped ? ['admin', 'read', 'write'] : null;
        const headers = scoped ? await scopedSession(maker, makerScopes!) : maker.auth;
        const bound = teamsOf(teaming);
        const failures: string[] = [];
        let made = 0;
        let sudWrites = 0;
        const bodies: object[] = [];
        for (const role of ROLES) for (const teams of asked) bodies.push({ role, group_ids: [g], ...(teams ? { teams } : {}) });
        for (const [who, u] of members) bodies.push({ user_id: u.userId, name: who });
        for (const device_id of ['tab-nord', 'tab-sud', 'tab-none']) bodies.push({ device_id });
        for (const scopes of [undefined, ['read'], ['read', 'write'], ['read', 'export'], [...SCOPES]]) bodies.push({ role: 'reader', group_ids: [g], ...(scopes ? { scopes } : {}) });

        for (const body of bodies) {
          const res = await makeKey(headers, body);
          const what = `${JSON.stringify(body)} → ${res.status}`;
          if (res.status !== 201) {
            if (![403, 422].includes(res.status)) failures.push(`${what} ${res.body.slice(0, 120)}`);
            continue;
          }
          made++;
          if (!within(res.json.teams, bound)) failures.push(`${what}: key teams ${JSON.stringify(res.json.teams)}`);
          if (makerScopes && !(res.json.scopes ?? SCOPES).every((s: Scope) => makerScopes.includes(s))) failures.push(`${what}: key scopes ${JSON.stringify(res.json.scopes)}`);
          const c = await carried(res.json.value);
          if (c.roles.status === 200) {
            // An admin's answer lists every member; anyone else's is its own standing.
            const own = c.roles.json as { role: string; teams: string[] }[];
            if (own.length === 1 && own[0]!.role !== 'admin' && !within(own[0]!.teams, bound)) failures.push(`${what}: acts with teams ${JSON.stringify(own[0]!.teams)}`);
          } else {
            failures.push(`${what}: roles ${c.roles.status}`);
          }
          if (c.elsewhere.json?.code !== 'NoRole') failures.push(`${what}: another group ${c.elsewhere.status}`);
          if (c.superuser.json?.code !== 'SuperuserRequired') failures.push(`${what}: superuser ${c.superuser.status}`);
          if (bound.length > 0 && c.sudWrite.status === 200) failures.push(`${what}: changed a sud device`);
          if (c.sudWrite.status === 200) sudWrites++;
        }

        for (const role of ROLES) {
          for (const teams of asked) {
            const email = `${teaming}-${scoped}-${role}-${JSON.stringify(teams ?? null).replace(/\W/g, '')}@made.test`;
            const res = await inject(t, { method: 'POST', url: `/api/v4/groups/${g}/users`, headers, payload: { email, password: 'a long password', role, ...(teams ? { teams } : {}) } });
            if (res.status === 201) {
              made++;
              if (!within(res.json.teams, bound)) failures.push(`user ${email}: teams ${JSON.stringify(res.json.teams)}`);
            } else if (![403, 422].includes(res.status)) {
              failures.push(`user ${email}: ${res.status} ${res.body.slice(0, 120)}`);
            }
          }
        }
        // Changes to other principals: each member's teams widened to the whole group, or moved to sud.
        for (const [who, u] of members) {
          for (const teams of [[], [sud]]) {
            const before = (await t.db.query<{ teams: string[] }>('SELECT teams FROM memberships WHERE group_id = $1 AND user_id = $2', [g, u.userId]))[0]!;
            const res = await inject(t, { method: 'PATCH', url: `/api/v4/groups/${g}/users/${u.userId}`, headers, payload: { teams } });
            if (res.status === 200) {
              if (!within(before.teams, bound) || !within(teams, bound)) failures.push(`PATCH ${who} teams ${JSON.stringify(teams)} by ${teaming}: 200`);
              // Put it back, so each attempt starts from the same standing.
              await t.db.query('UPDATE memberships SET teams = $3 WHERE group_id = $1 AND user_id = $2', [g, u.userId, before.teams]);
              t.db.changes.touch('memberships');
            }
          }
        }
        expect(failures).toEqual([]);
        expect(made).toBeGreaterThan(5);
        // The probe can succeed: keys of an unrestricted admin do change the sud device.
        if (bound.length === 0) expect(sudWrites).toBeGreaterThan(0);
      }, 600_000); // every key and role kind by every admin kind: minutes on a loaded machine
    }
  }
});
