/**
 * Planning: who was due to operate what (spec: What the service does 4). A client compares it with
 * the duties of the same date; each record carries what that needs (trip, scheduled times, route,
 * block, vehicle, driver).
 */
import type { AppContext } from '../../platform/context.js';
import type { Queryable } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { ValidationError, type ValidationIssue } from '../../platform/http/errors.js';
import { FORMAT_HINTS, ajvFormats, isoDate } from '../../platform/http/params.js';
import { CsvFormatError, TURN_EVERY, readCsv } from '../../platform/csv.js';
import { nextTurn } from '../../platform/slices.js';
import { tripsOnServiceDate, routesOf, type ScheduledTrip } from '../gtfs/service-days.js';
import { formatGtfsTime, gtfsSeconds } from '../gtfs/time.js';
import { teamParam } from '../../platform/http/teams.js';
import { CSV_COLUMNS, MAX_ASSIGNMENTS, type Assignment, type PlanningRecord } from './schemas.js';
import { driversByIdOrStaffNumber, driversSeen } from '../fleet/drivers.js';
import { vehiclesByIdOrPlate, vehiclesSeen } from '../fleet/vehicles.js';
import { selectPlannings, upsertPlannings } from './queries.js';

interface Located extends Assignment {
  /** Where the assignment sits in the request: ['body', index] or ['body', line] of the CSV. */
  loc: (string | number)[];
}

/** Reads the CSV layout of PUT planning?format=csv into assignments, naming lines and columns. */
export async function assignmentsFromCsv(text: string): Promise<Located[]> {
  let parsed;
  try {
    parsed = await readCsv(text, { maxRecords: MAX_ASSIGNMENTS });
  } catch (e) {
    if (e instanceof CsvFormatError) throw new ValidationError([{ loc: ['body', e.line], msg: e.message, type: 'value_error' }]);
    throw e;
  }
  const missing = ['trip_id', 'date'].filter((c) => !parsed.header.includes(c));
  const unknown = parsed.header.filter((c) => !(CSV_COLUMNS as readonly string[]).includes(c));
  if (missing.length > 0 || unknown.length > 0) {
    throw new ValidationError([
      ...missing.map((c) => ({ loc: ['body', 1, c], msg: `The header lacks the column ${c}`, type: 'missing' })),
      // One issue however many unknown columns (a hostile header names a million).
      ...(unknown.length === 0 ? [] : [unknownColumns(unknown)]),
    ]);
  }
  const issues: ValidationIssue[] = [];
  const out: Located[] = [];
  for (const [i, r] of parsed.records.entries()) {
    if (i % TURN_EVERY === TURN_EVERY - 1) await nextTurn();
    const v = r.values;
    const get = (c: string) => (v[c] === undefined || v[c] === '' ? undefined : v[c]);
    const a: Located = { loc: ['body', r.line], trip_id: get('trip_id') ?? '', date: get('date') ?? '' };
    for (const c of ['start_time', 'vehicle_id', 'license_plate', 'driver_id', 'staff_number'] as const) {
      const x = get(c);
      if (x !== undefined) a[c] = x;
    }
    if (a.trip_id === '') issues.push({ loc: ['body', r.line, 'trip_id'], msg: 'Field required', type: 'missing' });
    if (!ajvFormats.yyyymmdd(a.date)) issues.push({ loc: ['body', r.line, 'date'], msg: `The date is a ${FORMAT_HINTS['yyyymmdd']}`, type: 'string_pattern_mismatch', input: a.date });
    if (a.start_time !== undefined && gtfsSeconds(a.start_time) < 0) issues.push({ loc: ['body', r.line, 'start_time'], msg: 'A time is written HH:MM:SS', type: 'value_error', input: a.start_time });
    if (a.driver_id !== undefined && !/^[0-9a-fA-F]{24}$/.test(a.driver_id)) issues.push({ loc: ['body', r.line, 'driver_id'], msg: 'A driver_id is 24 hexadecimal characters', type: 'string_pattern_mismatch', input: a.driver_id });
    out.push(a);
  }
  if (issues.length > 0) throw new ValidationError(issues);
  return out;
}

const LISTED_COLUMNS = 10;

