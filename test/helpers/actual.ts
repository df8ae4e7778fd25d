/** Factories for the actual side: drivers, vehicles, devices and their credentials, report items. */
import { randomUUID } from 'node:crypto';
import { createApiKey, hostPrincipal, wholeGroup } from '../../src/domains/auth/service.js';
import { inject, uniq, type TestApp } from './app.js';
import * as fleet from './fleet.js';

/** A driver id (made through the fleet service). */
export async function newDriver(t: TestApp, groupId: string, o: { code?: string; teams?: string[]; archived?: boolean } = {}): Promise<string> {
  return (await fleet.newDriver(t, groupId, o)).id;
}

/** A vehicle id (made through the fleet service). */
export async function newVehicle(t: TestApp, groupId: string, o: { teams?: string[]; status?: 'active' | 'maintenance' | 'out_of_service' | 'archived'; vehicleId?: string } = {}): Promise<string> {
  const { vehicleId, ...rest } = o;
  return (await fleet.newVehicle(t, groupId, { ...rest, ...(vehicleId ? { vehicle_id: vehicleId } : {}) })).id;
}

/** A device and an API key bound to it: the credential a driver application uses. */
export async function newDevice(t: TestApp, groupId: string, deviceId = uniq('dev')): Promise<{ deviceId: string; auth: Record<string, string> }> {
  await fleet.newDevice(t, groupId, { device_id: deviceId, label: `Tablet ${deviceId}` });
  const key = await createApiKey(t.ctx, hostPrincipal, wholeGroup(groupId), { device_id: deviceId });
  return { deviceId, auth: { 'x-api-key': key.value } };
}

export type Item = Record<string, unknown> & { id: string; type: string; at: string };

export const item = (type: string, at: Date | string, fields: Record<string, unknown> = {}): Item => ({
  id: randomUUID(),
  type,
  at: typeof at === 'string' ? at : at.toISOString(),
  ...fields,
});

export async function send(t: TestApp, groupId: string, auth: Record<string, string>, items: unknown[]) {
  return inject(t, { method: 'POST', url: `/api/v4/groups/${groupId}/device/reports`, headers: auth, payload: { items } });
}
