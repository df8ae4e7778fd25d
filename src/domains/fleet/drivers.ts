/** Drivers: provisioning, reads in two shapes, and their datahub file. */
import { Type } from 'typebox';
import type { AppContext } from '../../platform/context.js';
import { violatedConstraint, type Queryable } from '../../platform/db/index.js';
import type { GroupScope, Role } from '../../platform/http/access.js';
import { errors } from '../../platform/http/errors.js';
import { objectId } from '../../platform/ids.js';
import { forbiddenDifferentTeam, teamParam, teamsVisible } from '../../platform/http/teams.js';
import type { CsvTable } from './datahub.js';
import {
  insertDriver, selectDriver, selectDrivers, selectDriversByIdOrCode, selectDriversByIdOrStaffNumber, selectDriversByIds, selectDriverTeams, updateDriverRow, type DriverRow,
} from './queries/drivers.js';
import { checkTeamsWrite } from './teams.js';
import {
  DriverCode, DriverComment, DriverIdBody, DriverName, StaffNumber, Teams,
  type CreateDriverBody, type OperatorDriverRecord, type PatchDriverBody, type StandardDriverRecord,
} from './schemas.js';

/** spec: Resources, Driver: columns id;driver_name;staff_number;teams;comment;archived;code. */
export const DRIVERS_CSV: CsvTable = {
  noun: 'driver',
  table: 'drivers',
  key: 'driver_id',
  unique: { db: 'staff_number', constraint: 'drivers_staff_number_key' },
  columns: [
    { csv: 'id', db: 'driver_id', cell: 'text', required: true, schema: DriverIdBody, normalise: (v) => v.toLowerCase() },
    { csv: 'driver_name', db: 'driver_name', cell: 'text', required: true, schema: DriverName },
    { csv: 'staff_number', db: 'staff_number', cell: 'text', required: true, schema: StaffNumber },
    { csv: 'teams', db: 'teams', cell: 'list', required: false, schema: Teams },
    { csv: 'comment', db: 'comment', cell: 'text', required: false, schema: DriverComment },
    { csv: 'archived', db: 'archived', cell: 'boolean', required: true, schema: Type.Boolean() },
    { csv: 'code', db: 'code', cell: 'text', required: false, schema: DriverCode },
  ],
};

/** Roles that receive the operator-oriented shape; every other role gets the standard one. */
export const OPERATOR_SHAPE_ROLES: readonly Role[] = ['admin', 'operator', 'regulator'];