function unknownColumns(unknown: string[]): ValidationIssue {
  const listed = unknown.slice(0, LISTED_COLUMNS).map((c) => JSON.stringify(c.length > 64 ? `${c.slice(0, 64)}…` : c)).join(', ');
  const more = unknown.length > LISTED_COLUMNS ? ` and ${unknown.length - LISTED_COLUMNS} more` : '';
  return {
    loc: unknown.length === 1 ? ['body', 1, unknown[0]!] : ['body', 1],
    msg: `Unknown column${unknown.length === 1 ? '' : 's'} ${listed}${more}; the columns are ${CSV_COLUMNS.join(';')}`,
    type: 'extra_forbidden',
  };
}

export const locate = (assignments: readonly Assignment[]): Located[] => assignments.map((a, i) => ({ ...a, loc: ['body', i] }));

interface Resolved {
  service_date: string;
  trip: ScheduledTrip;
  gtfsId: string;
  vehicle_id: string | null;
  driver_id: string | null;
}

/**
 * PUT planning: creates or replaces the planning of each (trip, date), all or nothing. Each
 * assignment names an existing trip running that date (per the GTFS in force), and at least a
 * vehicle or a driver; redundant identifiers must agree (the error names the line).
 */
export async function putPlanning(ctx: AppContext, scope: GroupScope, assignments: Located[], filename: string | null, by: string | null): Promise<PlanningRecord[]> {
  const issues: ValidationIssue[] = [];
  const bad = (a: Located, field: string, msg: string, input?: unknown) => issues.push({ loc: [...a.loc, field], msg, type: 'value_error', ...(input !== undefined ? { input } : {}) });
  const g = scope.groupId;

  const plates = [...new Set(assignments.flatMap((a) => (a.license_plate ? [a.license_plate] : [])))];
  const vehicleIds = [...new Set(assignments.flatMap((a) => (a.vehicle_id ? [a.vehicle_id] : [])))];
  const vehicles = await vehiclesByIdOrPlate(ctx.db, g, vehicleIds, plates);
  const staff = [...new Set(assignments.flatMap((a) => (a.staff_number ? [a.staff_number] : [])))];
  const driverIds = [...new Set(assignments.flatMap((a) => (a.driver_id ? [a.driver_id.toLowerCase()] : [])))];
  const drivers = await driversByIdOrStaffNumber(ctx.db, g, driverIds, staff);
  const days = new Map<string, Awaited<ReturnType<typeof tripsOnServiceDate>>>();
  for (const date of new Set(assignments.map((a) => isoDate(a.date)))) {
    days.set(date, await tripsOnServiceDate(ctx.db, g, date, { tripIds: [...new Set(assignments.filter((a) => isoDate(a.date) === date).map((a) => a.trip_id))] }));
  }
  const inTeams = (teams: readonly string[]) => scope.teams === null || teams.some((t) => scope.teams!.includes(t));

  const resolved: (Resolved & { a: Located })[] = [];
  const seen = new Map<string, Located>();
  for (const a of assignments) {
    const date = isoDate(a.date);
    if (!a.vehicle_id && !a.license_plate && !a.driver_id && !a.staff_number) {
      bad(a, 'vehicle_id', 'An assignment names at least a vehicle (vehicle_id or license_plate) or a driver (driver_id or staff_number)');
      continue;
    }
    const day = days.get(date)!;
    const instances = day.trips.filter((t) => t.trip_id === a.trip_id);
    const trip = a.start_time === undefined ? instances[0] : instances.find((t) => t.start_time === formatGtfsTime(gtfsSeconds(a.start_time!)));
    if (day.gtfsId === null) bad(a, 'date', `No GTFS is published for ${date}`, a.date);
    else if (instances.length === 0) bad(a, 'trip_id', `Trip ${JSON.stringify(a.trip_id)} does not run on ${date} (GTFS in force: ${day.gtfsId})`, a.trip_id);
    else if (!trip) bad(a, 'start_time', `Trip ${a.trip_id} has no instance starting at ${a.start_time} on ${date}`, a.start_time);
    else if (a.start_time === undefined && instances.length > 1) bad(a, 'start_time', `Trip ${a.trip_id} runs ${instances.length} times on ${date} (frequencies): give start_time`);

    let vehicleId: string | null = null;
    if (a.vehicle_id || a.license_plate) {
      const byId = a.vehicle_id ? vehicles.find((v) => v.vehicle_id === a.vehicle_id) : undefined;
      const byPlate = a.license_plate ? vehicles.find((v) => v.license_plate === a.license_plate) : undefined;
      if (a.vehicle_id && !byId) bad(a, 'vehicle_id', `No vehicle ${JSON.stringify(a.vehicle_id)} in the group`, a.vehicle_id);
      else if (a.license_plate && !byPlate) bad(a, 'license_plate', `No vehicle with license plate ${JSON.stringify(a.license_plate)} in the group`, a.license_plate);
      else if (byId && byPlate && byId !== byPlate) bad(a, 'license_plate', `License plate ${a.license_plate} is vehicle ${byPlate.vehicle_id}'s, not vehicle ${a.vehicle_id}'s`, a.license_plate);
      else {
        const v = (byId ?? byPlate)!;
        if (v.status === 'archived') bad(a, a.vehicle_id ? 'vehicle_id' : 'license_plate', `Vehicle ${v.vehicle_id} is archived`);
        else if (!inTeams(v.teams)) bad(a, a.vehicle_id ? 'vehicle_id' : 'license_plate', `Vehicle ${v.vehicle_id} belongs to no team of yours`);
        vehicleId = v.vehicle_id;
      }
    }
    let driverId: string | null = null;
    if (a.driver_id || a.staff_number) {
      const byId = a.driver_id ? drivers.find((d) => d.driver_id === a.driver_id!.toLowerCase()) : undefined;
      const byStaff = a.staff_number ? drivers.find((d) => d.staff_number === a.staff_number) : undefined;
      if (a.driver_id && !byId) bad(a, 'driver_id', `No driver ${JSON.stringify(a.driver_id)} in the group`, a.driver_id);
      else if (a.staff_number && !byStaff) bad(a, 'staff_number', `No driver with staff number ${JSON.stringify(a.staff_number)} in the group`, a.staff_number);
      else if (byId && byStaff && byId !== byStaff) bad(a, 'staff_number', `Staff number ${a.staff_number} is driver ${byStaff.driver_id}'s, not driver ${a.driver_id}'s`, a.staff_number);
      else {
        const d = (byId ?? byStaff)!;
        if (d.archived) bad(a, a.driver_id ? 'driver_id' : 'staff_number', `Driver ${d.driver_id} is archived`);
        else if (!inTeams(d.teams)) bad(a, a.driver_id ? 'driver_id' : 'staff_number', `Driver ${d.driver_id} belongs to no team of yours`);
        driverId = d.driver_id;
      }
    }
    if (trip) {
      const key = `${date} ${trip.trip_id} ${trip.start_time}`;
      const before = seen.get(key);
      if (before) bad(a, 'trip_id', `Trip ${trip.trip_id} on ${date} is assigned twice in this request (also at ${before.loc.slice(1).join(' ')})`);
      seen.set(key, a);
      resolved.push({ a, service_date: date, trip, gtfsId: day.gtfsId!, vehicle_id: vehicleId, driver_id: driverId });
    }
  }
  if (issues.length > 0) throw new ValidationError(issues.slice(0, 1000));

  const now = ctx.clock.now();
  await ctx.db.transaction(async (tx) => {
    for (let i = 0; i < resolved.length; i += 5000) {
      const part = resolved.slice(i, i + 5000);
      await upsertPlannings(
        tx,
        g,
        part.map((r) => ({
          service_date: r.service_date, trip_id: r.trip.trip_id, start_time: r.trip.frequency ? r.trip.first_departure : -1,
          gtfs_id: r.gtfsId, vehicle_id: r.vehicle_id, driver_id: r.driver_id,
        })),
        { filename, by, now },
      );
    }
  });
  return records(ctx.db, scope, resolved.map((r) => ({ ...r, filename, updated_at: now })));
}

