/** Vehicles: provisioning, reads (private and public), the amount, and their datahub file. */
import type { AppContext } from '../../platform/context.js';
import { violatedConstraint, type Queryable } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { errors } from '../../platform/http/errors.js';
import { forbiddenDifferentTeam, teamParam, teamsVisible } from '../../platform/http/teams.js';
import type { CsvTable } from './datahub.js';
import {
  countVehiclesByStatus, insertVehicle, selectVehicle, selectVehicles, selectVehiclesByIdOrPlate, selectVehiclesByIds, selectVehicleTeams, updateVehicleRow, type VehicleRow,
} from './queries/vehicles.js';
import { checkTeamsWrite } from './teams.js';
import {
  Capacity, FleetNumber, LicensePlate, Teams, VEHICLE_STATUSES, VehicleComment, VehicleId, VehicleStatus,
  type CreateVehicleBody, type PatchVehicleBody, type PublicVehicleRecord, type VehicleAmount, type VehicleRecord,
} from './schemas.js';

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

export async function listVehicles(db: Queryable, scope: GroupScope, statuses: readonly VehicleStatus[] | undefined): Promise<VehicleRecord[]> {
  return (await selectVehicles(db, scope.groupId, teamParam(scope), statuses ?? CURRENT_STATUSES)).map(vehicleRecord);
}

/** spec: GET vehicles/public: no credential, so no team scope: every vehicle of the group, public fields only. */
export async function listPublicVehicles(db: Queryable, groupId: string, statuses: readonly VehicleStatus[] | undefined): Promise<PublicVehicleRecord[]> {
  return (await selectVehicles(db, groupId, null, statuses ?? CURRENT_STATUSES)).map(publicRecord);
}

async function visibleVehicle(db: Queryable, scope: GroupScope, vehicleId: string): Promise<VehicleRow> {
  const row = await selectVehicle(db, scope.groupId, vehicleId);
  if (!row) throw errors.notFound('VehicleNotFound', `No vehicle ${JSON.stringify(vehicleId)} in group ${JSON.stringify(scope.groupId)}`);
  if (!teamsVisible(scope, row.teams)) throw forbiddenDifferentTeam(`Vehicle ${row.vehicle_id}`);
  return row;
}

export async function getVehicle(db: Queryable, scope: GroupScope, vehicleId: string): Promise<VehicleRecord> {
  return vehicleRecord(await visibleVehicle(db, scope, vehicleId));
}

/** The teams of a vehicle, or null when the group has no such vehicle (devices are mounted in vehicles). */
export async function vehicleTeams(db: Queryable, groupId: string, vehicleId: string): Promise<string[] | null> {
  return (await selectVehicle(db, groupId, vehicleId))?.teams ?? null;
}

export type { VehicleRow };

/** The vehicles of these ids or license plates, whatever their teams (other domains resolve what they are sent). */
export function vehiclesByIdOrPlate(db: Queryable, groupId: string, ids: readonly string[], plates: readonly string[] = []): Promise<VehicleRow[]> {
  return selectVehiclesByIdOrPlate(db, groupId, ids, plates);
}

/** The vehicles of these ids that the teams see (null: every team). */
export function vehiclesSeen(db: Queryable, groupId: string, ids: readonly string[], teams: string[] | null): Promise<VehicleRow[]> {
  return selectVehiclesByIds(db, groupId, ids, teams);
}

/** The teams of every vehicle of the group, by vehicle id. */
export async function teamsOfVehicles(db: Queryable, groupId: string): Promise<Map<string, string[]>> {
  return new Map((await selectVehicleTeams(db, groupId)).map((r) => [r.vehicle_id, r.teams]));
}

export async function vehicleAmount(db: Queryable, scope: GroupScope): Promise<VehicleAmount> {
  const rows = await countVehiclesByStatus(db, scope.groupId, teamParam(scope));
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
    const row = await insertVehicle(ctx.db, scope.groupId, {
      vehicle_id: input.vehicle_id, fleet_number: input.fleet_number, license_plate: input.license_plate, teams,
      comment: input.comment ?? null, status: input.status ?? 'active', capacity: input.capacity ?? null,
    }, ctx.clock.now());
    return vehicleRecord(row);
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
    const row = await updateVehicleRow(ctx.db, scope.groupId, current.vehicle_id, {
      fleet_number: patch.fleet_number ?? null, license_plate: patch.license_plate ?? null, teams: patch.teams ?? null,
      setComment: set('comment'), comment: patch.comment ?? null, status: patch.status ?? null, setCapacity: set('capacity'), capacity: patch.capacity ?? null,
    }, ctx.clock.now());
    return vehicleRecord(row);
  } catch (err) {
    vehicleConflict(err, patch, scope.groupId);
  }
}
