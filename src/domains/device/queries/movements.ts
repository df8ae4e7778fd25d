/**
 * The vehicle_movements table (docs/architecture.md). A movement is read with the duty open on
 * its device when it started (duties, read-only) and seen by the teams of that duty's driver or
 * vehicle (drivers, vehicles, read-only): one statement.
 */
import type { Queryable } from '../../../platform/db/index.js';
import type { MOVEMENT_KINDS } from '../schemas.js';

export interface MovementRow {
  vehicle_movement_id: string;
  kind: (typeof MOVEMENT_KINDS)[number];
  service_date: string;
  block_id: string | null;
  origin: Record<string, unknown>;
  destination: Record<string, unknown>;
  started_at: Date;
  ended_at: Date;
  distance_km: number | null;
  device_id: string;
  duty_id: string | null;
  vehicle_id: string | null;
  driver_id: string | null;
}

/** The movements matching `where` ($3…) that `teams` ($2, null: every team) see, by start. */
function select(where: string): string {
  return `SELECT m.vehicle_movement_id, m.kind, m.service_date, m.block_id, m.origin, m.destination, m.started_at, m.ended_at, m.distance_km, m.device_id,
            du.duty_id, du.vehicle_id, du.driver_id
     FROM vehicle_movements m
     LEFT JOIN LATERAL (
       SELECT d.duty_id, d.vehicle_id, d.driver_id FROM duties d
       WHERE d.group_id = m.group_id AND d.device_id = m.device_id AND d.signed_on_at <= m.started_at AND (d.signed_off_at IS NULL OR d.signed_off_at > m.started_at)
       ORDER BY d.signed_on_at DESC LIMIT 1
     ) du ON true
     WHERE m.group_id = $1 AND ${where}
       AND ($2::text[] IS NULL
         OR EXISTS (SELECT 1 FROM drivers dr WHERE dr.group_id = m.group_id AND dr.driver_id = du.driver_id AND dr.teams && $2::text[])
         OR EXISTS (SELECT 1 FROM vehicles ve WHERE ve.group_id = m.group_id AND ve.vehicle_id = du.vehicle_id AND ve.teams && $2::text[]))
     ORDER BY m.started_at, m.vehicle_movement_id`;
}

/** The movements of a service date (of a block when given) that `teams` see. */
export function selectMovementsOfDate(db: Queryable, groupId: string, teams: string[] | null, date: string, blockId: string | null): Promise<MovementRow[]> {
  return db.query<MovementRow>(select('m.service_date = $3 AND ($4::text IS NULL OR m.block_id = $4)'), [groupId, teams, date, blockId]);
}

/** The movements of the service dates from `start` to `end` that `teams` see. */
export function selectMovementsOfPeriod(db: Queryable, groupId: string, teams: string[] | null, start: string, end: string): Promise<MovementRow[]> {
  return db.query<MovementRow>(select('m.service_date BETWEEN $3 AND $4'), [groupId, teams, start, end]);
}

/** The movement of this id if `teams` see it, else null. */
export async function selectMovement(db: Queryable, groupId: string, teams: string[] | null, id: string): Promise<MovementRow | null> {
  return (await db.query<MovementRow>(select('m.vehicle_movement_id = $3'), [groupId, teams, id]))[0] ?? null;
}

/** Whether the group holds any movement. */
export async function selectAnyMovement(db: Queryable, groupId: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM vehicle_movements WHERE group_id = $1 LIMIT 1', [groupId])).length > 0;
}
