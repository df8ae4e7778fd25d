import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLES, type Role } from '../../src/platform/http/access.js';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { newDriver } from '../helpers/fleet.js';

let t: TestApp;
let g: string;
let admin: TestUser;
let operator: TestUser;
beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
  admin = await newUser(t, { groupId: g, role: 'admin' });
  operator = await newUser(t, { groupId: g, role: 'operator' });
});
afterAll(async () => t?.close());

const base = () => `/api/v4/groups/${g}/drivers`;
const post = (payload: object, headers = admin.auth, url = base()) => inject(t, { method: 'POST', url, headers, payload });
const patch = (id: string, payload: object, headers = admin.auth) => inject(t, { method: 'PATCH', url: `${base()}/${id}`, headers, payload });
const get = (url: string, headers = operator.auth) => inject(t, { url, headers });

describe('driver provisioning', () => {
  it('POST generates a 24 lowercase hex driver_id when none is given, and stores the record', async () => {
    const r = await post({ driver_name: 'Ada Lovelace', staff_number: 'P-001', teams: [], comment: 'mornings only', code: '1815' });
    expect(r.status).toBe(201);
    expect(r.json.id).toMatch(/^[0-9a-f]{24}$/);
    expect(r.json).toMatchObject({ driver_name: 'Ada Lovelace', staff_number: 'P-001', teams: [], comment: 'mornings only', archived: false, code: '1815' });
    const rows = await t.db.query('SELECT driver_name, staff_number, archived, code FROM drivers WHERE group_id = $1 AND driver_id = $2', [g, r.json.id]);
    expect(rows).toEqual([{ driver_name: 'Ada Lovelace', staff_number: 'P-001', archived: false, code: '1815' }]);
  });

  it('POST keeps a given driver_id (in lowercase) and refuses a taken id or staff number', async () => {
    const id = 'ABCDEF0123456789ABCDEF01';
    const r = await post({ driver_id: id, driver_name: 'Grace Hopper', staff_number: 'P-002' });
    expect(r.status).toBe(201);
    expect(r.json.id).toBe(id.toLowerCase());
    const sameId = await post({ driver_id: id.toLowerCase(), driver_name: 'Other', staff_number: 'P-003' });
    expect(sameId.status).toBe(409);
    expect(sameId.json.code).toBe('DriverExists');
    const sameStaff = await post({ driver_name: 'Other', staff_number: 'P-002' });
    expect(sameStaff.status).toBe(409);
    expect(sameStaff.json.code).toBe('StaffNumberTaken');
    expect(await t.db.query('SELECT count(*)::int AS n FROM drivers WHERE group_id = $1 AND staff_number = $2', [g, 'P-002'])).toEqual([{ n: 1 }]);
  });

  it('POST refuses bad input naming the field, and unknown teams', async () => {
    const missing = await post({ driver_name: 'No staff number' });
    expect(missing.status).toBe(422);
    expect(missing.json.detail[0]).toMatchObject({ loc: ['body', 'staff_number'], type: 'missing' });
    const badId = await post({ driver_id: 'xyz', driver_name: 'A', staff_number: 'P-9' });
    expect(badId.json.detail[0].loc).toEqual(['body', 'driver_id']);
    const team = await post({ driver_name: 'A', staff_number: 'P-10', teams: ['nowhere'] });
    expect(team.status).toBe(422);
    expect(team.json.detail[0]).toMatchObject({ loc: ['body', 'teams'], input: ['nowhere'] });
  });

  it('PATCH changes only the fields sent; archived: true archives without deleting', async () => {
    const d = await newDriver(t, g, { comment: 'keep me', code: 'C1' });
    const r = await patch(d.id, { driver_name: 'Renamed', code: null });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: d.id, driver_name: 'Renamed', comment: 'keep me', code: null, archived: false });
    const archived = await patch(d.id, { archived: true });
    expect(archived.json.archived).toBe(true);
    expect(await t.db.query('SELECT archived, driver_name FROM drivers WHERE group_id = $1 AND driver_id = $2', [g, d.id])).toEqual([{ archived: true, driver_name: 'Renamed' }]);
    expect((await patch('0'.repeat(24), { archived: true })).json.code).toBe('DriverNotFound');
    expect((await patch(d.id, {})).status).toBe(422);
  });

  it('is for admins only', async () => {
    const r = await post({ driver_name: 'A', staff_number: 'P-11' }, operator.auth);
    expect(r.status).toBe(403);
    expect(r.json.code).toBe('CreateDriverRoleRequired');
  });
});

