/** The plannings table: the only place that reads or writes it (docs/architecture.md). */
import type { Queryable } from '../../platform/db/index.js';

/** One (trip, date) assignment; start_time is the instance's first departure, -1 for a trip without frequencies. */
export interface NewPlanning {
  service_date: string;
  trip_id: string;
  start_time: number;
  gtfs_id: string;
  vehicle_id: string | null;
  driver_id: string | null;
}

/** Creates or replaces the planning of each (trip, date) of `part`. */
export async function upsertPlannings(db: Queryable, groupId: string, part: readonly NewPlanning[], o: { filename: string | null; by: string | null; now: Date }): Promise<void> {
  await db.query(
    `INSERT INTO plannings (group_id, service_date, trip_id, start_time, gtfs_id, vehicle_id, driver_id, filename, created_by, updated_at)
     SELECT $1, u.service_date, u.trip_id, u.start_time, u.gtfs_id, u.vehicle_id, u.driver_id, $8, $9, $10
     FROM unnest($2::date[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[]) AS u(service_date, trip_id, start_time, gtfs_id, vehicle_id, driver_id)
     ON CONFLICT (group_id, service_date, trip_id, start_time) DO UPDATE SET
       gtfs_id = EXCLUDED.gtfs_id, vehicle_id = EXCLUDED.vehicle_id, driver_id = EXCLUDED.driver_id,
       filename = EXCLUDED.filename, created_by = EXCLUDED.created_by, updated_at = EXCLUDED.updated_at`,
    [
      groupId, part.map((r) => r.service_date), part.map((r) => r.trip_id), part.map((r) => r.start_time),
      part.map((r) => r.gtfs_id), part.map((r) => r.vehicle_id), part.map((r) => r.driver_id), o.filename, o.by, o.now,
    ],
  );
}

export interface PlanningRow {
  trip_id: string;
  start_time: number;
  gtfs_id: string;
  vehicle_id: string | null;
  driver_id: string | null;
  filename: string | null;
  updated_at: Date;
}

/**
 * The planning of a service date, of a driver and a vehicle when given (null: any), that `teams`
 * see (null: every team) through its vehicle or driver. A read model: it reads the vehicles' and
 * drivers' teams (fleet's tables) in the same statement.
 */
export function selectPlannings(
  db: Queryable,
  groupId: string,
  serviceDate: string,
  q: { driverId: string | null; vehicleId: string | null; ownDriverId: string | null; teams: string[] | null },
): Promise<PlanningRow[]> {
  return db.query<PlanningRow>(
    `SELECT p.trip_id, p.start_time, p.gtfs_id, p.vehicle_id, p.driver_id, p.filename, p.updated_at FROM plannings p
     LEFT JOIN vehicles v ON v.group_id = p.group_id AND v.vehicle_id = p.vehicle_id
     LEFT JOIN drivers d ON d.group_id = p.group_id AND d.driver_id = p.driver_id
     WHERE p.group_id = $1 AND p.service_date = $2
       AND ($3::text IS NULL OR p.driver_id = $3) AND ($4::text IS NULL OR p.vehicle_id = $4) AND ($5::text IS NULL OR p.driver_id = $5)
       AND ($6::text[] IS NULL OR v.teams && $6::text[] OR d.teams && $6::text[])`,
    [groupId, serviceDate, q.driverId, q.vehicleId, q.ownDriverId, q.teams],
  );
}

/** The vehicle and driver planned on each instance of a trip of a date, by start time. */
export function selectTripAssignments(db: Queryable, groupId: string, serviceDate: string, tripId: string): Promise<{ vehicle_id: string | null; driver_id: string | null }[]> {
  return db.query<{ vehicle_id: string | null; driver_id: string | null }>(
    'SELECT vehicle_id, driver_id FROM plannings WHERE group_id = $1 AND service_date = $2 AND trip_id = $3 ORDER BY start_time',
    [groupId, serviceDate, tripId],
  );
}
