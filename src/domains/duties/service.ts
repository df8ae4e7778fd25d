/**
 * Reads of the actual side: duties (who drove what, when), trip events, device history, danger
 * zones. A caller limited to teams sees a duty when its driver or its vehicle is in one of their
 * teams, and the trip events recorded during such duties.
 */
import CheapRuler from 'cheap-ruler';
import type { AppContext } from '../../platform/context.js';
import type { Queryable } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { errors, invalid } from '../../platform/http/errors.js';
import { decodeCursor } from '../../platform/http/paging.js';
import { objectId } from '../../platform/ids.js';
import { period } from '../../platform/time.js';
import { lastIdOfSecond, reconstruct, type ReconstructedState } from '../device/history.js';
import type { DutyRecord } from '../device/schemas.js';
import { formatGtfsTime } from '../gtfs/time.js';
import { getDevice } from '../fleet/devices.js';
import type { DangerZoneBody, DangerZonePatch, DangerZoneRecord, TripEventRecord } from './schemas.js';

/** The longest period a non-paged read covers, and the span of paged ones. */
export const MAX_PERIOD_DAYS = 31;

const teamsOf = (scope: Pick<GroupScope, 'teams'>) => (scope.teams === null ? null : [...scope.teams]);

/** SQL: the duty aliased `du` is visible to the teams in parameter $n (null = all). */
const dutyVisible = (n: number) => `($${n}::text[] IS NULL
  OR EXISTS (SELECT 1 FROM drivers dr WHERE dr.group_id = du.group_id AND dr.driver_id = du.driver_id AND dr.teams && $${n}::text[])
  OR EXISTS (SELECT 1 FROM vehicles ve WHERE ve.group_id = du.group_id AND ve.vehicle_id = du.vehicle_id AND ve.teams && $${n}::text[]))`;

interface DutyRow {
  duty_id: string;
  device_id: string;
  driver_id: string;
  vehicle_id: string;
  signed_on_at: Date;
  signed_off_at: Date | null;
  end_reason: 'sign_off' | 'next_sign_on' | null;
  sign_on: DutyRecord['sign_on'];
  sign_off: DutyRecord['sign_off'];
  non_commercial_km: number | null;
}

const DUTY_COLUMNS = 'du.duty_id, du.device_id, du.driver_id, du.vehicle_id, du.signed_on_at, du.signed_off_at, du.end_reason, du.sign_on, du.sign_off, du.non_commercial_km';

const hms = (seconds: number | null) => (seconds === null ? null : formatGtfsTime(seconds));

interface RunRow {
  device_id: string;
  kind: 'start' | 'end';
  at: Date;
  trip_id: string;
  service_date: string;
  start_time: number | null;
  block_id: string | null;
}

/** Attaches the trips operated (trip_start/trip_end reports within each duty's span). */
async function withTrips(db: Queryable, groupId: string, rows: DutyRow[]): Promise<DutyRecord[]> {
  if (rows.length === 0) return [];
  const devices = [...new Set(rows.map((r) => r.device_id))];
  const from = new Date(Math.min(...rows.map((r) => r.signed_on_at.getTime())));
  const open = rows.some((r) => r.signed_off_at === null);
  const until = open ? null : new Date(Math.max(...rows.map((r) => r.signed_off_at!.getTime())));
  const runs = await db.query<RunRow>(
    `SELECT device_id, kind, at, trip_id, service_date, start_time, block_id FROM trip_runs
     WHERE group_id = $1 AND device_id = ANY($2) AND at >= $3 AND ($4::timestamptz IS NULL OR at < $4)
     ORDER BY at, CASE kind WHEN 'start' THEN 0 ELSE 1 END`,
    [groupId, devices, from, until],
  );
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
  const rows = await db.query<DutyRow>(
    `SELECT ${DUTY_COLUMNS} FROM duties du
     WHERE du.group_id = $1
       AND (($9::timestamptz IS NULL AND du.signed_on_at >= $2 AND du.signed_on_at < $3)
         OR ($9::timestamptz IS NOT NULL AND du.signed_on_at <= $9 AND (du.signed_off_at IS NULL OR du.signed_off_at > $9)))
       AND ($4::text IS NULL OR du.driver_id = $4)
       AND ($5::text IS NULL OR du.vehicle_id = $5)
       AND ($6::text IS NULL OR du.device_id = $6)
       AND ($7::timestamptz IS NULL OR (du.signed_on_at, du.duty_id) > ($7, $8))
       AND ${dutyVisible(10)}
     ORDER BY du.signed_on_at, du.duty_id
     LIMIT $11`,
    [scope.groupId, p.from, p.until, f.driver_id?.toLowerCase() ?? null, f.vehicle_id ?? null, f.device_id ?? null, after?.[0] ?? null, after?.[1] ?? null, at, teamsOf(scope), f.limit + 1],
  );
  return withTrips(db, scope.groupId, rows);
}

