/**
 * The authorization matrix, generated from the routes the server registers: every endpoint ×
 * every role (plus no credential, a role in another group, and a superuser) against the access
 * list the endpoint declares. A wrong list, or an endpoint without one, cannot pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLES, type Access, type Role } from '../../src/platform/http/access.js';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { apiRoutes as allRoutes, callRoute, urlOf as urlOfRoute } from '../helpers/routes.js';

let t: TestApp;
let g: string;
let other: string;
const users = {} as Record<Role, TestUser>;
let outsider: TestUser;
let superuser: TestUser;

beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
  other = await newGroup(t);
  for (const role of ROLES) users[role] = await newUser(t, { groupId: g, role });
  outsider = await newUser(t, { groupId: other, role: 'admin' });
  superuser = await newUser(t, { superuser: true });
});
afterAll(async () => t?.close());

const apiRoutes = () => allRoutes(t);
const urlOf = (url: string) => urlOfRoute(url, g);
const call = (method: string, url: string, headers: Record<string, string> = {}) => callRoute(t, method, url, g, headers);

describe('authorization matrix', () => {
  it('every API route declares its access', () => {
    const undeclared = apiRoutes().filter((r) => !r.access).map((r) => `${r.method} ${r.url}`);
    expect(undeclared).toEqual([]);
    expect(apiRoutes().length).toBeGreaterThan(50);
  });

  it('group endpoints: each role allowed or refused as declared, other groups and anonymous refused', async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const r of apiRoutes()) {
      const access = r.access as Access;
      if (access.kind !== 'group') continue;
      const name = `${r.method} ${r.url}`;
      for (const role of ROLES) {
        const res = await call(r.method, r.url, users[role].auth);
        const allowed = access.roles.includes(role);
        const refused = res.status === 403 && res.json?.code === access.roleError;
        if (allowed && (res.status === 401 || refused || res.json?.code === 'NoRole')) failures.push(`${name} refused ${role}: ${res.status} ${res.body}`);
        if (!allowed && !refused) failures.push(`${name} let ${role} through: ${res.status} ${res.body.slice(0, 200)}`);
        checked++;
      }
      const anonymous = await call(r.method, r.url);
      if (anonymous.status !== 401 || anonymous.json.code !== 'Unauthenticated') failures.push(`${name} anonymous: ${anonymous.status}`);
      const foreign = await call(r.method, r.url, outsider.auth);
      if (foreign.status !== 403 || foreign.json.code !== 'NoRole') failures.push(`${name} other group's admin: ${foreign.status} ${foreign.body}`);
      // a superuser passes every role check (an endpoint may still refuse for its own reason, e.g. a device credential)
      const su = await call(r.method, r.url, superuser.auth);
      if (su.status === 401 || [access.roleError, 'NoRole'].includes(su.json?.code)) failures.push(`${name} superuser: ${su.status} ${su.body}`);
      const unknownGroup = await inject(t, { method: r.method as 'GET', url: urlOf(r.url).replace(`/groups/${g}`, '/groups/no-such-group'), headers: superuser.auth });
      if (unknownGroup.status !== 404 || unknownGroup.json.code !== 'GroupNotFound') failures.push(`${name} unknown group: ${unknownGroup.status}`);
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(300);
  });

  it('public, credential and superuser endpoints behave as declared', async () => {
    const failures: string[] = [];
    for (const r of apiRoutes()) {
      const access = r.access as Access;
      const name = `${r.method} ${r.url}`;
      const anonymous = await call(r.method, r.url);
      if (access.kind === 'public') {
        if (anonymous.status === 401 || anonymous.status === 403) failures.push(`${name} refused anonymous: ${anonymous.status}`);
      } else if (access.kind === 'credential') {
        if (anonymous.status !== 401) failures.push(`${name} anonymous: ${anonymous.status}`);
        // a fresh session each time: GET /logout closes the one it is called with
        const any = await call(r.method, r.url, (await newUser(t, { groupId: g, role: 'driver' })).auth);
        if (any.status === 401 || any.status === 403) failures.push(`${name} refused a credential: ${any.status}`);
      } else if (access.kind === 'superuser') {
        if (anonymous.status !== 401) failures.push(`${name} anonymous: ${anonymous.status}`);
        const admin = await call(r.method, r.url, users.admin.auth);
        if (admin.status !== 403 || admin.json.code !== 'SuperuserRequired') failures.push(`${name} admin: ${admin.status}`);
        const su = await call(r.method, r.url, superuser.auth);
        if (su.status === 401 || su.status === 403) failures.push(`${name} superuser: ${su.status}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
