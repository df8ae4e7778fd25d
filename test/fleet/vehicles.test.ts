import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { newVehicle } from '../helpers/fleet.js';

let t: TestApp;
let g: string;
let admin: TestUser;
let reader: TestUser;
beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
  admin = await newUser(t, { groupId: g, role: 'admin' });
  reader = await newUser(t, { groupId: g, role: 'reader' });
});
afterAll(async () => t?.close());

const get = (url: string, headers: Record<string, string> = reader.auth) => inject(t, { url, headers });

describe('vehicle provisioning', () => {
  it('POST registers a vehicle (status active unless given) and refuses taken ids and plates', async () => {
    const url = `/api/v4/groups/${g}/vehicles`;
    const r = await inject(t, { method: 'POST', url, headers: admin.auth, payload: { vehicle_id: 'bus-101', fleet_number: '101', license_plate: 'AB-101-CD', capacity: 90, comment: 'low floor' } });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ id: 'bus-101', fleet_number: '101', license_plate: 'AB-101-CD', teams: [], comment: 'low floor', status: 'active', capacity: 90 });
    expect(await t.db.query('SELECT status, capacity FROM vehicles WHERE group_id = $1 AND vehicle_id = $2', [g, 'bus-101'])).toEqual([{ status: 'active', capacity: 90 }]);
    const again = await inject(t, { method: 'POST', url, headers: admin.auth, payload: { vehicle_id: 'bus-101', fleet_number: '1', license_plate: 'ZZ' } });
    expect(again.json.code).toBe('VehicleExists');
    const plate = await inject(t, { method: 'POST', url, headers: admin.auth, payload: { vehicle_id: 'bus-102', fleet_number: '102', license_plate: 'AB-101-CD' } });
    expect(plate.status).toBe(409);
    expect(plate.json.code).toBe('LicensePlateTaken');
    const bad = await inject(t, { method: 'POST', url, headers: admin.auth, payload: { vehicle_id: 'bus 103', fleet_number: '103', license_plate: 'X', status: 'parked', capacity: -1 } });
    expect(bad.status).toBe(422);
    expect(bad.json.detail.map((d: any) => d.loc.join('.')).sort()).toEqual(['body.capacity', 'body.status', 'body.vehicle_id']);
    const reserved = await inject(t, { method: 'POST', url, headers: admin.auth, payload: { vehicle_id: 'public', fleet_number: '1', license_plate: 'P' } });
    expect(reserved.json.detail[0].loc).toEqual(['body', 'vehicle_id']);
  });

  it('PATCH archives with a status, never deletes, and keeps unsent fields', async () => {
    const v = await newVehicle(t, g, { comment: 'note', capacity: 50 });
    const r = await inject(t, { method: 'PATCH', url: `/api/v4/groups/${g}/vehicles/${v.id}`, headers: admin.auth, payload: { status: 'archived', capacity: null } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: 'archived', capacity: null, comment: 'note' });
    expect(await t.db.query('SELECT status FROM vehicles WHERE group_id = $1 AND vehicle_id = $2', [g, v.id])).toEqual([{ status: 'archived' }]);
    const unknown = await inject(t, { method: 'PATCH', url: `/api/v4/groups/${g}/vehicles/nope`, headers: admin.auth, payload: { status: 'active' } });
    expect(unknown.json.code).toBe('VehicleNotFound');
  });
});