interface Detail {
  vehicles: Map<string, { license_plate: string; fleet_number: string }>;
  drivers: Map<string, { staff_number: string; driver_name: string }>;
  routes: Map<string, string | null>;
}

/**
 * The details of the vehicles and drivers named, for those the caller sees: an assignment of their
 * teams may name a vehicle or driver of another team, by id only (platform/http/teams.ts).
 */
async function details(db: Queryable, scope: GroupScope, rows: { vehicle_id: string | null; driver_id: string | null; gtfsId: string; trip: ScheduledTrip }[]): Promise<Detail> {
  const groupId = scope.groupId;
  const v = (await vehiclesSeen(db, groupId, [...new Set(rows.flatMap((r) => (r.vehicle_id ? [r.vehicle_id] : [])))], teamParam(scope)))
    .map(({ vehicle_id, license_plate, fleet_number }) => ({ vehicle_id, license_plate, fleet_number }));
  const d = (await driversSeen(db, groupId, [...new Set(rows.flatMap((r) => (r.driver_id ? [r.driver_id] : [])))], teamParam(scope)))
    .map(({ driver_id, staff_number, driver_name }) => ({ driver_id, staff_number, driver_name }));
  const routes = new Map<string, string | null>();
  for (const gtfsId of new Set(rows.map((r) => r.gtfsId))) {
    for (const r of await routesOf(db, groupId, gtfsId, [...new Set(rows.filter((x) => x.gtfsId === gtfsId).map((x) => x.trip.route_id))])) routes.set(`${gtfsId} ${r.route_id}`, r.short_name);
  }
  return { vehicles: new Map(v.map((x) => [x.vehicle_id, x])), drivers: new Map(d.map((x) => [x.driver_id, x])), routes };
}

