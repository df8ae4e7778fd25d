/**
 * Reads of the actual side: duties (who drove what, when), trip events, device history, danger
 * zones. A caller limited to teams sees a duty when its driver or its vehicle is in one of their
 * teams, and the trip events recorded during such duties. The statements are in duties/queries/
 * (duties.ts, danger-zones.ts); this module keeps the rules, the periods, cursors and records.
 */
import CheapRuler from 'cheap-ruler';
import type { AppContext } from '../../platform/context.js';
import type { Queryable, Tx } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { errors, invalid } from '../../platform/http/errors.js';
import { decodeCursor } from '../../platform/http/paging.js';
import { objectId } from '../../platform/ids.js';
import { period } from '../../platform/time.js';
import { lastIdOfSecond, reconstruct, type ReconstructedState } from '../device/history.js';
import type { SignEventRow } from '../device/queries/sign-events.js';
import type { DutyRecord } from '../device/schemas.js';
import { formatGtfsTime } from '../gtfs/time.js';
import { getDevice } from '../fleet/devices.js';
import { dutyVisibleTo, selectDuties, selectDuty, selectOpenDuty, selectRuns, selectTripEvents, upsertDerivedDuties, type DerivedDuty, type DutyRow } from './queries/duties.js';
import { insertZone, selectZone, selectZones, selectZonesInBox, updateZone as updateZoneRow, type ZoneRow } from './queries/danger-zones.js';
import type { DangerZoneBody, DangerZonePatch, DangerZoneRecord, TripEventRecord } from './schemas.js';

/** The longest period a non-paged read covers, and the span of paged ones. */
export const MAX_PERIOD_DAYS = 31;

const teamsOf = (scope: Pick<GroupScope, 'teams'>) => (scope.teams === null ? null : [...scope.teams]);

const hms = (seconds: number | null) => (seconds === null ? null : formatGtfsTime(seconds));

/** Attaches the trips operated (trip_start/trip_end reports within each duty's span). */
async function withTrips(db: Queryable, groupId: string, rows: DutyRow[]): Promise<DutyRecord[]> {
  if (rows.length === 0) return [];
  const devices = [...new Set(rows.map((r) => r.device_id))];
  const from = new Date(Math.min(...rows.map((r) => r.signed_on_at.getTime())));
  const open = rows.some((r) => r.signed_off_at === null);
  const until = open ? null : new Date(Math.max(...rows.map((r) => r.signed_off_at!.getTime())));
  const runs = await selectRuns(db, groupId, devices, from, until);
  return rows.map((d) => {
    const mine = runs.filter((r) => r.device_id === d.device_id && r.at >= d.signed_on_at && (d.signed_off_at === null || r.at < d.signed_off_at));
    const trips: DutyRecord['trips'] = [];
    const openTrips = new Map<string, DutyRecord['trips'][number]>();
    for (const r of mine) {
      const key = `${r.service_date} ${r.trip_id} ${r.start_time ?? ''}`;
      if (r.kind === 'start') {
        const t = { trip_id: r.trip_id, service_date: r.service_date, start_time: hms(r.start_time), block_id: r.block_id, started_at: r.at.toISOString(), ended_at: null };
        trips.push(t);
        openTrips.set(key, t);
      } else {
        const t = openTrips.get(key);
        if (t) {
          t.ended_at = r.at.toISOString();
          openTrips.delete(key);
        } else {
          trips.push({ trip_id: r.trip_id, service_date: r.service_date, start_time: hms(r.start_time), block_id: null, started_at: null, ended_at: r.at.toISOString() });
        }
      }
    }
    return {
      duty_id: d.duty_id,
      device_id: d.device_id,
      driver_id: d.driver_id,
      vehicle_id: d.vehicle_id,
      signed_on_at: d.signed_on_at.toISOString(),
      signed_off_at: d.signed_off_at?.toISOString() ?? null,
      end_reason: d.end_reason,
      sign_on: d.sign_on,
      sign_off: d.sign_off,
      non_commercial_km: d.non_commercial_km,
      trips,
    };
  });
}

export interface DutyFilter {
  start_date: string;
  end_date: string;
  driver_id?: string | undefined;
  vehicle_id?: string | undefined;
  device_id?: string | undefined;
  at?: number | undefined;
  limit: number;
  cursor?: string | undefined;
}