describe('vehicle reads', () => {
  it('GET vehicles: every status but archived by default; statuses filters and is validated', async () => {
    const g2 = await newGroup(t);
    const u = await newUser(t, { groupId: g2, role: 'driver' });
    const active = await newVehicle(t, g2);
    const maintenance = await newVehicle(t, g2, { status: 'maintenance' });
    const broken = await newVehicle(t, g2, { status: 'out_of_service' });
    const archived = await newVehicle(t, g2, { status: 'archived' });
    const ids = async (q: string) => (await get(`/api/v4/groups/${g2}/vehicles${q}`, u.auth)).json.map((v: any) => v.id).sort();
    expect(await ids('')).toEqual([active.id, maintenance.id, broken.id].sort());
    expect(await ids('?statuses=archived')).toEqual([archived.id]);
    expect(await ids('?statuses=active&statuses=maintenance')).toEqual([active.id, maintenance.id].sort());
    const unknown = await get(`/api/v4/groups/${g2}/vehicles?statuses=parked`, u.auth);
    expect(unknown.status).toBe(422);
    expect(unknown.json.detail[0].loc).toEqual(['query', 'statuses', 0]);
    const twice = await get(`/api/v4/groups/${g2}/vehicles?statuses=active&statuses=active`, u.auth);
    expect(twice.status).toBe(422);
  });

  it('GET vehicles/public needs no credential and carries no private field', async () => {
    const g2 = await newGroup(t);
    await newVehicle(t, g2, { vehicle_id: 'pub-1', fleet_number: '7', comment: 'driver seat broken', teams: [await newTeam(t, g2)], capacity: 40 });
    await newVehicle(t, g2, { status: 'archived' });
    const r = await inject(t, { url: `/api/v4/groups/${g2}/vehicles/public` });
    expect(r.status).toBe(200);
    expect(r.json).toEqual([{ id: 'pub-1', fleet_number: '7', status: 'active', capacity: 40 }]);
    expect(r.body).not.toContain('driver seat broken');
    expect((await inject(t, { url: `/api/v4/groups/${g2}/vehicles/public?statuses=archived` })).json).toHaveLength(1);
    expect((await inject(t, { url: '/api/v4/groups/no-such-group/vehicles/public' })).json.code).toBe('GroupNotFound');
  });

  it('GET vehicles/{vehicle_id} answers the record, 404 VehicleNotFound', async () => {
    const v = await newVehicle(t, g, { capacity: 12 });
    const r = await get(`/api/v4/groups/${g}/vehicles/${v.id}`);
    expect(r.json).toMatchObject({ id: v.id, capacity: 12, license_plate: v.license_plate });
    expect((await get(`/api/v4/groups/${g}/vehicles/unknown-bus`)).json.code).toBe('VehicleNotFound');
  });

  it('GET vehicle-amount counts registered vehicles (archived apart), per status; 403 InvalidRole for drivers', async () => {
    const g2 = await newGroup(t);
    const op = await newUser(t, { groupId: g2, role: 'operator' });
    await newVehicle(t, g2);
    await newVehicle(t, g2);
    await newVehicle(t, g2, { status: 'maintenance' });
    await newVehicle(t, g2, { status: 'archived' });
    const r = await get(`/api/v4/groups/${g2}/vehicle-amount`, op.auth);
    expect(r.json).toEqual({ amount: 3, by_status: { active: 2, maintenance: 1, out_of_service: 0, archived: 1 } });
    const driver = await newUser(t, { groupId: g2, role: 'driver' });
    const refused = await get(`/api/v4/groups/${g2}/vehicle-amount`, driver.auth);
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe('InvalidRole');
  });
});

describe('team restriction on vehicles', () => {
  it('a user limited to team A sees only team A\'s vehicles in lists, single reads and the amount', async () => {
    const g3 = await newGroup(t);
    const a = await newTeam(t, g3);
    const b = await newTeam(t, g3);
    const inA = await newVehicle(t, g3, { teams: [a] });
    const inB = await newVehicle(t, g3, { teams: [b] });
    await newVehicle(t, g3);
    const limited = await newUser(t, { groupId: g3, role: 'reader', teams: [a] });
    expect((await get(`/api/v4/groups/${g3}/vehicles`, limited.auth)).json.map((v: any) => v.id)).toEqual([inA.id]);
    const other = await get(`/api/v4/groups/${g3}/vehicles/${inB.id}`, limited.auth);
    expect(other.status).toBe(403);
    expect(other.json.code).toBe('ForbiddenDifferentTeam');
    expect((await get(`/api/v4/groups/${g3}/vehicle-amount`, limited.auth)).json.amount).toBe(1);
    // an API key limited to team B, on an unlimited user, sees team B only
    const limitedAdmin = await newUser(t, { groupId: g3, role: 'admin' });
    const key = await inject(t, { method: 'POST', url: `/api/v4/groups/${g3}/api-keys`, headers: limitedAdmin.auth, payload: { user_id: limitedAdmin.userId, teams: [b] } });
    expect(key.status).toBe(201);
    const byKey = await get(`/api/v4/groups/${g3}/vehicles`, { 'x-api-key': key.json.value });
    expect(byKey.json.map((v: any) => v.id)).toEqual([inB.id]);
  });
});
