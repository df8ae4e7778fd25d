/**
 * Team scope of every read keyed by a record, generated from the routes the server registers (as
 * the authorization matrix is): each GET group route whose path or documented query names a
 * device, driver, vehicle, duty, trip, block or vehicle movement is called by a user limited to the
 * team nord with the id of team sud's record. It must refuse (403 ForbiddenDifferentTeam, 404) or
 * answer nothing of sud's. Only the id → value mapping is written here: a new route keyed by such
 * an id is checked the day it is registered, and fails if it lacks the team check or if the data
 * below does not reach it (then seed it here).
 *
 * Regression for issue #15 item 4: GET devices/{id}/history answered a sud device's driver,
 * vehicle and duty to a nord reader while GET devices/{id} answered 403.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createApiKey, hostPrincipal, wholeGroup } from '../../src/domains/auth/service.js';
import { fixedClock } from '../../src/platform/clock.js';
import type { Access, Role } from '../../src/platform/http/access.js';
import { inject, newGroup, newTeam, newUser, setup, type TestApp, type TestUser } from '../helpers/app.js';
import * as fleet from '../helpers/fleet.js';
import { importZip, minimalZip } from '../helpers/gtfs.js';

const DAY = '2026-03-10';
const clock = fixedClock('2026-03-10T09:00:00Z');
const SIDES = ['nord', 'sud'] as const;
type Side = (typeof SIDES)[number];

/** The id parameters that key a read, and each side's record of that kind. */
const KEYS = ['device_id', 'driver_id', 'vehicle_id', 'duty_id', 'trip_id', 'block_id', 'vehicle_movement_id'] as const;
type Key = (typeof KEYS)[number];

interface SideData {
  ids: Record<Key, string>;
  /** What no answer to the other team may contain: the ids and details of this side's team-owned records. */
  identifying: string[];
}

let t: TestApp;
let g: string;
const data = {} as Record<Side, SideData>;
/** A nord-limited user per role, and a whole-group user per role (driver accounts linked to nord's and sud's driver). */
const nordUser = {} as Record<Role, TestUser>;
const wholeUser = {} as Record<Role, TestUser>;

const at = (hhmm: string) => `${DAY}T${hhmm}:00Z`;
const item = (type: string, when: string, fields: Record<string, unknown> = {}) => ({ id: randomUUID(), type, at: at(when), ...fields });