/**
 * Duties signed on during the period (service dates in the group's time zone), or with `at`, the
 * duties open at that instant: with vehicle_id, who was driving the vehicle then. Ordered by
 * sign-on time, paged.
 */
export async function listDuties(db: Queryable, scope: GroupScope, f: DutyFilter): Promise<DutyRecord[]> {
  const p = period(f.start_date, f.end_date, scope.timezone, MAX_PERIOD_DAYS);
  const after = decodeCursor(f.cursor, 2) as [string, string] | null;
  const at = f.at === undefined ? null : new Date(f.at * 1000);
  const rows = await selectDuties(db, scope.groupId, {
    from: p.from, until: p.until, at,
    driverId: f.driver_id?.toLowerCase() ?? null, vehicleId: f.vehicle_id ?? null, deviceId: f.device_id ?? null,
    after, teams: teamsOf(scope), limit: f.limit + 1,
  });
  return withTrips(db, scope.groupId, rows);
}

export async function getDuty(db: Queryable, scope: GroupScope, dutyId: string): Promise<DutyRecord> {
  const row = await selectDuty(db, scope.groupId, dutyId);
  if (!row) throw errors.notFound('DutyNotFound', `No duty ${JSON.stringify(dutyId)} in the group`);
  if (!(await dutyVisibleTo(db, scope.groupId, dutyId, teamsOf(scope)))) throw errors.forbidden('ForbiddenDifferentTeam', 'This duty was operated by a driver and a vehicle of other teams');
  return (await withTrips(db, scope.groupId, [row]))[0]!;
}

export async function currentDuty(db: Queryable, groupId: string, deviceId: string, now: Date): Promise<DutyRecord | null> {
  const row = await selectOpenDuty(db, groupId, deviceId, now);
  return row === null ? null : (await withTrips(db, groupId, [row]))[0]!;
}

