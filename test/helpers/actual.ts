/** Factories for the actual side: drivers, vehicles, devices and their credentials, report items. */
import { randomUUID } from 'node:crypto';
import { objectId } from '../../src/platform/ids.js';
import { createApiKey } from '../../src/domains/auth/service.js';
import { inject, uniq, type TestApp } from './app.js';

export async function newDriver(t: TestApp, groupId: string, o: { code?: string; teams?: string[]; archived?: boolean } = {}): Promise<string> {
  const id = objectId();
  await t.db.query(
    'INSERT INTO drivers (group_id, driver_id, driver_name, staff_number, teams, code, archived) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [groupId, id, `Driver ${id.slice(-4)}`, uniq('S'), o.teams ?? [], o.code ?? null, o.archived ?? false],
  );
  return id;
}

export async function newVehicle(t: TestApp, groupId: string, o: { teams?: string[]; status?: string; vehicleId?: string } = {}): Promise<string> {
  const id = o.vehicleId ?? uniq('bus');
  await t.db.query(
    'INSERT INTO vehicles (group_id, vehicle_id, fleet_number, license_plate, teams, status) VALUES ($1, $2, $3, $4, $5, $6)',
    [groupId, id, id.toUpperCase(), uniq('AB-'), o.teams ?? [], o.status ?? 'active'],
  );
  return id;
}

/** A device and an API key bound to it: the credential a driver application uses. */
export async function newDevice(t: TestApp, groupId: string, deviceId = uniq('dev')): Promise<{ deviceId: string; auth: Record<string, string> }> {
  await t.db.query('INSERT INTO devices (group_id, device_id, label) VALUES ($1, $2, $3)', [groupId, deviceId, `Tablet ${deviceId}`]);
  const key = await createApiKey(t.ctx, { userId: null } as never, groupId, { device_id: deviceId });
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
