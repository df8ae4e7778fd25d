import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import { newDevice, newVehicle } from '../helpers/fleet.js';

let t: TestApp;
let g: string;
let a: string;
let b: string;
let admin: TestUser;
let technical: TestUser;
beforeAll(async () => {
  t = await setup();
  g = await newGroup(t);
  a = await newTeam(t, g);
  b = await newTeam(t, g);
  admin = await newUser(t, { groupId: g, role: 'admin' });
  technical = await newUser(t, { groupId: g, role: 'technical' });
});
afterAll(async () => t?.close());

const call = (method: 'GET' | 'POST' | 'PATCH', url: string, headers: Record<string, string>, payload?: object) =>
  inject(t, { method, url: `/api/v4/groups/${g}${url}`, headers, ...(payload ? { payload } : {}) });

describe('devices', () => {
  it('are provisioned by admins and technical staff, mounted in a vehicle or not', async () => {
    const v = await newVehicle(t, g, { teams: [a] });
    const r = await call('POST', '/devices', technical.auth, { device_id: 'tab-01', label: 'Tablet 1', vehicle_id: v.id, team_id: a });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ device_id: 'tab-01', label: 'Tablet 1', vehicle_id: v.id, team_id: a, archived: false });
    expect(await t.db.query('SELECT vehicle_id, team_id FROM devices WHERE group_id = $1 AND device_id = $2', [g, 'tab-01'])).toEqual([{ vehicle_id: v.id, team_id: a }]);
    expect((await call('POST', '/devices', admin.auth, { device_id: 'tab-01' })).json.code).toBe('DeviceExists');
    const unknownVehicle = await call('POST', '/devices', admin.auth, { device_id: 'tab-02', vehicle_id: 'ghost' });
    expect(unknownVehicle.status).toBe(422);
    expect(unknownVehicle.json.detail[0].loc).toEqual(['body', 'vehicle_id']);
    const unknownTeam = await call('POST', '/devices', admin.auth, { device_id: 'tab-03', team_id: 'ghost' });
    expect(unknownTeam.json.detail[0].loc).toEqual(['body', 'team_id']);
    const operator = await newUser(t, { groupId: g, role: 'operator' });
    expect((await call('POST', '/devices', operator.auth, { device_id: 'tab-04' })).json.code).toBe('CreateDeviceRoleRequired');
  });

  it('PATCH unmounts (vehicle_id null), moves and archives; archived devices leave the default list', async () => {
    const v = await newVehicle(t, g);
    const d = await newDevice(t, g, { vehicle_id: v.id, label: 'old' });
    const unmounted = await call('PATCH', `/devices/${d.device_id}`, admin.auth, { vehicle_id: null });
    expect(unmounted.json).toMatchObject({ vehicle_id: null, label: 'old' });
    const archived = await call('PATCH', `/devices/${d.device_id}`, admin.auth, { archived: true });
    expect(archived.json.archived).toBe(true);
    const list = await call('GET', '/devices', technical.auth);
    expect(list.json.map((x: any) => x.device_id)).not.toContain(d.device_id);
    const retired = await call('GET', '/devices?archived=true', technical.auth);
    expect(retired.json.map((x: any) => x.device_id)).toContain(d.device_id);
    expect((await call('GET', `/devices/${d.device_id}`, technical.auth)).json.archived).toBe(true);
    expect((await call('GET', '/devices/none', technical.auth)).json.code).toBe('DeviceNotFound');
    expect((await call('PATCH', '/devices/none', admin.auth, { label: 'x' })).json.code).toBe('DeviceNotFound');
  });

  it('a user limited to team A sees and writes team A devices only', async () => {
    const inA = await newDevice(t, g, { team_id: a });
    const inB = await newDevice(t, g, { team_id: b });
    const limited = await newUser(t, { groupId: g, role: 'technical', teams: [a] });
    const ids = (await call('GET', '/devices', limited.auth)).json.map((x: any) => x.device_id);
    expect(ids).toContain(inA.device_id);
    expect(ids).not.toContain(inB.device_id);
    expect((await call('GET', `/devices/${inB.device_id}`, limited.auth)).json.code).toBe('ForbiddenDifferentTeam');
    expect((await call('PATCH', `/devices/${inB.device_id}`, limited.auth, { label: 'mine now' })).json.code).toBe('ForbiddenDifferentTeam');
    expect((await call('POST', '/devices', limited.auth, { device_id: 'b-dev', team_id: b })).json.code).toBe('ForbiddenDifferentTeam');
    const vehicleB = await newVehicle(t, g, { teams: [b] });
    expect((await call('PATCH', `/devices/${inA.device_id}`, limited.auth, { vehicle_id: vehicleB.id })).json.code).toBe('ForbiddenDifferentTeam');
    expect(await t.db.query('SELECT label, vehicle_id FROM devices WHERE group_id = $1 AND device_id = $2', [g, inB.device_id])).toEqual([{ label: null, vehicle_id: null }]);
  });
});

describe('depots', () => {
  it('are created by admins and listed to the spec\'s roles', async () => {
    const r = await call('POST', '/depots', admin.auth, { depot_id: 'north-depot', name: 'North depot', team_id: a, address: '1 rue du Dépôt', latitude: 48.85, longitude: 2.35 });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ depot_id: 'north-depot', name: 'North depot', team_id: a, latitude: 48.85, longitude: 2.35 });
    expect((await call('POST', '/depots', admin.auth, { depot_id: 'north-depot', name: 'Again' })).json.code).toBe('DepotExists');
    const half = await call('POST', '/depots', admin.auth, { depot_id: 'x', name: 'x', latitude: 1 });
    expect(half.status).toBe(422);
    expect(half.json.detail[0].loc).toEqual(['body', 'longitude']);
    const driver = await newUser(t, { groupId: g, role: 'driver' });
    const list = await call('GET', '/depots', driver.auth);
    expect(list.status).toBe(200);
    expect(list.json.map((d: any) => d.depot_id)).toContain('north-depot');
    expect((await call('GET', '/depots', admin.auth)).json.code).toBe('ListDepotsRoleRequired');
  });

  it('PATCH changes a depot; lists are filtered by team', async () => {
    await call('POST', '/depots', admin.auth, { depot_id: 'south-depot', name: 'South', team_id: b });
    const r = await call('PATCH', '/depots/south-depot', admin.auth, { name: 'South depot', latitude: 45.1, longitude: 5.7 });
    expect(r.json).toMatchObject({ name: 'South depot', team_id: b, latitude: 45.1, longitude: 5.7 });
    expect(await t.db.query('SELECT name FROM depots WHERE group_id = $1 AND depot_id = $2', [g, 'south-depot'])).toEqual([{ name: 'South depot' }]);
    expect((await call('PATCH', '/depots/none', admin.auth, { name: 'x' })).json.code).toBe('DepotNotFound');
    const limited = await newUser(t, { groupId: g, role: 'reader', teams: [a] });
    expect((await call('GET', '/depots', limited.auth)).json.map((d: any) => d.depot_id)).toEqual(['north-depot']);
  });
});
