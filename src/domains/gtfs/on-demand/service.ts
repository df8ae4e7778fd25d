/**
 * On-demand routes (features device_event_sourcing and on_demand): provisioned by the group's
 * admins, read publicly while active or inactive. An archived route is, for public reads,
 * indistinguishable from an unknown one (spec: States and transitions).
 */
import type { AppContext } from '../../../platform/context.js';
import type { Queryable, Tx } from '../../../platform/db/index.js';
import { errors, fail, invalid } from '../../../platform/http/errors.js';
import type { CreateOnDemandRoute, OnDemandRoute, PatchOnDemandRoute, PublicOnDemandRoute } from './schemas.js';

type Stop = OnDemandRoute['stops'][number];

interface RouteRow {
  route_id: string;
  name: string;
  short_name: string | null;
  description: string | null;
  color: string | null;
  text_color: string | null;
  status: OnDemandRoute['status'];
  created_at: Date;
  updated_at: Date;
  stops: Stop[];
}

const ROUTE_SELECT = `
  SELECT r.route_id, r.name, r.short_name, r.description, r.color, r.text_color, r.status, r.created_at, r.updated_at,
         COALESCE((SELECT json_agg(json_build_object('stop_id', s.stop_id, 'name', s.name, 'lat', s.lat, 'lon', s.lon) ORDER BY s.position)
                   FROM on_demand_stops s WHERE s.group_id = r.group_id AND s.route_id = r.route_id), '[]') AS stops
  FROM on_demand_routes r`;

const routeRecord = (r: RouteRow): OnDemandRoute => ({ ...r, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() });

const publicRecord = ({ route_id, name, short_name, description, color, text_color, status, stops }: RouteRow): PublicOnDemandRoute => ({
  route_id, name, short_name, description, color, text_color, status: status as PublicOnDemandRoute['status'], stops,
});

/** One body for an unknown and an archived route, so the answer tells nothing about which it is. */
const publicNotFound = () => fail('OnDemandRouteNotFound', 'No active or inactive on-demand route has this route_id in this group');

function checkStops(stops: readonly Stop[]) {
  const seen = new Map<string, number>();
  stops.forEach((s, i) => {
    const first = seen.get(s.stop_id);
    if (first !== undefined) throw invalid(['body', 'stops', i, 'stop_id'], `stop_id ${JSON.stringify(s.stop_id)} is already the stop at index ${first}`, 'value_error', s.stop_id);
    seen.set(s.stop_id, i);
  });
}

async function writeStops(tx: Tx, groupId: string, routeId: string, stops: readonly Stop[]) {
  await tx.query('DELETE FROM on_demand_stops WHERE group_id = $1 AND route_id = $2', [groupId, routeId]);
  if (stops.length === 0) return;
  await tx.query(
    `INSERT INTO on_demand_stops (group_id, route_id, stop_id, position, name, lat, lon)
     SELECT $1, $2, s.* FROM unnest($3::text[], $4::int[], $5::text[], $6::float8[], $7::float8[]) AS s`,
    [groupId, routeId, stops.map((s) => s.stop_id), stops.map((_s, i) => i), stops.map((s) => s.name), stops.map((s) => s.lat), stops.map((s) => s.lon)],
  );
}

async function findRoute(db: Queryable, groupId: string, routeId: string): Promise<RouteRow | null> {
  return (await db.query<RouteRow>(`${ROUTE_SELECT} WHERE r.group_id = $1 AND r.route_id = $2`, [groupId, routeId]))[0] ?? null;
}

const notFound = (routeId: string) => errors.notFound('OnDemandRouteNotFound', `On-demand route ${JSON.stringify(routeId)} does not exist in this group`);

export async function createRoute(ctx: AppContext, groupId: string, input: CreateOnDemandRoute): Promise<OnDemandRoute> {
  checkStops(input.stops);
  const now = ctx.clock.now();
  await ctx.db.transaction(async (tx) => {
    const rows = await tx.query(
      `INSERT INTO on_demand_routes (group_id, route_id, name, short_name, description, color, text_color, status, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) ON CONFLICT DO NOTHING RETURNING 1`,
      [groupId, input.route_id, input.name, input.short_name ?? null, input.description ?? null, input.color?.toUpperCase() ?? null, input.text_color?.toUpperCase() ?? null, input.status ?? 'active', now],
    );
    if (rows.length === 0) throw errors.conflict('OnDemandRouteExists', `On-demand route ${JSON.stringify(input.route_id)} already exists in this group`);
    await writeStops(tx, groupId, input.route_id, input.stops);
  });
  return routeRecord((await findRoute(ctx.db, groupId, input.route_id))!);
}

export async function updateRoute(ctx: AppContext, groupId: string, routeId: string, patch: PatchOnDemandRoute): Promise<OnDemandRoute> {
  if (patch.stops) checkStops(patch.stops);
  const has = (k: keyof PatchOnDemandRoute) => patch[k] !== undefined;
  await ctx.db.transaction(async (tx) => {
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
      [
        groupId, routeId, patch.name ?? null, has('short_name'), patch.short_name ?? null, has('description'), patch.description ?? null,
        has('color'), patch.color?.toUpperCase() ?? null, has('text_color'), patch.text_color?.toUpperCase() ?? null, patch.status ?? null, ctx.clock.now(),
      ],
    );
    if (rows.length === 0) throw notFound(routeId);
    if (patch.stops) await writeStops(tx, groupId, routeId, patch.stops);
  });
  return routeRecord((await findRoute(ctx.db, groupId, routeId))!);
}

/** Every route of the group, archived ones included (provisioning). */
export async function listRoutes(db: Queryable, groupId: string): Promise<OnDemandRoute[]> {
  return (await db.query<RouteRow>(`${ROUTE_SELECT} WHERE r.group_id = $1 ORDER BY r.route_id`, [groupId])).map(routeRecord);
}

export async function getRoute(db: Queryable, groupId: string, routeId: string): Promise<OnDemandRoute> {
  const r = await findRoute(db, groupId, routeId);
  if (!r) throw notFound(routeId);
  return routeRecord(r);
}

/** spec: public reads return active and inactive routes only. */
export async function listPublicRoutes(db: Queryable, groupId: string): Promise<PublicOnDemandRoute[]> {
  return (await db.query<RouteRow>(`${ROUTE_SELECT} WHERE r.group_id = $1 AND r.status <> 'archived' ORDER BY r.route_id`, [groupId])).map(publicRecord);
}

export async function getPublicRoute(db: Queryable, groupId: string, routeId: string): Promise<PublicOnDemandRoute> {
  const r = await findRoute(db, groupId, routeId);
  if (!r || r.status === 'archived') throw publicNotFound();
  return publicRecord(r);
}
