/** The on_demand_routes and on_demand_stops tables: a group's on-demand routes and their ordered stops. */
import type { Queryable, Tx } from '../../../platform/db/index.js';
import type { OnDemandRoute } from '../on-demand/schemas.js';

export type OnDemandStop = OnDemandRoute['stops'][number];

/** A route with its stops in order. */
export interface OnDemandRouteRow {
  route_id: string;
  name: string;
  short_name: string | null;
  description: string | null;
  color: string | null;
  text_color: string | null;
  status: OnDemandRoute['status'];
  created_at: Date;
  updated_at: Date;
  stops: OnDemandStop[];
}

const ROUTE_SELECT = `
  SELECT r.route_id, r.name, r.short_name, r.description, r.color, r.text_color, r.status, r.created_at, r.updated_at,
         COALESCE((SELECT json_agg(json_build_object('stop_id', s.stop_id, 'name', s.name, 'lat', s.lat, 'lon', s.lon) ORDER BY s.position)
                   FROM on_demand_stops s WHERE s.group_id = r.group_id AND s.route_id = r.route_id), '[]') AS stops
  FROM on_demand_routes r`;

export async function selectOnDemandRoute(db: Queryable, groupId: string, routeId: string): Promise<OnDemandRouteRow | null> {
  return (await db.query<OnDemandRouteRow>(`${ROUTE_SELECT} WHERE r.group_id = $1 AND r.route_id = $2`, [groupId, routeId]))[0] ?? null;
}

/** The group's routes by route_id; archived ones only when `withArchived`. */
export function selectOnDemandRoutes(db: Queryable, groupId: string, withArchived: boolean): Promise<OnDemandRouteRow[]> {
  return withArchived
    ? db.query<OnDemandRouteRow>(`${ROUTE_SELECT} WHERE r.group_id = $1 ORDER BY r.route_id`, [groupId])
    : db.query<OnDemandRouteRow>(`${ROUTE_SELECT} WHERE r.group_id = $1 AND r.status <> 'archived' ORDER BY r.route_id`, [groupId]);
}

/** The new route's row without its stops; false when the group has one of this id already. */
export async function insertOnDemandRoute(
  tx: Queryable,
  groupId: string,
  r: Omit<OnDemandRouteRow, 'created_at' | 'updated_at' | 'stops'>,
  now: Date,
): Promise<boolean> {
  const rows = await tx.query(
    `INSERT INTO on_demand_routes (group_id, route_id, name, short_name, description, color, text_color, status, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) ON CONFLICT DO NOTHING RETURNING 1`,
    [groupId, r.route_id, r.name, r.short_name, r.description, r.color, r.text_color, r.status, now],
  );
  return rows.length > 0;
}

/** A patch: null name and status are left as they are; the others change only when their `set` flag is true. */
export interface OnDemandRoutePatch {
  name: string | null;
  setShortName: boolean;
  short_name: string | null;
  setDescription: boolean;
  description: string | null;
  setColor: boolean;
  color: string | null;
  setTextColor: boolean;
  text_color: string | null;
  status: OnDemandRoute['status'] | null;
}

/** False when the group has no such route. */
export async function updateOnDemandRoute(tx: Queryable, groupId: string, routeId: string, p: OnDemandRoutePatch, now: Date): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE on_demand_routes SET
       name = COALESCE($3, name),
       short_name = CASE WHEN $4 THEN $5 ELSE short_name END,
       description = CASE WHEN $6 THEN $7 ELSE description END,
       color = CASE WHEN $8 THEN $9 ELSE color END,
       text_color = CASE WHEN $10 THEN $11 ELSE text_color END,
       status = COALESCE($12, status),
       updated_at = $13
     WHERE group_id = $1 AND route_id = $2 RETURNING 1`,
    [groupId, routeId, p.name, p.setShortName, p.short_name, p.setDescription, p.description, p.setColor, p.color, p.setTextColor, p.text_color, p.status, now],
  );
  return rows.length > 0;
}

/** Replaces a route's stops by `stops`, in their order. */
export async function replaceOnDemandStops(tx: Tx, groupId: string, routeId: string, stops: readonly OnDemandStop[]): Promise<void> {
  await tx.query('DELETE FROM on_demand_stops WHERE group_id = $1 AND route_id = $2', [groupId, routeId]);
  if (stops.length === 0) return;
  await tx.query(
    `INSERT INTO on_demand_stops (group_id, route_id, stop_id, position, name, lat, lon)
     SELECT $1, $2, s.* FROM unnest($3::text[], $4::int[], $5::text[], $6::float8[], $7::float8[]) AS s`,
    [groupId, routeId, stops.map((s) => s.stop_id), stops.map((_s, i) => i), stops.map((s) => s.name), stops.map((s) => s.lat), stops.map((s) => s.lon)],
  );
}
