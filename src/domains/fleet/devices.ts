/** Devices (the driver application's tablets): provisioning and reads. The table is from 0001. */
import type { AppContext } from '../../platform/context.js';
import type { Queryable } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { errors, invalid } from '../../platform/http/errors.js';
import { forbiddenDifferentTeam, teamParam, teamsVisible } from '../../platform/http/teams.js';
import { insertDevice, selectDevice, selectDevices, selectDevicesByIds, updateDeviceRow, type DeviceRow } from './queries/devices.js';
import type { CreateDeviceBody, DeviceRecord, PatchDeviceBody } from './schemas.js';
import { checkTeamsWrite, teamsOf } from './teams.js';
import { vehicleTeams } from './vehicles.js';

const deviceRecord = (r: DeviceRow): DeviceRecord => ({ ...r, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() });

export async function listDevices(db: Queryable, scope: GroupScope, q: { archived: boolean }): Promise<DeviceRecord[]> {
  const rows = await selectDevices(db, scope.groupId, teamParam(scope), q.archived);
  return rows.map(deviceRecord);
}

async function visibleDevice(db: Queryable, scope: GroupScope, deviceId: string): Promise<DeviceRow> {
  const row = await selectDevice(db, scope.groupId, deviceId);
  if (!row) throw errors.notFound('DeviceNotFound', `No device ${JSON.stringify(deviceId)} in group ${JSON.stringify(scope.groupId)}`);
  if (!teamsVisible(scope, teamsOf(row.team_id))) throw forbiddenDifferentTeam(`Device ${row.device_id}`);
  return row;
}

export async function getDevice(db: Queryable, scope: GroupScope, deviceId: string): Promise<DeviceRecord> {
  return deviceRecord(await visibleDevice(db, scope, deviceId));
}

/** The teams of a device (none or one), or null when the group has no such device (notifications name devices). */
export async function deviceTeams(db: Queryable, groupId: string, deviceId: string): Promise<string[] | null> {
  const row = await selectDevice(db, groupId, deviceId);
  return row ? teamsOf(row.team_id) : null;
}

/** The devices of these ids, whatever their teams. */
export function devicesByIds(db: Queryable, groupId: string, ids: readonly string[]): Promise<DeviceRow[]> {
  return selectDevicesByIds(db, groupId, ids);
}

/** The vehicle a device is mounted in must exist in the group and be seen by the caller. */
async function checkVehicle(db: Queryable, scope: GroupScope, vehicleId: string | null | undefined) {
  if (!vehicleId) return;
  const teams = await vehicleTeams(db, scope.groupId, vehicleId);
  if (teams === null) throw invalid(['body', 'vehicle_id'], `No vehicle ${JSON.stringify(vehicleId)} in group ${scope.groupId}`, 'value_error', vehicleId);
  if (!teamsVisible(scope, teams)) throw forbiddenDifferentTeam(`Vehicle ${vehicleId}`);
}

export async function createDevice(ctx: AppContext, scope: GroupScope, input: CreateDeviceBody): Promise<DeviceRecord> {
  await checkTeamsWrite(ctx.db, scope, 'The device', { next: teamsOf(input.team_id), field: 'team_id' });
  await checkVehicle(ctx.db, scope, input.vehicle_id);
  const row = await insertDevice(ctx.db, scope.groupId, {
    device_id: input.device_id, label: input.label ?? null, vehicle_id: input.vehicle_id ?? null, team_id: input.team_id ?? null, archived: input.archived ?? false,
  }, ctx.clock.now());
  if (!row) throw errors.conflict('DeviceExists', `Device ${JSON.stringify(input.device_id)} already exists in group ${scope.groupId}`);
  return deviceRecord(row);
}

/** PATCH: only the fields sent change; vehicle_id null unmounts the device; archived: true retires it. */
export async function updateDevice(ctx: AppContext, scope: GroupScope, deviceId: string, patch: PatchDeviceBody): Promise<DeviceRecord> {
  const current = await visibleDevice(ctx.db, scope, deviceId);
  const next = patch.team_id === undefined ? undefined : teamsOf(patch.team_id);
  await checkTeamsWrite(ctx.db, scope, `Device ${current.device_id}`, { current: teamsOf(current.team_id), next, field: 'team_id' });
  await checkVehicle(ctx.db, scope, patch.vehicle_id);
  const set = (k: keyof PatchDeviceBody) => patch[k] !== undefined;
  const row = await updateDeviceRow(ctx.db, scope.groupId, current.device_id, {
    setLabel: set('label'), label: patch.label ?? null, setVehicle: set('vehicle_id'), vehicle_id: patch.vehicle_id ?? null,
    setTeam: set('team_id'), team_id: patch.team_id ?? null, archived: patch.archived ?? null,
  }, ctx.clock.now());
  return deviceRecord(row);
}