function operatorRecord(r: DriverRow): OperatorDriverRecord {
  return {
    id: r.driver_id,
    driver_name: r.driver_name,
    staff_number: r.staff_number,
    teams: r.teams,
    comment: r.comment,
    archived: r.archived,
    code: r.code,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

function standardRecord(r: DriverRow): StandardDriverRecord {
  return { id: r.driver_id, driver_name: r.driver_name, teams: r.teams, archived: r.archived, code: r.code };
}

const shapeFor = (scope: GroupScope) => (OPERATOR_SHAPE_ROLES.includes(scope.role) ? operatorRecord : standardRecord);

const driverNotFound = (groupId: string, driverId: string) =>
  errors.notFound('DriverNotFound', `No driver ${JSON.stringify(driverId)} in group ${JSON.stringify(groupId)}`);

async function findDriver(db: Queryable, groupId: string, driverId: string): Promise<DriverRow | null> {
  return selectDriver(db, groupId, driverId.toLowerCase());
}

/** The driver, if it exists and the caller's teams see it: 404 DriverNotFound, 403 ForbiddenDifferentTeam. */
async function visibleDriver(db: Queryable, scope: GroupScope, driverId: string): Promise<DriverRow> {
  const row = await findDriver(db, scope.groupId, driverId);
  if (!row) throw driverNotFound(scope.groupId, driverId);
  if (!teamsVisible(scope, row.teams)) throw forbiddenDifferentTeam(`Driver ${row.driver_id}`);
  return row;
}

/** Other domains (users, ratings) check a driver exists through this. */
export async function driverExists(db: Queryable, groupId: string, driverId: string): Promise<boolean> {
  return (await findDriver(db, groupId, driverId)) !== null;
}

/** The driver's teams, or null when the group has no such driver. */
export async function driverTeams(db: Queryable, groupId: string, driverId: string): Promise<{ teams: string[] } | null> {
  const d = await findDriver(db, groupId, driverId);
  return d ? { teams: d.teams } : null;
}

export type { DriverRow };

/** The drivers of these ids or staff numbers, whatever their teams (planning resolves what it is sent). */
export function driversByIdOrStaffNumber(db: Queryable, groupId: string, ids: readonly string[], staffNumbers: readonly string[]): Promise<DriverRow[]> {
  return selectDriversByIdOrStaffNumber(db, groupId, ids, staffNumbers);
}

/** The drivers of these ids or codes, whatever their teams (a device signs on with either). */
export function driversByIdOrCode(db: Queryable, groupId: string, ids: readonly string[], codes: readonly string[]): Promise<DriverRow[]> {
  return selectDriversByIdOrCode(db, groupId, ids, codes);
}

/** The drivers of these ids that the teams see (null: every team). */
export function driversSeen(db: Queryable, groupId: string, ids: readonly string[], teams: string[] | null): Promise<DriverRow[]> {
  return selectDriversByIds(db, groupId, ids, teams);
}

/** The teams of every driver of the group, by driver id. */
export async function teamsOfDrivers(db: Queryable, groupId: string): Promise<Map<string, string[]>> {
  return new Map((await selectDriverTeams(db, groupId)).map((r) => [r.driver_id, r.teams]));
}

/** spec: GET drivers: archived defaults to false (archived drivers excluded); driver_code filters. */
export async function listDrivers(db: Queryable, scope: GroupScope, q: { archived: boolean; driver_code?: string | undefined }) {
  const rows = await selectDrivers(db, scope.groupId, teamParam(scope), q.archived, q.driver_code ?? null);
  return rows.map(shapeFor(scope));
}

export async function getDriver(db: Queryable, scope: GroupScope, driverId: string) {
  return shapeFor(scope)(await visibleDriver(db, scope, driverId));
}

function driverConflict(err: unknown, input: { driver_id?: string | undefined; staff_number?: string | undefined }, groupId: string): never {
  const constraint = violatedConstraint(err, '23505');
  if (constraint === 'drivers_pkey') throw errors.conflict('DriverExists', `Driver ${input.driver_id} already exists in group ${groupId}`);
  if (constraint === 'drivers_staff_number_key') throw errors.conflict('StaffNumberTaken', `Another driver of group ${groupId} has the staff number ${JSON.stringify(input.staff_number)}`);
  throw err;
}

export async function createDriver(ctx: AppContext, scope: GroupScope, input: CreateDriverBody): Promise<OperatorDriverRecord> {
  const teams = input.teams ?? [];
  await checkTeamsWrite(ctx.db, scope, 'The driver', { next: teams });
  const now = ctx.clock.now();
  const driverId = input.driver_id?.toLowerCase() ?? objectId(now.getTime());
  try {
    const row = await insertDriver(ctx.db, scope.groupId, {
      driver_id: driverId, driver_name: input.driver_name, staff_number: input.staff_number, teams,
      comment: input.comment ?? null, archived: input.archived ?? false, code: input.code ?? null,
    }, now);
    return operatorRecord(row);
  } catch (err) {
    driverConflict(err, { driver_id: driverId, staff_number: input.staff_number }, scope.groupId);
  }
}

/** PATCH: only the fields sent change; `archived: true` archives (spec: What the service does 7). */
export async function updateDriver(ctx: AppContext, scope: GroupScope, driverId: string, patch: PatchDriverBody): Promise<OperatorDriverRecord> {
  const current = await visibleDriver(ctx.db, scope, driverId);
  await checkTeamsWrite(ctx.db, scope, `Driver ${current.driver_id}`, { current: current.teams, next: patch.teams });
  const set = (k: keyof PatchDriverBody) => patch[k] !== undefined;
  try {
    const row = await updateDriverRow(ctx.db, scope.groupId, current.driver_id, {
      driver_name: patch.driver_name ?? null, staff_number: patch.staff_number ?? null, teams: patch.teams ?? null,
      setComment: set('comment'), comment: patch.comment ?? null, archived: patch.archived ?? null, setCode: set('code'), code: patch.code ?? null,
    }, ctx.clock.now());
    return operatorRecord(row);
  } catch (err) {
    driverConflict(err, { staff_number: patch.staff_number }, scope.groupId);
  }
}