export interface TripEventFilter {
  start_date: string;
  end_date: string;
  trip_id?: string | undefined;
  vehicle_id?: string | undefined;
  device_id?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** Trip events of the service dates of the period, by time, with the duty they were recorded in. */
export async function listTripEvents(db: Queryable, scope: GroupScope, f: TripEventFilter): Promise<(TripEventRecord & { _key: [string, string, string] })[]> {
  const p = period(f.start_date, f.end_date, scope.timezone, MAX_PERIOD_DAYS);
  const after = decodeCursor(f.cursor, 3) as [string, string, string] | null;
  const rows = await selectTripEvents(db, scope.groupId, {
    start: p.start, end: p.end, tripId: f.trip_id ?? null, vehicleId: f.vehicle_id ?? null, deviceId: f.device_id ?? null,
    after, teams: teamsOf(scope), limit: f.limit + 1,
  });
  return rows.map((r) => ({
    trip_id: r.trip_id,
    service_date: r.service_date,
    start_time: hms(r.start_time),
    at: r.at.toISOString(),
    event: r.event,
    stop_id: r.stop_id,
    stop_sequence: r.stop_sequence,
    lat: r.lat,
    lon: r.lon,
    gps_valid: r.gps_valid,
    odometer_km: r.odometer_km,
    state: r.state,
    device_id: r.device_id,
    duty_id: r.duty_id,
    driver_id: r.driver_id,
    vehicle_id: r.vehicle_id,
    received_at: r.received_at.toISOString(),
    _key: [r.at.toISOString(), r.device_id, r.client_id],
  }));
}

/**
 * spec: GET devices/{device_id}/history: at (inclusive, whole seconds) or before_id (strict). The
 * history is the device's: seen by whoever sees the device record (404 DeviceNotFound, 403
 * ForbiddenDifferentTeam as GET devices/{device_id}).
 */
export async function deviceHistory(db: Queryable, scope: GroupScope, deviceId: string, q: { at?: number | undefined; before_id?: string | undefined }): Promise<ReconstructedState> {
  await getDevice(db, scope, deviceId);
  const groupId = scope.groupId;
  const bound = q.at !== undefined ? { upTo: lastIdOfSecond(q.at) } : q.before_id !== undefined ? { before: q.before_id.toLowerCase() } : null;
  return reconstruct(db, groupId, deviceId, bound);
}

// ---------------------------------------------------------------- danger zones

const zoneRecord = (z: ZoneRow): DangerZoneRecord => ({ ...z, active_from: z.active_from?.toISOString() ?? null, active_to: z.active_to?.toISOString() ?? null });

function checkActive(from: string | null | undefined, to: string | null | undefined) {
  if (from && to && Date.parse(to) <= Date.parse(from)) throw invalid(['body', 'active_to'], 'active_to must be after active_from', 'value_error', to);
}

export async function createZone(ctx: AppContext, groupId: string, b: DangerZoneBody): Promise<DangerZoneRecord> {
  checkActive(b.active_from, b.active_to);
  const now = ctx.clock.now();
  const row = await insertZone(ctx.db, groupId, objectId(now.getTime()), { name: b.name, lat: b.lat, lon: b.lon, radius_m: b.radius_m, message: b.message, active_from: b.active_from ?? null, active_to: b.active_to ?? null }, now);
  return zoneRecord(row);
}

export async function updateZone(ctx: AppContext, groupId: string, zoneId: string, b: DangerZonePatch): Promise<DangerZoneRecord> {
  const current = await selectZone(ctx.db, groupId, zoneId);
  if (!current) throw errors.notFound('DangerZoneNotFound', `No danger zone ${JSON.stringify(zoneId)} in the group`);
  const next = { ...zoneRecord(current), ...b };
  checkActive(next.active_from, next.active_to);
  return zoneRecord(await updateZoneRow(ctx.db, groupId, zoneId, next, ctx.clock.now()));
}

export async function listZones(db: Queryable, groupId: string, o: { archived: boolean }): Promise<DangerZoneRecord[]> {
  return (await selectZones(db, groupId, o.archived)).map(zoneRecord);
}

/** Zones in force now whose edge is within `radius_m` of the position, nearest first. */
export async function zonesAround(db: Queryable, groupId: string, q: { lat: number; lon: number; radius_m: number }, now: Date): Promise<(DangerZoneRecord & { distance_m: number })[]> {
  const ruler = new CheapRuler(q.lat, 'meters');
  // A bounding box prefilter in SQL (zones are at most 100 km wide), the exact distance here.
  const [w, s, e, n] = ruler.bufferPoint([q.lon, q.lat], q.radius_m + 100_000);
  const rows = await selectZonesInBox(db, groupId, { s, n, w, e }, now);
  return rows
    .map((z) => ({ ...zoneRecord(z), distance_m: Math.max(0, ruler.distance([q.lon, q.lat], [z.lon, z.lat]) - z.radius_m) }))
    .filter((z) => z.distance_m <= q.radius_m)
    .sort((a, b) => a.distance_m - b.distance_m);
}

/**
 * Derives a device's duties again from its sign events (`events`: in event time, from the last
 * sign-on before the earliest new event; device ingest reads them in its batch's transaction):
 * each sign-on opens a duty, closed by the next sign-off (end_reason sign_off) or by the next
 * sign-on (next_sign_on), whatever order the events arrived in.
 */
export async function deriveDuties(tx: Tx, groupId: string, deviceId: string, events: readonly SignEventRow[]): Promise<void> {
  type Open = { on: SignEventRow; off: SignEventRow | null; end: Date | null; reason: DerivedDuty['end_reason'] };
  const opened: Open[] = [];
  let open: Open | null = null;
  for (const e of events) {
    if (e.kind === 'sign_on') {
      if (open) {
        open.end = e.at;
        open.reason = 'next_sign_on';
      }
      open = { on: e, off: null, end: null, reason: null };
      opened.push(open);
    } else if (open) {
      open.off = e;
      open.end = e.at;
      open.reason = 'sign_off';
      open = null;
    }
  }
  if (opened.length === 0) return;
  const info = (e: SignEventRow) => ({ id: e.client_id, at: e.at.toISOString(), odometer_km: e.odometer_km, info: e.info });
  await upsertDerivedDuties(tx, groupId, deviceId, opened.map((x) => ({
    duty_id: x.on.duty_id!, driver_id: x.on.driver_id, vehicle_id: x.on.vehicle_id, signed_on_at: x.on.at, signed_off_at: x.end, end_reason: x.reason,
    sign_on: info(x.on), sign_off: x.off ? info(x.off) : null, non_commercial_km: x.off?.non_commercial_km ?? null,
  })));
}

/**
 * What device ingest calls in a batch's transaction when it stores sign events: buildApp gives it
 * to the app's services (ctx.services.duties, app.ts), so device does not import duties.
 */
export const dutyDerivation = { derive: deriveDuties };
export type DutyDerivation = typeof dutyDerivation;