async function seedSide(side: Side, admin: TestUser, operator: TestUser): Promise<SideData> {
  const hex = side === 'nord' ? 'aaaa' : 'bbbb';
  const vehicleId = `${side}-vehicle-q7`;
  const driverId = `d0d0d0d0d0d0d0d0d0d0${hex}`;
  const deviceId = `${side}-device-q7`;
  const tripId = `trip-${side}-1`;
  const blockId = `block-${side}`;
  const details = {
    fleet_number: `${side.toUpperCase()}-FLEET-Q7`, license_plate: `${side.toUpperCase()}-PLATE-Q7`,
    driver_name: `Driver of ${side} Q7`, staff_number: `${side.toUpperCase()}-STAFF-Q7`, label: `Tablet of ${side} Q7`,
  };
  await fleet.newVehicle(t, g, { vehicle_id: vehicleId, fleet_number: details.fleet_number, license_plate: details.license_plate, teams: [side] });
  await fleet.newDriver(t, g, { driver_id: driverId, driver_name: details.driver_name, staff_number: details.staff_number, teams: [side] });
  await fleet.newDevice(t, g, { device_id: deviceId, label: details.label, team_id: side });
  const device = { 'x-api-key': (await createApiKey(t.ctx, hostPrincipal, wholeGroup(g), { device_id: deviceId })).value };

  const reports = await inject(t, {
    method: 'POST', url: `/api/v4/groups/${g}/device/reports`, headers: device,
    payload: {
      items: [
        item('sign_on', '06:50', { driver_id: driverId, vehicle_id: vehicleId }),
        item('device_state', '06:51', { state: { battery_pct: 80, app_version: '4.2.0' } }),
        item('vehicle_movement', '06:58', { kind: 'to_trip_start', service_date: DAY, block_id: blockId, origin: { depot_id: 'D1' }, destination: { stop_id: 'S1' }, started_at: at('06:52'), ended_at: at('06:58'), distance_km: 3 }),
        item('trip_start', '06:59', { trip_id: tripId, service_date: DAY, block_id: blockId }),
        item('trip_event', '07:00', { trip_id: tripId, service_date: DAY, event: 'departure', stop_id: 'S1', stop_sequence: 1, gps_valid: true, lat: 48.85, lon: 2.35 }),
        item('position', '07:05', { lat: 48.855, lon: 2.355, gps_valid: true, trip_id: tripId, service_date: DAY }),
        item('trip_event', '07:20', { trip_id: tripId, service_date: DAY, event: 'arrival', stop_id: 'S3', stop_sequence: 3, gps_valid: true, lat: 48.87, lon: 2.37 }),
        item('trip_end', '07:21', { trip_id: tripId, service_date: DAY }),
      ],
    },
  });
  expect(reports.status, reports.body).toBe(200);
  expect(reports.json.rejected, reports.body).toEqual([]);
  const dutyId: string = reports.json.duties[0].duty_id;
  const [movement] = await t.db.query<{ vehicle_movement_id: string }>('SELECT vehicle_movement_id FROM vehicle_movements WHERE group_id = $1 AND device_id = $2', [g, deviceId]);

  const planning = await inject(t, { method: 'PUT', url: `/api/v4/groups/${g}/planning`, headers: admin.auth, payload: [{ trip_id: tripId, date: DAY.replace(/-/g, ''), vehicle_id: vehicleId, driver_id: driverId }] });
  expect(planning.status, planning.body).toBe(200);
  const sms = await inject(t, { method: 'POST', url: `/api/v4/groups/${g}/notifications/sms`, headers: operator.auth, payload: { to: '+33600000001', message: `to ${side}`, device_id: deviceId } });
  expect(sms.status, sms.body).toBe(201);
  const detour = await inject(t, {
    method: 'PUT', url: `/api/v4/groups/${g}/trip-updates`, headers: operator.auth,
    payload: { update_id: `detour-${side}`, kind: 'detour', trip_id: tripId, start_date: DAY, end_date: DAY, detour: { name: `Works ${side}`, shape: [[2.35, 48.85], [2.34, 48.86], [2.37, 48.87]], skipped_stops: [{ stop_id: 'S2' }], added_stops: [] } },
  });
  expect(detour.status, detour.body).toBe(200);
  const driverAccount = await newUser(t, { groupId: g, role: 'driver', driverId, ...(side === 'nord' ? { teams: ['nord'] } : {}) });
  const rating = await inject(t, { method: 'PUT', url: `/api/v4/groups/${g}/drivers/${driverId}/ratings`, headers: driverAccount.auth, payload: { driver_version: '4.2.0', score: 4 } });
  expect(rating.status, rating.body).toBe(200);
  if (side === 'nord') nordUser.driver = driverAccount;
  else wholeUser.driver = driverAccount;

  return {
    ids: { device_id: deviceId, driver_id: driverId, vehicle_id: vehicleId, duty_id: dutyId, trip_id: tripId, block_id: blockId, vehicle_movement_id: movement!.vehicle_movement_id },
    identifying: [deviceId, driverId, vehicleId, dutyId, movement!.vehicle_movement_id, ...Object.values(details)],
  };
}

/**
 * A duty of nord's vehicle driven by a sud driver with a device of no team (on another trip, so
 * the matrix's sud records stay apart): nord sees the duty, and names the others by id only.
 */
