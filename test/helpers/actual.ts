/** Factories for the actual side: drivers, vehicles, devices and their credentials, report items. */
import { randomUUID } from 'node:crypto';
import { createApiKey, hostPrincipal, wholeGroup } from '../../src/domains/auth/service.js';
import type { DeviceReportItem } from '../../src/client/index.js';
import { uniq, type TestApp } from './app.js';
import { clientOf } from './client.js';
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

/** An item of a type, its fields typed by the document (DeviceReportItem): a drift fails the type check. */
export type ItemOf<K extends DeviceReportItem['type']> = Extract<DeviceReportItem, { type: K }>;
type Fields<K extends DeviceReportItem['type']> = Omit<ItemOf<K>, 'id' | 'type' | 'at'>;

export function item<K extends DeviceReportItem['type']>(type: K, at: Date | string, ...fields: {} extends Fields<K> ? [Fields<K>?] : [Fields<K>]): ItemOf<K> & Item {
  return { id: randomUUID(), type, at: typeof at === 'string' ? at : at.toISOString(), ...fields[0] } as ItemOf<K> & Item;
}

/** An item the document does not allow (a test of what the service refuses). */
export const badItem = (type: string, at: Date | string, fields: Record<string, unknown> = {}): Item => ({
  id: randomUUID(),
  type,
  at: typeof at === 'string' ? at : at.toISOString(),
  ...fields,
});

/**
 * Sends a batch through the generated client. Items are the document's (DeviceReportItem); a test
 * of bad items passes them as `unknown` values made by badItem, which the service answers item by item.
 */
export async function send(t: TestApp, groupId: string, auth: Record<string, string>, items: readonly unknown[]) {
  const r = await clientOf(t.app).POST('/api/v4/groups/{group_id}/device/reports', {
    params: { path: { group_id: groupId } },
    headers: auth,
    body: { items: items as DeviceReportItem[] },
  });
  const text = r.response.status === 204 ? '' : JSON.stringify(r.data ?? r.error ?? null);
  return { status: r.response.status, headers: Object.fromEntries(r.response.headers.entries()), body: text, json: (r.data ?? r.error) as any, data: r.data };
}
