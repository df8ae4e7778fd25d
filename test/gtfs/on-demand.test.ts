/** On-demand routes: provisioning by admins, public reads of active and inactive routes only. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject, newGroup, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';

let t: TestApp;
let g: string;
let admin: TestUser;
beforeAll(async () => {
  t = await setup();
  g = await newGroup(t, { features: ['device_event_sourcing', 'on_demand'] });
  admin = await newUser(t, { groupId: g, role: 'admin' });
});
afterAll(async () => t?.close());

const stops = [
  { stop_id: 'OD-1', name: 'Town hall', lat: 45.76, lon: 4.83 },
  { stop_id: 'OD-2', name: 'Hospital', lat: 45.75, lon: 4.85 },
];
const create = (body: object, groupId = g, user = admin) => inject(t, { method: 'POST', url: `/api/v4/groups/${groupId}/on-demand-routes`, headers: user.auth, payload: body });
const patch = (routeId: string, body: object) => inject(t, { method: 'PATCH', url: `/api/v4/groups/${g}/on-demand-routes/${routeId}`, headers: admin.auth, payload: body });
const pub = (path = '', groupId = g) => inject(t, { url: `/api/v4/groups/${groupId}/on-demand-routes/public${path}` });

describe('provisioning', () => {
  it('an admin creates a route with its own stops (never GTFS stops), stored in order', async () => {
    const r = await create({ route_id: 'TAD-1', name: 'Hills on demand', color: 'a1b2c3', stops });
    expect(r.status, r.body).toBe(201);
    expect(r.json).toMatchObject({ route_id: 'TAD-1', name: 'Hills on demand', color: 'A1B2C3', status: 'active', short_name: null, stops });
    const rows = await t.db.query('SELECT stop_id, position, name FROM on_demand_stops WHERE group_id = $1 AND route_id = $2 ORDER BY position', [g, 'TAD-1']);
    expect(rows).toEqual([{ stop_id: 'OD-1', position: 0, name: 'Town hall' }, { stop_id: 'OD-2', position: 1, name: 'Hospital' }]);
    expect((await create({ route_id: 'TAD-1', name: 'Again', stops: [] })).json.code).toBe('OnDemandRouteExists');
  });

  it('refuses a stop_id twice in a route, naming it, and writes nothing', async () => {
    const r = await create({ route_id: 'TAD-dup', name: 'x', stops: [stops[0], { ...stops[1], stop_id: 'OD-1' }] });
    expect(r.status).toBe(422);
    expect(r.json.detail[0]).toMatchObject({ loc: ['body', 'stops', 1, 'stop_id'], input: 'OD-1' });
    expect(await t.db.query('SELECT 1 FROM on_demand_routes WHERE group_id = $1 AND route_id = $2', [g, 'TAD-dup'])).toEqual([]);
  });

  it('changes status among active, inactive and archived, and replaces stops', async () => {
    await create({ route_id: 'TAD-2', name: 'Valley', stops });
    const inactive = await patch('TAD-2', { status: 'inactive', short_name: 'V', stops: [stops[1]] });
    expect(inactive.json).toMatchObject({ status: 'inactive', short_name: 'V', stops: [stops[1]] });
    const cleared = await patch('TAD-2', { short_name: null });
    expect(cleared.json).toMatchObject({ short_name: null, name: 'Valley', status: 'inactive' });
    expect((await patch('TAD-2', { status: 'archived' })).json.status).toBe('archived');
    expect((await patch('TAD-2', { status: 'paused' })).status).toBe(422);
    expect((await patch('NOPE', { status: 'active' })).json.code).toBe('OnDemandRouteNotFound');
    const all = await inject(t, { url: `/api/v4/groups/${g}/on-demand-routes`, headers: admin.auth });
    expect(all.json.find((x: any) => x.route_id === 'TAD-2').status).toBe('archived');
  });

  it('only an admin provisions', async () => {
    const operator = await newUser(t, { groupId: g, role: 'operator' });
    const r = await create({ route_id: 'TAD-op', name: 'x', stops: [] }, g, operator);
    expect(r.status).toBe(403);
    expect(r.json.code).toBe('CreateOnDemandRouteRoleRequired');
  });
});

describe('public reads (no credential)', () => {
  beforeAll(async () => {
    await create({ route_id: 'P-active', name: 'Active', stops });
    await create({ route_id: 'P-inactive', name: 'Inactive', status: 'inactive', stops: [] });
    await create({ route_id: 'P-archived', name: 'Archived', status: 'archived', stops });
  });

  it('list active and inactive routes, never archived ones', async () => {
    const r = await pub();
    expect(r.status).toBe(200);
    const ids = r.json.map((x: any) => x.route_id);
    expect(ids).toEqual(expect.arrayContaining(['P-active', 'P-inactive']));
    expect(ids).not.toContain('P-archived');
    expect(r.json.every((x: any) => x.status !== 'archived' && !('created_at' in x))).toBe(true);
  });

  it('an archived route answers exactly like an unknown one', async () => {
    expect((await pub('/P-inactive')).json).toMatchObject({ route_id: 'P-inactive', status: 'inactive' });
    const archived = await pub('/P-archived');
    const unknown = await pub('/P-never-existed');
    expect(archived.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(archived.body).toBe(unknown.body);
    expect(archived.json.code).toBe('OnDemandRouteNotFound');
  });

  it('a group without both features gets 403 FeatureNotEnabled, whatever the route', async () => {
    const plain = await newGroup(t, { features: ['on_demand'] });
    for (const path of ['', '/P-active']) {
      const r = await pub(path, plain);
      expect(r.status).toBe(403);
      expect(r.json).toMatchObject({ code: 'FeatureNotEnabled' });
      expect(r.json.detail).toContain('device_event_sourcing');
    }
    expect((await pub('', 'no-such-group')).json.code).toBe('GroupNotFound');
  });
});