async function seedMixed(admin: TestUser) {
  const vehicleId = 'nord-vehicle-mixed';
  const driverId = 'd0d0d0d0d0d0d0d0d0d0cccc';
  const deviceId = 'mixed-device';
  const hidden = { driver_name: 'Sud driver on a nord bus', staff_number: 'SUD-STAFF-MIXED', label: 'Tablet of no team' };
  await fleet.newVehicle(t, g, { vehicle_id: vehicleId, fleet_number: 'NORD-FLEET-MIXED', teams: ['nord'] });
  await fleet.newDriver(t, g, { driver_id: driverId, driver_name: hidden.driver_name, staff_number: hidden.staff_number, teams: ['sud'] });
  await fleet.newDevice(t, g, { device_id: deviceId, label: hidden.label });
  const device = { 'x-api-key': (await createApiKey(t.ctx, hostPrincipal, wholeGroup(g), { device_id: deviceId })).value };
  const reports = await inject(t, {
    method: 'POST', url: `/api/v4/groups/${g}/device/reports`, headers: device,
    payload: {
      items: [
        item('sign_on', '06:40', { driver_id: driverId, vehicle_id: vehicleId }),
        item('trip_start', '06:59', { trip_id: 'trip-mixed-1', service_date: DAY }),
        item('trip_event', '07:00', { trip_id: 'trip-mixed-1', service_date: DAY, event: 'departure', stop_id: 'S1', stop_sequence: 1, gps_valid: true }),
        item('trip_end', '07:21', { trip_id: 'trip-mixed-1', service_date: DAY }),
      ],
    },
  });
  expect(reports.json.rejected, reports.body).toEqual([]);
  const planning = await inject(t, { method: 'PUT', url: `/api/v4/groups/${g}/planning`, headers: admin.auth, payload: [{ trip_id: 'trip-mixed-1', date: DAY.replace(/-/g, ''), vehicle_id: vehicleId, driver_id: driverId }] });
  expect(planning.status, planning.body).toBe(200);
  return { vehicleId, driverId, deviceId, dutyId: reports.json.duties[0].duty_id as string, hidden };
}
let mixed: Awaited<ReturnType<typeof seedMixed>>;

beforeAll(async () => {
  t = await setup({ clock });
  g = await newGroup(t);
  for (const side of SIDES) await newTeam(t, g, side);
  await importZip(t, g, minimalZip({
    'trips.txt': 'route_id,service_id,trip_id,trip_headsign,direction_id,block_id\nR1,WK,trip-nord-1,Third,0,block-nord\nR1,WK,trip-sud-1,Third,0,block-sud\nR1,WK,trip-mixed-1,Third,0,block-mixed\n',
    'stop_times.txt': 'trip_id,arrival_time,departure_time,stop_id,stop_sequence\n' +
      ['trip-nord-1', 'trip-sud-1', 'trip-mixed-1'].map((id) => `${id},08:00:00,08:00:00,S1,1\n${id},08:10:00,08:11:00,S2,2\n${id},08:20:00,08:20:00,S3,3\n`).join(''),
  }), { publish: true });
  const admin = await newUser(t, { groupId: g, role: 'admin' });
  const operator = await newUser(t, { groupId: g, role: 'operator' });
  for (const side of SIDES) data[side] = await seedSide(side, admin, operator);
  mixed = await seedMixed(admin);
  for (const role of ['admin', 'operator', 'external_reader', 'limited_reader', 'regulator', 'reader', 'technical'] as const) {
    nordUser[role] = await newUser(t, { groupId: g, role, teams: ['nord'] });
    wholeUser[role] = await newUser(t, { groupId: g, role });
  }
});
afterAll(async () => t?.close());

interface KeyedRoute {
  name: string;
  url: string;
  access: Extract<Access, { kind: 'group' }>;
  pathKeys: Key[];
  queryKeys: Key[];
  /** Required query parameters other than the keys (those without a default). */
  required: { name: string; schema: { pattern?: string } }[];
}

const isKey = (k: string): k is Key => (KEYS as readonly string[]).includes(k);