describe('driver reads', () => {
  it('GET drivers excludes archived drivers by default, archived=true returns only them, driver_code filters', async () => {
    const g2 = await newGroup(t);
    const reader = await newUser(t, { groupId: g2, role: 'reader' });
    const active = await newDriver(t, g2, { code: 'K7' });
    const other = await newDriver(t, g2, { code: 'K8' });
    const gone = await newDriver(t, g2, { archived: true, code: 'K7' });
    const list = async (q: string) => (await get(`/api/v4/groups/${g2}/drivers${q}`, reader.auth)).json.map((d: any) => d.id).sort();
    expect(await list('')).toEqual([active.id, other.id].sort());
    expect(await list('?archived=false')).toEqual([active.id, other.id].sort());
    expect(await list('?archived=true')).toEqual([gone.id]);
    expect(await list('?driver_code=K7')).toEqual([active.id]);
    expect(await list('?driver_code=K7&archived=true')).toEqual([gone.id]);
    expect((await get(`/api/v4/groups/${g2}/drivers?archived=maybe`, reader.auth)).status).toBe(422);
  });

  it('GET drivers/{driver_id}: 24 hex characters, 404 DriverNotFound', async () => {
    const d = await newDriver(t, g);
    const r = await get(`${base()}/${d.id}`);
    expect(r.status).toBe(200);
    expect(r.json.id).toBe(d.id);
    expect((await get(`${base()}/${d.id.toUpperCase()}`)).json.id).toBe(d.id);
    const unknown = await get(`${base()}/${'f'.repeat(24)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.json.code).toBe('DriverNotFound');
    expect((await get(`${base()}/not-an-id`)).status).toBe(422);
  });

  it('answers the operator-oriented shape to operator, regulator and superusers, the standard shape to the other roles', async () => {
    const g3 = await newGroup(t);
    const d = await newDriver(t, g3, { comment: 'night shifts', code: 'Z1', staff_number: 'PAY-77' });
    const operatorShape = ['id', 'driver_name', 'staff_number', 'teams', 'comment', 'archived', 'code', 'created_at', 'updated_at'].sort();
    const standardShape = ['id', 'driver_name', 'teams', 'archived', 'code'].sort();
    const seen: Record<string, string> = {};
    for (const role of ROLES) {
      const u = await newUser(t, { groupId: g3, role });
      const one = await get(`/api/v4/groups/${g3}/drivers/${d.id}`, u.auth);
      const list = await get(`/api/v4/groups/${g3}/drivers`, u.auth);
      for (const r of [one, list]) {
        if (r.status !== 200) continue; // the role is not in this endpoint's list
        const record = Array.isArray(r.json) ? r.json[0] : r.json;
        const keys = Object.keys(record).sort();
        seen[role] = JSON.stringify(keys) === JSON.stringify(operatorShape) ? 'operator' : JSON.stringify(keys) === JSON.stringify(standardShape) ? 'standard' : `unexpected ${keys}`;
      }
    }
    const expected: Partial<Record<Role, string>> = {
      operator: 'operator', regulator: 'operator',
      driver: 'standard', limited_reader: 'standard', technical: 'standard', external_reader: 'standard', reader: 'standard',
    };
    expect(seen).toEqual(expected);
    const su = await newUser(t, { superuser: true });
    const bySuperuser = await get(`/api/v4/groups/${g3}/drivers/${d.id}`, su.auth);
    expect(bySuperuser.json).toMatchObject({ staff_number: 'PAY-77', comment: 'night shifts' });
  });

  it('a user linked to a driver record must name an existing driver', async () => {
    const d = await newDriver(t, g);
    const ok = await post({ email: `${d.id}@example.org`, password: 'long enough', role: 'driver', driver_id: d.id }, admin.auth, `/api/v4/groups/${g}/users`);
    expect(ok.status).toBe(201);
    expect(ok.json.driver_id).toBe(d.id);
    const bad = await post({ email: 'ghost-driver@example.org', password: 'long enough', role: 'driver', driver_id: 'e'.repeat(24) }, admin.auth, `/api/v4/groups/${g}/users`);
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(['body', 'driver_id']);
    const badPatch = await inject(t, { method: 'PATCH', url: `/api/v4/groups/${g}/users/${ok.json.user_id}`, headers: admin.auth, payload: { driver_id: 'e'.repeat(24) } });
    expect(badPatch.status).toBe(422);
  });
});

describe('team restriction on drivers', () => {
  it('a user limited to team A sees only team A\'s drivers, 403 ForbiddenDifferentTeam on another team\'s driver', async () => {
    const g4 = await newGroup(t);
    const a = await newTeam(t, g4);
    const b = await newTeam(t, g4);
    const inA = await newDriver(t, g4, { teams: [a] });
    const inAB = await newDriver(t, g4, { teams: [a, b] });
    const inB = await newDriver(t, g4, { teams: [b] });
    const none = await newDriver(t, g4);
    const limited = await newUser(t, { groupId: g4, role: 'operator', teams: [a] });
    const whole = await newUser(t, { groupId: g4, role: 'operator' });
    const ids = async (u: TestUser) => (await get(`/api/v4/groups/${g4}/drivers`, u.auth)).json.map((d: any) => d.id).sort();
    expect(await ids(limited)).toEqual([inA.id, inAB.id].sort());
    expect(await ids(whole)).toEqual([inA.id, inAB.id, inB.id, none.id].sort());
    const other = await get(`/api/v4/groups/${g4}/drivers/${inB.id}`, limited.auth);
    expect(other.status).toBe(403);
    expect(other.json.code).toBe('ForbiddenDifferentTeam');
    expect((await get(`/api/v4/groups/${g4}/drivers/${none.id}`, limited.auth)).json.code).toBe('ForbiddenDifferentTeam');
    expect((await get(`/api/v4/groups/${g4}/drivers/${inAB.id}`, limited.auth)).status).toBe(200);
  });

  it('an admin limited to team A writes only team A drivers', async () => {
    const g5 = await newGroup(t);
    const a = await newTeam(t, g5);
    const b = await newTeam(t, g5);
    const limitedAdmin = await newUser(t, { groupId: g5, role: 'admin', teams: [a] });
    const url = `/api/v4/groups/${g5}/drivers`;
    expect((await post({ driver_name: 'In A', staff_number: 'A1', teams: [a] }, limitedAdmin.auth, url)).status).toBe(201);
    expect((await post({ driver_name: 'In B', staff_number: 'B1', teams: [b] }, limitedAdmin.auth, url)).json.code).toBe('ForbiddenDifferentTeam');
    expect((await post({ driver_name: 'No team', staff_number: 'N1' }, limitedAdmin.auth, url)).json.code).toBe('ForbiddenDifferentTeam');
    const shared = await newDriver(t, g5, { teams: [a, b] });
    const r = await inject(t, { method: 'PATCH', url: `${url}/${shared.id}`, headers: limitedAdmin.auth, payload: { teams: [a] } });
    expect(r.status).toBe(403);
    expect(r.json.code).toBe('ForbiddenDifferentTeam');
    expect(await t.db.query('SELECT teams FROM drivers WHERE group_id = $1 AND driver_id = $2', [g5, shared.id])).toEqual([{ teams: [a, b] }]);
    expect(await t.db.query('SELECT staff_number FROM drivers WHERE group_id = $1 ORDER BY staff_number', [g5])).toEqual([{ staff_number: 'A1' }, { staff_number: shared.staff_number }]);
  });
});