async function records(db: Queryable, scope: GroupScope, rows: (Resolved & { filename: string | null; updated_at: Date })[]): Promise<PlanningRecord[]> {
  const d = await details(db, scope, rows);
  return rows
    .map((r) => ({
      trip_id: r.trip.trip_id,
      date: r.service_date.replace(/-/g, ''),
      service_date: r.service_date,
      start_time: r.trip.start_time,
      end_time: formatGtfsTime(r.trip.last_arrival),
      departure_at: r.trip.first_departure_at.toISOString(),
      arrival_at: r.trip.last_arrival_at.toISOString(),
      route_id: r.trip.route_id,
      route_short_name: d.routes.get(`${r.gtfsId} ${r.trip.route_id}`) ?? null,
      block_id: r.trip.block_id,
      first_stop_id: r.trip.first_stop_id,
      last_stop_id: r.trip.last_stop_id,
      gtfs_id: r.gtfsId,
      vehicle_id: r.vehicle_id,
      license_plate: r.vehicle_id ? (d.vehicles.get(r.vehicle_id)?.license_plate ?? null) : null,
      fleet_number: r.vehicle_id ? (d.vehicles.get(r.vehicle_id)?.fleet_number ?? null) : null,
      driver_id: r.driver_id,
      staff_number: r.driver_id ? (d.drivers.get(r.driver_id)?.staff_number ?? null) : null,
      driver_name: r.driver_id ? (d.drivers.get(r.driver_id)?.driver_name ?? null) : null,
      filename: r.filename,
      updated_at: r.updated_at.toISOString(),
    }))
    .sort((a, b) => a.departure_at.localeCompare(b.departure_at) || a.trip_id.localeCompare(b.trip_id));
}

/**
 * GET planning: the planning of a date, filtered by driver and vehicle, and by the caller's teams
 * (through the vehicle and driver). A driver sees only their own assignments (the driver record
 * their account is linked to; none when it is linked to none).
 */
export async function getPlanning(db: Queryable, scope: GroupScope, q: { date: string; driver_id?: string | undefined; vehicle_id?: string | undefined }): Promise<PlanningRecord[]> {
  const date = isoDate(q.date);
  const ownDriver = scope.role === 'driver' ? (scope.driverId ?? '') : null;
  const rows = await selectPlannings(db, scope.groupId, date, {
    driverId: q.driver_id?.toLowerCase() ?? null,
    vehicleId: q.vehicle_id ?? null,
    ownDriverId: ownDriver,
    teams: scope.teams === null ? null : [...scope.teams],
  });
  if (rows.length === 0) return [];
  const resolved: (Resolved & { filename: string | null; updated_at: Date })[] = [];
  for (const gtfsId of new Set(rows.map((r) => r.gtfs_id))) {
    const mine = rows.filter((r) => r.gtfs_id === gtfsId);
    const day = await tripsOnServiceDate(db, scope.groupId, date, { gtfsId, tripIds: [...new Set(mine.map((r) => r.trip_id))] });
    for (const r of mine) {
      const trip = day.trips.find((t) => t.trip_id === r.trip_id && (r.start_time < 0 || t.first_departure === r.start_time));
      if (trip) resolved.push({ service_date: date, trip, gtfsId, vehicle_id: r.vehicle_id, driver_id: r.driver_id, filename: r.filename, updated_at: r.updated_at });
    }
  }
  return records(db, scope, resolved);
}
