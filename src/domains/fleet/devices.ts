/** Devices (the driver application's tablets): provisioning and reads. The table is from 0001. */
import type { AppContext } from '../../platform/context.js';
import type { Queryable } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { errors, invalid } from '../../platform/http/errors.js';
import { forbiddenDifferentTeam, teamParam, teamVisibleSql, teamsVisible } from '../../platform/http/teams.js';
import type { CreateDeviceBody, DeviceRecord, PatchDeviceBody } from './schemas.js';
import { checkTeamsWrite, teamsOf } from './teams.js';
import { vehicleTeams } from './vehicles.js';

interface DeviceRow {
  device_id: string;
  label: string | null;
  vehicle_id: string | null;
  team_id: string | null;
  archived: boolean;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'device_id, label, vehicle_id, team_id, archived, created_at, updated_at';

const deviceRecord = (r: DeviceRow): DeviceRecord => ({ ...r, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() });

export async function listDevices(db: Queryable, scope: GroupScope, q: { archived: boolean }): Promise<DeviceRecord[]> {
  const rows = await db.query<DeviceRow>(
    `SELECT ${COLUMNS} FROM devices WHERE group_id = $1 AND ${teamVisibleSql('team_id', 2)} AND archived = $3 ORDER BY device_id`,
    [scope.groupId, teamParam(scope), q.archived],
  );
  return rows.map(deviceRecord);
}

async function visibleDevice(db: Queryable, scope: GroupScope, deviceId: string): Promise<DeviceRow> {
  const row = (await db.query<DeviceRow>(`SELECT ${COLUMNS} FROM devices WHERE group_id = $1 AND device_id = $2`, [scope.groupId, deviceId]))[0];
  if (!row) throw errors.notFound('DeviceNotFound', `No device ${JSON.stringify(deviceId)} in group ${JSON.stringify(scope.groupId)}`);
  if (!teamsVisible(scope, teamsOf(row.team_id))) throw forbiddenDifferentTeam(`Device ${row.device_id}`);
  return row;
}

export async function getDevice(db: Queryable, scope: GroupScope, deviceId: string): Promise<DeviceRecord> {
  return deviceRecord(await visibleDevice(db, scope, deviceId));
}

/** The teams of a device (none or one), or null when the group has no such device (notifications name devices). */
export async function deviceTeams(db: Queryable, groupId: string, deviceId: string): Promise<string[] | null> {
  const rows = await db.query<{ team_id: string | null }>('SELECT team_id FROM devices WHERE group_id = $1 AND device_id = $2', [groupId, deviceId]);
  return rows[0] ? teamsOf(rows[0].team_id) : null;
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
  const rows = await ctx.db.query<DeviceRow>(
    `INSERT INTO devices (group_id, device_id, label, vehicle_id, team_id, archived, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (group_id, device_id) DO NOTHING RETURNING ${COLUMNS}`,
    [scope.groupId, input.device_id, input.label ?? null, input.vehicle_id ?? null, input.team_id ?? null, input.archived ?? false, ctx.clock.now()],
  );
  if (!rows[0]) throw errors.conflict('DeviceExists', `Device ${JSON.stringify(input.device_id)} already exists in group ${scope.groupId}`);
  return deviceRecord(rows[0]);
}

/** PATCH: only the fields sent change; vehicle_id null unmounts the device; archived: true retires it. */
export async function updateDevice(ctx: AppContext, scope: GroupScope, deviceId: string, patch: PatchDeviceBody): Promise<DeviceRecord> {
  const current = await visibleDevice(ctx.db, scope, deviceId);
  const next = patch.team_id === undefined ? undefined : teamsOf(patch.team_id);
  await checkTeamsWrite(ctx.db, scope, `Device ${current.device_id}`, { current: teamsOf(current.team_id), next, field: 'team_id' });
  await checkVehicle(ctx.db, scope, patch.vehicle_id);
  const set = (k: keyof PatchDeviceBody) => patch[k] !== undefined;
  const rows = await ctx.db.query<DeviceRow>(
    `UPDATE devices SET
       label = CASE WHEN $3 THEN $4 ELSE label END,
       vehicle_id = CASE WHEN $5 THEN $6 ELSE vehicle_id END,
       team_id = CASE WHEN $7 THEN $8 ELSE team_id END,
       archived = COALESCE($9, archived),
       updated_at = $10
     WHERE group_id = $1 AND device_id = $2 RETURNING ${COLUMNS}`,
    [scope.groupId, current.device_id, set('label'), patch.label ?? null, set('vehicle_id'), patch.vehicle_id ?? null, set('team_id'), patch.team_id ?? null, patch.archived ?? null, ctx.clock.now()],
  );
  return deviceRecord(rows[0]!);
}
