/** Vehicles: provisioning, reads (private and public), the amount, and their datahub file. */
import type { AppContext } from '../../platform/context.js';
import { violatedConstraint, type Queryable } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { errors } from '../../platform/http/errors.js';
import { forbiddenDifferentTeam, teamParam, teamsVisible, teamsVisibleSql } from '../../platform/http/teams.js';
import type { CsvTable } from './datahub.js';
import { checkTeamsWrite } from './teams.js';
import {
  Capacity, FleetNumber, LicensePlate, Teams, VEHICLE_STATUSES, VehicleComment, VehicleId, VehicleStatus,
  type CreateVehicleBody, type PatchVehicleBody, type PublicVehicleRecord, type VehicleAmount, type VehicleRecord,
} from './schemas.js';

interface VehicleRow {
  vehicle_id: string;
  fleet_number: string;
  license_plate: string;
  teams: string[];
  comment: string | null;
  status: VehicleStatus;
  capacity: number | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'vehicle_id, fleet_number, license_plate, teams, comment, status, capacity, created_at, updated_at';

/** spec: Resources, Vehicle: columns id;fleet_number;license_plate;teams;comment;status;capacity. */
export const VEHICLES_CSV: CsvTable = {
  noun: 'vehicle',
  table: 'vehicles',
  key: 'vehicle_id',
  unique: { db: 'license_plate', constraint: 'vehicles_license_plate_key' },
  columns: [
    { csv: 'id', db: 'vehicle_id', cell: 'text', required: true, schema: VehicleId },
    { csv: 'fleet_number', db: 'fleet_number', cell: 'text', required: true, schema: FleetNumber },
    { csv: 'license_plate', db: 'license_plate', cell: 'text', required: true, schema: LicensePlate },
    { csv: 'teams', db: 'teams', cell: 'list', required: false, schema: Teams },
    { csv: 'comment', db: 'comment', cell: 'text', required: false, schema: VehicleComment },
    { csv: 'status', db: 'status', cell: 'text', required: true, schema: VehicleStatus },
    { csv: 'capacity', db: 'capacity', cell: 'integer', required: false, schema: Capacity },
  ],
};

function vehicleRecord(r: VehicleRow): VehicleRecord {
  return { id: r.vehicle_id, fleet_number: r.fleet_number, license_plate: r.license_plate, teams: r.teams, comment: r.comment, status: r.status, capacity: r.capacity, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() };
}

function publicRecord(r: VehicleRow): PublicVehicleRecord {
  return { id: r.vehicle_id, fleet_number: r.fleet_number, status: r.status, capacity: r.capacity };
}

/** Without a statuses filter, lists show the vehicles in the network: every status but archived. */
export const CURRENT_STATUSES = VEHICLE_STATUSES.filter((s) => s !== 'archived');

async function selectVehicles(db: Queryable, groupId: string, teams: string[] | null, statuses: readonly VehicleStatus[] | undefined): Promise<VehicleRow[]> {
  return db.query<VehicleRow>(
    `SELECT ${COLUMNS} FROM vehicles WHERE group_id = $1 AND ${teamsVisibleSql('teams', 2)} AND status = ANY($3) ORDER BY vehicle_id`,
    [groupId, teams, [...(statuses ?? CURRENT_STATUSES)]],
  );
}

export async function listVehicles(db: Queryable, scope: GroupScope, statuses: readonly VehicleStatus[] | undefined): Promise<VehicleRecord[]> {
  return (await selectVehicles(db, scope.groupId, teamParam(scope), statuses)).map(vehicleRecord);
}

/** spec: GET vehicles/public: no credential, so no team scope: every vehicle of the group, public fields only. */
export async function listPublicVehicles(db: Queryable, groupId: string, statuses: readonly VehicleStatus[] | undefined): Promise<PublicVehicleRecord[]> {
  return (await selectVehicles(db, groupId, null, statuses)).map(publicRecord);
}

async function visibleVehicle(db: Queryable, scope: GroupScope, vehicleId: string): Promise<VehicleRow> {
  const row = (await db.query<VehicleRow>(`SELECT ${COLUMNS} FROM vehicles WHERE group_id = $1 AND vehicle_id = $2`, [scope.groupId, vehicleId]))[0];
  if (!row) throw errors.notFound('VehicleNotFound', `No vehicle ${JSON.stringify(vehicleId)} in group ${JSON.stringify(scope.groupId)}`);
  if (!teamsVisible(scope, row.teams)) throw forbiddenDifferentTeam(`Vehicle ${row.vehicle_id}`);
  return row;
}

export async function getVehicle(db: Queryable, scope: GroupScope, vehicleId: string): Promise<VehicleRecord> {
  return vehicleRecord(await visibleVehicle(db, scope, vehicleId));
}

/** The teams of a vehicle, or null when the group has no such vehicle (devices are mounted in vehicles). */
export async function vehicleTeams(db: Queryable, groupId: string, vehicleId: string): Promise<string[] | null> {
  const rows = await db.query<{ teams: string[] }>('SELECT teams FROM vehicles WHERE group_id = $1 AND vehicle_id = $2', [groupId, vehicleId]);
  return rows[0]?.teams ?? null;
}

export async function vehicleAmount(db: Queryable, scope: GroupScope): Promise<VehicleAmount> {
  const rows = await db.query<{ status: VehicleStatus; n: number }>(
    `SELECT status, count(*) AS n FROM vehicles WHERE group_id = $1 AND ${teamsVisibleSql('teams', 2)} GROUP BY status`,
    [scope.groupId, teamParam(scope)],
  );
  const by_status = Object.fromEntries(VEHICLE_STATUSES.map((s) => [s, 0])) as Record<VehicleStatus, number>;
  for (const r of rows) by_status[r.status] = r.n;
  return { amount: CURRENT_STATUSES.reduce((sum, s) => sum + by_status[s], 0), by_status };
}

function vehicleConflict(err: unknown, input: { vehicle_id?: string | undefined; license_plate?: string | undefined }, groupId: string): never {
  const constraint = violatedConstraint(err, '23505');
  if (constraint === 'vehicles_pkey') throw errors.conflict('VehicleExists', `Vehicle ${JSON.stringify(input.vehicle_id)} already exists in group ${groupId}`);
  if (constraint === 'vehicles_license_plate_key') throw errors.conflict('LicensePlateTaken', `Another vehicle of group ${groupId} has the license plate ${JSON.stringify(input.license_plate)}`);
  throw err;
}

export async function createVehicle(ctx: AppContext, scope: GroupScope, input: CreateVehicleBody): Promise<VehicleRecord> {
  const teams = input.teams ?? [];
  await checkTeamsWrite(ctx.db, scope, 'The vehicle', { next: teams });
  try {
    const rows = await ctx.db.query<VehicleRow>(
      `INSERT INTO vehicles (group_id, vehicle_id, fleet_number, license_plate, teams, comment, status, capacity, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING ${COLUMNS}`,
      [scope.groupId, input.vehicle_id, input.fleet_number, input.license_plate, teams, input.comment ?? null, input.status ?? 'active', input.capacity ?? null, ctx.clock.now()],
    );
    return vehicleRecord(rows[0]!);
  } catch (err) {
    vehicleConflict(err, input, scope.groupId);
  }
}

/** PATCH: only the fields sent change; `status: archived` archives (never a deletion). */
export async function updateVehicle(ctx: AppContext, scope: GroupScope, vehicleId: string, patch: PatchVehicleBody): Promise<VehicleRecord> {
  const current = await visibleVehicle(ctx.db, scope, vehicleId);
  await checkTeamsWrite(ctx.db, scope, `Vehicle ${current.vehicle_id}`, { current: current.teams, next: patch.teams });
  const set = (k: keyof PatchVehicleBody) => patch[k] !== undefined;
  try {
    const rows = await ctx.db.query<VehicleRow>(
      `UPDATE vehicles SET
         fleet_number = COALESCE($3, fleet_number),
         license_plate = COALESCE($4, license_plate),
         teams = COALESCE($5, teams),
         comment = CASE WHEN $6 THEN $7 ELSE comment END,
         status = COALESCE($8, status),
         capacity = CASE WHEN $9 THEN $10::integer ELSE capacity END,
         updated_at = $11
       WHERE group_id = $1 AND vehicle_id = $2 RETURNING ${COLUMNS}`,
      [
        scope.groupId, current.vehicle_id, patch.fleet_number ?? null, patch.license_plate ?? null, patch.teams ?? null,
        set('comment'), patch.comment ?? null, patch.status ?? null, set('capacity'), patch.capacity ?? null, ctx.clock.now(),
      ],
    );
    return vehicleRecord(rows[0]!);
  } catch (err) {
    vehicleConflict(err, patch, scope.groupId);
  }
}
