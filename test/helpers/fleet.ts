/** Factories for drivers, vehicles, devices and depots, made through the services (as provisioning would). */
import type { GroupScope } from '../../src/platform/http/access.js';
import { createDevice } from '../../src/domains/fleet/devices.js';
import { createDriver } from '../../src/domains/fleet/drivers.js';
import type { CreateDeviceBody, CreateDriverBody, CreateVehicleBody } from '../../src/domains/fleet/schemas.js';
import { createVehicle } from '../../src/domains/fleet/vehicles.js';
import { inject, uniq, type TestApp } from './app.js';

/** The standing of a whole-group admin: what provisioning factories act as. */
export const adminScope = (groupId: string): GroupScope => ({ groupId, role: 'admin', teams: null, driverId: null, timezone: 'Europe/Paris', features: [] });

export async function newDriver(t: TestApp, groupId: string, o: Partial<CreateDriverBody> = {}) {
  return createDriver(t.ctx, adminScope(groupId), { driver_name: `Driver ${uniq('d')}`, staff_number: uniq('S'), ...o });
}

export async function newVehicle(t: TestApp, groupId: string, o: Partial<CreateVehicleBody> = {}) {
  const id = uniq('v');
  return createVehicle(t.ctx, adminScope(groupId), { vehicle_id: id, fleet_number: id.toUpperCase(), license_plate: uniq('AB-'), ...o });
}

export async function newDevice(t: TestApp, groupId: string, o: Partial<CreateDeviceBody> = {}) {
  return createDevice(t.ctx, adminScope(groupId), { device_id: uniq('dev'), ...o });
}

/** GET a CSV export: the body as text. */
export async function getCsv(t: TestApp, url: string, headers: Record<string, string>) {
  const r = await inject(t, { url, headers });
  return { status: r.status, headers: r.headers, text: r.body, json: r.json };
}

/** POST a CSV file to an import endpoint. */
export function postCsv(t: TestApp, url: string, text: string, headers: Record<string, string>) {
  return inject(t, { method: 'POST', url, headers: { ...headers, 'content-type': 'text/csv' }, payload: text });
}

export const CRLF = '\r\n';
export const lines = (...l: string[]) => l.map((x) => x + CRLF).join('');
