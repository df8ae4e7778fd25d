/**
 * The duties table as the duty reads see it (GET duties, a device's current duty, trip events with
 * their duty). A caller limited to teams sees a duty when its driver or its vehicle is in one of
 * their teams: drivers and vehicles are read for their teams, trip_events and trip_runs (the
 * device's reports) for what was done during a duty, all read-only.
 */
import type { Queryable, Tx } from '../../../platform/db/index.js';
import type { DutyRecord } from '../../device/schemas.js';
import type { TripEventRecord } from '../schemas.js';

/** SQL: the duty aliased `du` is visible to the teams in parameter $n (null = all). */
const dutyVisible = (n: number) => `($${n}::text[] IS NULL
  OR EXISTS (SELECT 1 FROM drivers dr WHERE dr.group_id = du.group_id AND dr.driver_id = du.driver_id AND dr.teams && $${n}::text[])
  OR EXISTS (SELECT 1 FROM vehicles ve WHERE ve.group_id = du.group_id AND ve.vehicle_id = du.vehicle_id AND ve.teams && $${n}::text[]))`;

export interface DutyRow {
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

export interface RunRow {
  device_id: string;
  kind: 'start' | 'end';
  at: Date;
  trip_id: string;
  service_date: string;
  start_time: number | null;
  block_id: string | null;
}

/** The trip_start and trip_end reports of the devices from `from` until `until` (null: open), by time, a start before an end. */
export function selectRuns(db: Queryable, groupId: string, devices: string[], from: Date, until: Date | null): Promise<RunRow[]> {
  return db.query<RunRow>(
    `SELECT device_id, kind, at, trip_id, service_date, start_time, block_id FROM trip_runs
     WHERE group_id = $1 AND device_id = ANY($2) AND at >= $3 AND ($4::timestamptz IS NULL OR at < $4)
     ORDER BY at, CASE kind WHEN 'start' THEN 0 ELSE 1 END`,
    [groupId, devices, from, until],
  );
}

export interface DutySelection {
  /** Signed on in [from, until), unless `at` is given: open at that instant. */
  from: Date;
  until: Date;
  at: Date | null;
  driverId: string | null;
  vehicleId: string | null;
  deviceId: string | null;
  /** The (signed_on_at, duty_id) after which the page starts, or null. */
  after: [string, string] | null;
  teams: string[] | null;
  limit: number;
}

/** The duties selected that `teams` see, by sign-on time. */
export function selectDuties(db: Queryable, groupId: string, s: DutySelection): Promise<DutyRow[]> {
  return db.query<DutyRow>(
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
    [groupId, s.from, s.until, s.driverId, s.vehicleId, s.deviceId, s.after?.[0] ?? null, s.after?.[1] ?? null, s.at, s.teams, s.limit],
  );
}

export async function selectDuty(db: Queryable, groupId: string, dutyId: string): Promise<DutyRow | null> {
  return (await db.query<DutyRow>(`SELECT ${DUTY_COLUMNS} FROM duties du WHERE du.group_id = $1 AND du.duty_id = $2`, [groupId, dutyId]))[0] ?? null;
}

/** Whether `teams` (null: every team) see the duty. */
export async function dutyVisibleTo(db: Queryable, groupId: string, dutyId: string, teams: string[] | null): Promise<boolean> {
  const visible = await db.query(`SELECT 1 FROM duties du WHERE du.group_id = $1 AND du.duty_id = $2 AND ${dutyVisible(3)}`, [groupId, dutyId, teams]);
  return visible.length > 0;
}

/** The device's latest duty signed on by `now` and not signed off. */
export async function selectOpenDuty(db: Queryable, groupId: string, deviceId: string, now: Date): Promise<DutyRow | null> {
  const rows = await db.query<DutyRow>(
    `SELECT ${DUTY_COLUMNS} FROM duties du WHERE du.group_id = $1 AND du.device_id = $2 AND du.signed_on_at <= $3 AND du.signed_off_at IS NULL
     ORDER BY du.signed_on_at DESC LIMIT 1`,
    [groupId, deviceId, now],
  );
  return rows[0] ?? null;
}

export interface TripEventRow {
  trip_id: string; service_date: string; start_time: number | null; at: Date; event: TripEventRecord['event']; stop_id: string | null; stop_sequence: number | null;
  lat: number | null; lon: number | null; gps_valid: boolean; odometer_km: number | null; state: string | null; device_id: string; client_id: string;
  duty_id: string | null; driver_id: string | null; vehicle_id: string | null; received_at: Date;
}

export interface TripEventSelection {
  /** Service dates, inclusive. */
  start: string;
  end: string;
  tripId: string | null;
  vehicleId: string | null;
  deviceId: string | null;
  /** The (at, device_id, client_id) after which the page starts, or null. */
  after: [string, string, string] | null;
  teams: string[] | null;
  limit: number;
}

/** Trip events of the service dates, by time, with the duty open on their device then. */
export function selectTripEvents(db: Queryable, groupId: string, s: TripEventSelection): Promise<TripEventRow[]> {
  return db.query<TripEventRow>(
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
    [groupId, s.start, s.end, s.tripId, s.vehicleId, s.deviceId, s.after?.[0] ?? null, s.after?.[1] ?? null, s.after?.[2] ?? null, s.teams, s.limit],
  );
}

/** A duty derived from its device's sign events (duties/service.ts, deriveDuties). */
export interface DerivedDuty {
  duty_id: string;
  driver_id: string | null;
  vehicle_id: string | null;
  signed_on_at: Date;
  signed_off_at: Date | null;
  end_reason: 'sign_off' | 'next_sign_on' | null;
  sign_on: Record<string, unknown>;
  sign_off: Record<string, unknown> | null;
  non_commercial_km: number | null;
}

/** Stores the derived duties of a device: a new one inserted, a known one given its (new) end. */
export async function upsertDerivedDuties(tx: Tx, g: string, d: string, duties: readonly DerivedDuty[]): Promise<void> {
  await tx.query(
    `INSERT INTO duties (group_id, duty_id, device_id, driver_id, vehicle_id, signed_on_at, signed_off_at, end_reason, sign_on, sign_off, non_commercial_km)
     SELECT $1, u.duty_id, $2, u.driver_id, u.vehicle_id, u.signed_on_at, u.signed_off_at, u.end_reason, u.sign_on, u.sign_off, u.non_commercial_km
     FROM unnest($3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[], $8::text[], $9::jsonb[], $10::jsonb[], $11::float8[])
       AS u(duty_id, driver_id, vehicle_id, signed_on_at, signed_off_at, end_reason, sign_on, sign_off, non_commercial_km)
     ON CONFLICT (group_id, duty_id) DO UPDATE SET
       signed_off_at = EXCLUDED.signed_off_at, end_reason = EXCLUDED.end_reason,
       sign_off = EXCLUDED.sign_off, non_commercial_km = EXCLUDED.non_commercial_km`,
    [
      g, d,
      duties.map((x) => x.duty_id), duties.map((x) => x.driver_id), duties.map((x) => x.vehicle_id),
      duties.map((x) => x.signed_on_at.toISOString()), duties.map((x) => x.signed_off_at?.toISOString() ?? null), duties.map((x) => x.end_reason),
      duties.map((x) => JSON.stringify(x.sign_on)), duties.map((x) => (x.sign_off ? JSON.stringify(x.sign_off) : null)), duties.map((x) => x.non_commercial_km),
    ],
  );
}