/** Every GET group route keyed by one of KEYS, in its path or among its documented query parameters. */
function keyedRoutes(): KeyedRoute[] {
  const out: KeyedRoute[] = [];
  for (const r of t.app.routeTable) {
    const access = r.access as Access | undefined;
    if (r.method !== 'GET' || access?.kind !== 'group') continue;
    const pathKeys = [...r.url.matchAll(/:([a-z_]+)/g)].map((m) => m[1]!).filter(isKey);
    const query = (r.schema?.['querystring'] ?? {}) as { properties?: Record<string, { pattern?: string; default?: unknown }>; required?: string[] };
    const queryKeys = Object.keys(query.properties ?? {}).filter(isKey);
    if (pathKeys.length + queryKeys.length === 0) continue;
    const required = (query.required ?? []).filter((n) => !isKey(n) && query.properties![n]!.default === undefined).map((n) => ({ name: n, schema: query.properties![n]! }));
    out.push({ name: `GET ${r.url}`, url: r.url, access, pathKeys, queryKeys, required });
  }
  return out;
}

/** A value for a required parameter that is not a key, or an explanation of what to add here. */
function valueOf(p: { name: string; schema: { pattern?: string } }): string {
  if (['date', 'start_date', 'end_date'].includes(p.name)) {
    const forms = [DAY, DAY.replace(/-/g, '')];
    const form = forms.find((f) => !p.schema.pattern || new RegExp(p.schema.pattern).test(f));
    if (form) return form;
  }
  if (p.name === 'driver_version') return '4.2.0';
  throw new Error(`no value for the required query parameter ${p.name}: add one to valueOf()`);
}

/** The URL of a keyed route with each key's value taken from a side (`keySide` for one key, nord for the others). */
function urlOf(r: KeyedRoute, key: Key, keySide: Side): string {
  const val = (k: Key) => data[k === key ? keySide : 'nord'].ids[k];
  const path = r.url.replace(/:([a-z_]+)/g, (_m, name: string) => (name === 'group_id' ? g : isKey(name) ? encodeURIComponent(val(name)) : `:${name}`));
  if (path.includes('/:')) throw new Error(`${r.name}: no value for a path parameter`);
  const query = new URLSearchParams(r.required.map((p): [string, string] => [p.name, valueOf(p)]));
  if (r.queryKeys.includes(key)) query.set(key, val(key));
  return `${path}${query.size ? `?${query}` : ''}`;
}

/** The role a route is called with: reader when it may, else the first role it allows. */
const roleFor = (r: KeyedRoute): Role => (r.access.roles.includes('reader') ? 'reader' : r.access.roles[0]!);

const REFUSALS = ['ForbiddenDifferentTeam', 'ForbiddenDifferentDriver'];

describe('team scope of reads keyed by a record (generated from the route table)', () => {
  it('finds the keyed reads', () => {
    const names = keyedRoutes().map((r) => r.name);
    // a floor, not the list: the routes come from the table
    expect(names.length).toBeGreaterThanOrEqual(15);
    expect(names).toContain('GET /api/v4/groups/:group_id/devices/:device_id/history');
  });

  it('a nord-limited user keyed by a sud record is refused or answered nothing of sud; by nord\'s, answered', async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const r of keyedRoutes()) {
      const role = roleFor(r);
      for (const key of [...r.pathKeys, ...r.queryKeys]) {
        const label = `${r.name} [${key}] as ${role}`;
        let sudUrl: string;
        let nordUrl: string;
        try {
          sudUrl = urlOf(r, key, 'sud');
          nordUrl = urlOf(r, key, 'nord');
        } catch (e) {
          failures.push(`${label}: ${(e as Error).message}`);
          continue;
        }
        const reaches = (body: string, side: Side) => body.includes(data[side].ids[key]) || data[side].identifying.some((v) => body.includes(v));

        // The data reaches the route: a caller with the whole group reads sud's record through it.
        const whole = await inject(t, { url: sudUrl, headers: wholeUser[role].auth });
        if (whole.status !== 200 || !reaches(whole.body, 'sud')) failures.push(`${label}: the seeded sud data does not reach the route (whole group: ${whole.status} ${whole.body.slice(0, 200)})`);

        // Positive control: nord's own record is answered to the nord user.
        const own = await inject(t, { url: nordUrl, headers: nordUser[role].auth });
        if (own.status !== 200 || !reaches(own.body, 'nord')) failures.push(`${label}: nord's own record not answered: ${own.status} ${own.body.slice(0, 200)}`);

        // The check: sud's record is refused, or nothing of sud's is in the answer.
        const other = await inject(t, { url: sudUrl, headers: nordUser[role].auth });
        if (other.status === 403) {
          if (!REFUSALS.includes(other.json?.code)) failures.push(`${label}: 403 ${other.json?.code}, expected one of ${REFUSALS.join(', ')}`);
        } else if (other.status === 200) {
          const leaked = data.sud.identifying.filter((v) => other.body.includes(v));
          if (leaked.length > 0) failures.push(`${label}: answers sud's ${leaked.join(', ')}`);
        } else if (other.status !== 404) {
          failures.push(`${label}: ${other.status} ${other.body.slice(0, 200)}`);
        }
        checked++;
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(20);
  });
});