export async function getDuty(db: Queryable, scope: GroupScope, dutyId: string): Promise<DutyRecord> {
  const rows = await db.query<DutyRow>(`SELECT ${DUTY_COLUMNS} FROM duties du WHERE du.group_id = $1 AND du.duty_id = $2`, [scope.groupId, dutyId]);
  if (!rows[0]) throw errors.notFound('DutyNotFound', `No duty ${JSON.stringify(dutyId)} in the group`);
  const visible = await db.query(`SELECT 1 FROM duties du WHERE du.group_id = $1 AND du.duty_id = $2 AND ${dutyVisible(3)}`, [scope.groupId, dutyId, teamsOf(scope)]);
  if (visible.length === 0) throw errors.forbidden('ForbiddenDifferentTeam', 'This duty was operated by a driver and a vehicle of other teams');
  return (await withTrips(db, scope.groupId, rows))[0]!;
}

export async function currentDuty(db: Queryable, groupId: string, deviceId: string, now: Date): Promise<DutyRecord | null> {
  const rows = await db.query<DutyRow>(
    `SELECT ${DUTY_COLUMNS} FROM duties du WHERE du.group_id = $1 AND du.device_id = $2 AND du.signed_on_at <= $3 AND du.signed_off_at IS NULL
     ORDER BY du.signed_on_at DESC LIMIT 1`,
    [groupId, deviceId, now],
  );
  return (await withTrips(db, groupId, rows))[0] ?? null;
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
  const rows = await db.query<{
    trip_id: string; service_date: string; start_time: number | null; at: Date; event: TripEventRecord['event']; stop_id: string | null; stop_sequence: number | null;
    lat: number | null; lon: number | null; gps_valid: boolean; odometer_km: number | null; state: string | null; device_id: string; client_id: string;
    duty_id: string | null; driver_id: string | null; vehicle_id: string | null; received_at: Date;
  }>(
    `SELECT te.trip_id, te.service_date, te.start_time, te.at, te.event, te.stop_id, te.stop_sequence, te.lat, te.lon, te.gps_valid, te.odometer_km, te.state,
            te.device_id, te.client_id, te.received_at, du.duty_id, du.driver_id, du.vehicle_id
     FROM trip_events te
     LEFT JOIN LATERAL (
       SELECT d.group_id, d.duty_id, d.driver_id, d.vehicle_id FROM duties d
       WHERE d.group_id = te.group_id AND d.device_id = te.device_id AND d.signed_on_at <= te.at AND (d.signed_off_at IS NULL OR d.signed_off_at > te.at)
       ORDER BY d.signed_on_at DESC LIMIT 1
     ) du ON true
     WHERE te.group_id = $1 AND te.service_date >= $2 AND te.service_date <= $3
       AND ($4::text IS NULL OR te.trip_id = $4)
       AND ($5::text IS NULL OR du.vehicle_id = $5)
       AND ($6::text IS NULL OR te.device_id = $6)
       AND ($7::timestamptz IS NULL OR (te.at, te.device_id, te.client_id) > ($7, $8, $9::uuid))
       AND ($10::text[] IS NULL OR (du.duty_id IS NOT NULL AND ${dutyVisible(10)}))
     ORDER BY te.at, te.device_id, te.client_id
     LIMIT $11`,
    [scope.groupId, p.start, p.end, f.trip_id ?? null, f.vehicle_id ?? null, f.device_id ?? null, after?.[0] ?? null, after?.[1] ?? null, after?.[2] ?? null, teamsOf(scope), f.limit + 1],
  );
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

interface ZoneRow {
  danger_zone_id: string;
  name: string;
  lat: number;
  lon: number;
  radius_m: number;
  message: string;
  active_from: Date | null;
  active_to: Date | null;
  archived: boolean;
}
const ZONE_COLUMNS = 'danger_zone_id, name, lat, lon, radius_m, message, active_from, active_to, archived';
const zoneRecord = (z: ZoneRow): DangerZoneRecord => ({ ...z, active_from: z.active_from?.toISOString() ?? null, active_to: z.active_to?.toISOString() ?? null });

function checkActive(from: string | null | undefined, to: string | null | undefined) {
  if (from && to && Date.parse(to) <= Date.parse(from)) throw invalid(['body', 'active_to'], 'active_to must be after active_from', 'value_error', to);
}

export async function createZone(ctx: AppContext, groupId: string, b: DangerZoneBody): Promise<DangerZoneRecord> {
  checkActive(b.active_from, b.active_to);
  const now = ctx.clock.now();
  const rows = await ctx.db.query<ZoneRow>(
    `INSERT INTO danger_zones (group_id, danger_zone_id, name, lat, lon, radius_m, message, active_from, active_to, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING ${ZONE_COLUMNS}`,
    [groupId, objectId(now.getTime()), b.name, b.lat, b.lon, b.radius_m, b.message, b.active_from ?? null, b.active_to ?? null, now],
  );
  return zoneRecord(rows[0]!);
}

export async function updateZone(ctx: AppContext, groupId: string, zoneId: string, b: DangerZonePatch): Promise<DangerZoneRecord> {
  const current = (await ctx.db.query<ZoneRow>(`SELECT ${ZONE_COLUMNS} FROM danger_zones WHERE group_id = $1 AND danger_zone_id = $2`, [groupId, zoneId]))[0];
  if (!current) throw errors.notFound('DangerZoneNotFound', `No danger zone ${JSON.stringify(zoneId)} in the group`);
  const next = { ...zoneRecord(current), ...b };
  checkActive(next.active_from, next.active_to);
  const rows = await ctx.db.query<ZoneRow>(
    `UPDATE danger_zones SET name = $3, lat = $4, lon = $5, radius_m = $6, message = $7, active_from = $8, active_to = $9, archived = $10, updated_at = $11
     WHERE group_id = $1 AND danger_zone_id = $2 RETURNING ${ZONE_COLUMNS}`,
    [groupId, zoneId, next.name, next.lat, next.lon, next.radius_m, next.message, next.active_from, next.active_to, next.archived, ctx.clock.now()],
  );
  return zoneRecord(rows[0]!);
}

export async function listZones(db: Queryable, groupId: string, o: { archived: boolean }): Promise<DangerZoneRecord[]> {
  const rows = await db.query<ZoneRow>(`SELECT ${ZONE_COLUMNS} FROM danger_zones WHERE group_id = $1 AND archived = $2 ORDER BY name, danger_zone_id`, [groupId, o.archived]);
  return rows.map(zoneRecord);
}

/** Zones in force now whose edge is within `radius_m` of the position, nearest first. */
export async function zonesAround(db: Queryable, groupId: string, q: { lat: number; lon: number; radius_m: number }, now: Date): Promise<(DangerZoneRecord & { distance_m: number })[]> {
  const ruler = new CheapRuler(q.lat, 'meters');
  // A bounding box prefilter in SQL (zones are at most 100 km wide), the exact distance here.
  const [w, s, e, n] = ruler.bufferPoint([q.lon, q.lat], q.radius_m + 100_000);
  const rows = await db.query<ZoneRow>(
    `SELECT ${ZONE_COLUMNS} FROM danger_zones
     WHERE group_id = $1 AND NOT archived AND lat BETWEEN $2 AND $3 AND lon BETWEEN $4 AND $5
       AND (active_from IS NULL OR active_from <= $6) AND (active_to IS NULL OR active_to > $6)`,
    [groupId, s, n, w, e, now],
  );
  return rows
    .map((z) => ({ ...zoneRecord(z), distance_m: Math.max(0, ruler.distance([q.lon, q.lat], [z.lon, z.lat]) - z.radius_m) }))
    .filter((z) => z.distance_m <= q.radius_m)
    .sort((a, b) => a.distance_m - b.distance_m);
}
