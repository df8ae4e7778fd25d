/**
 * On-demand routes (features device_event_sourcing and on_demand): provisioned by the group's
 * admins, read publicly while active or inactive. An archived route is, for public reads,
 * indistinguishable from an unknown one (spec: States and transitions).
 */
import type { AppContext } from '../../../platform/context.js';
import type { Queryable } from '../../../platform/db/index.js';
import { errors, fail, invalid } from '../../../platform/http/errors.js';
import { insertOnDemandRoute, replaceOnDemandStops, selectOnDemandRoute, selectOnDemandRoutes, updateOnDemandRoute, type OnDemandRouteRow, type OnDemandStop } from '../queries/on-demand.js';
import type { CreateOnDemandRoute, OnDemandRoute, PatchOnDemandRoute, PublicOnDemandRoute } from './schemas.js';

const routeRecord = (r: OnDemandRouteRow): OnDemandRoute => ({ ...r, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() });

const publicRecord = ({ route_id, name, short_name, description, color, text_color, status, stops }: OnDemandRouteRow): PublicOnDemandRoute => ({
  route_id, name, short_name, description, color, text_color, status: status as PublicOnDemandRoute['status'], stops,
});

/** One body for an unknown and an archived route, so the answer tells nothing about which it is. */
const publicNotFound = () => fail('OnDemandRouteNotFound', 'No active or inactive on-demand route has this route_id in this group');

function checkStops(stops: readonly OnDemandStop[]) {
  const seen = new Map<string, number>();
  stops.forEach((s, i) => {
    const first = seen.get(s.stop_id);
    if (first !== undefined) throw invalid(['body', 'stops', i, 'stop_id'], `stop_id ${JSON.stringify(s.stop_id)} is already the stop at index ${first}`, 'value_error', s.stop_id);
    seen.set(s.stop_id, i);
  });
}

const notFound = (routeId: string) => errors.notFound('OnDemandRouteNotFound', `On-demand route ${JSON.stringify(routeId)} does not exist in this group`);

export async function createRoute(ctx: AppContext, groupId: string, input: CreateOnDemandRoute): Promise<OnDemandRoute> {
  checkStops(input.stops);
  const now = ctx.clock.now();
  await ctx.db.transaction(async (tx) => {
    const created = await insertOnDemandRoute(tx, groupId, {
      route_id: input.route_id, name: input.name, short_name: input.short_name ?? null, description: input.description ?? null,
      color: input.color?.toUpperCase() ?? null, text_color: input.text_color?.toUpperCase() ?? null, status: input.status ?? 'active',
    }, now);
    if (!created) throw errors.conflict('OnDemandRouteExists', `On-demand route ${JSON.stringify(input.route_id)} already exists in this group`);
    await replaceOnDemandStops(tx, groupId, input.route_id, input.stops);
  });
  return routeRecord((await selectOnDemandRoute(ctx.db, groupId, input.route_id))!);
}

export async function updateRoute(ctx: AppContext, groupId: string, routeId: string, patch: PatchOnDemandRoute): Promise<OnDemandRoute> {
  if (patch.stops) checkStops(patch.stops);
  const has = (k: keyof PatchOnDemandRoute) => patch[k] !== undefined;
  await ctx.db.transaction(async (tx) => {
    const found = await updateOnDemandRoute(tx, groupId, routeId, {
      name: patch.name ?? null, setShortName: has('short_name'), short_name: patch.short_name ?? null, setDescription: has('description'), description: patch.description ?? null,
      setColor: has('color'), color: patch.color?.toUpperCase() ?? null, setTextColor: has('text_color'), text_color: patch.text_color?.toUpperCase() ?? null, status: patch.status ?? null,
    }, ctx.clock.now());
    if (!found) throw notFound(routeId);
    if (patch.stops) await replaceOnDemandStops(tx, groupId, routeId, patch.stops);
  });
  return routeRecord((await selectOnDemandRoute(ctx.db, groupId, routeId))!);
}

/** Every route of the group, archived ones included (provisioning). */
export async function listRoutes(db: Queryable, groupId: string): Promise<OnDemandRoute[]> {
  return (await selectOnDemandRoutes(db, groupId, true)).map(routeRecord);
}

export async function getRoute(db: Queryable, groupId: string, routeId: string): Promise<OnDemandRoute> {
  const r = await selectOnDemandRoute(db, groupId, routeId);
  if (!r) throw notFound(routeId);
  return routeRecord(r);
}

/** spec: public reads return active and inactive routes only. */
export async function listPublicRoutes(db: Queryable, groupId: string): Promise<PublicOnDemandRoute[]> {
  return (await selectOnDemandRoutes(db, groupId, false)).map(publicRecord);
}

export async function getPublicRoute(db: Queryable, groupId: string, routeId: string): Promise<PublicOnDemandRoute> {
  const r = await selectOnDemandRoute(db, groupId, routeId);
  if (!r || r.status === 'archived') throw publicNotFound();
  return publicRecord(r);
}