describe('records of nord naming records nord does not see', () => {
  it('name them by id only: no name, staff number or label of another team\'s driver or of a device of no team', async () => {
    const get = (url: string, user: TestUser) => inject(t, { url: `/api/v4/groups/${g}${url}`, headers: user.auth });
    const reads = {
      duty: `/duties/${mixed.dutyId}`,
      trip: `/trips/trip-mixed-1?date=${DAY}`,
      planning: `/planning?date=${DAY.replace(/-/g, '')}&vehicle_id=${mixed.vehicleId}`,
      livemap: '/live-map/vehicles',
      duties: `/duties?start_date=${DAY}&end_date=${DAY}&vehicle_id=${mixed.vehicleId}`,
    };
    for (const [what, url] of Object.entries(reads)) {
      const nord = await get(url, nordUser.reader);
      expect(nord.status, `${what}: ${nord.body}`).toBe(200);
      expect(nord.body, what).toContain(mixed.driverId);
      for (const detail of Object.values(mixed.hidden)) expect(nord.body, `${what} shows ${detail}`).not.toContain(detail);
      // the same read by a caller with the whole group shows the driver's name
      expect((await get(url, wholeUser.reader)).body, what).toContain(what === 'duty' || what === 'duties' ? mixed.driverId : mixed.hidden.driver_name);
    }
    const trip = (await get(reads.trip, nordUser.reader)).json;
    expect(trip.drivers).toEqual([{ id: mixed.driverId, driver_name: null, staff_number: null, teams: null }]);
    expect(trip.devices).toEqual([{ id: mixed.deviceId, label: null }]);
    expect(trip.vehicles).toEqual([{ id: mixed.vehicleId, fleet_number: 'NORD-FLEET-MIXED', license_plate: expect.any(String), teams: ['nord'] }]);
    const [plan] = (await get(reads.planning, nordUser.reader)).json;
    expect(plan).toMatchObject({ driver_id: mixed.driverId, driver_name: null, staff_number: null, vehicle_id: mixed.vehicleId, fleet_number: 'NORD-FLEET-MIXED' });
    const onMap = (await get(reads.livemap, nordUser.reader)).json.find((v: { duty_id: string }) => v.duty_id === mixed.dutyId);
    expect(onMap).toMatchObject({ driver_id: mixed.driverId, driver_name: null, fleet_number: 'NORD-FLEET-MIXED' });
    // the device of no team is the whole group's: its history too
    const history = await get(`/devices/${mixed.deviceId}/history`, nordUser.reader);
    expect(history.status).toBe(403);
    expect(history.json.code).toBe('ForbiddenDifferentTeam');
    expect((await get(`/devices/${mixed.deviceId}/history`, wholeUser.reader)).json.state).toMatchObject({ driver_id: mixed.driverId, vehicle_id: mixed.vehicleId });
  });
});
