/** Trip updates: recording (idempotent by the client's id), ending early, removing, searching. */
import { createHash } from 'node:crypto';
import type { AppContext } from '../../platform/context.js';
import { readPerDb } from '../../platform/cache.js';
import type { Queryable } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { errors, invalid, ValidationError, type ValidationIssue } from '../../platform/http/errors.js';
import { isoDate } from '../../platform/http/params.js';
import { localDate, period } from '../../platform/time.js';
import { routesOf, tripStopTimes, tripsOnServiceDate, versionInForce } from '../gtfs/service-days.js';
import { formatGtfsTime, gtfsSeconds } from '../gtfs/time.js';
import { publishTripUpdate } from './notices.js';
import { insertTripUpdate, selectTripUpdate, selectTripUpdates, selectTripUpdatesInForce, updateTripUpdateEnd, updateTripUpdateRemoved, type TripUpdateRow } from './queries.js';
import { concerns, emptyOverlay, overlayTrip, resolveStop, type TripOverlay } from './overlay.js';
import type { PutTripUpdateBody, StopRef, TripUpdateRecord, UpdateKind } from './schemas.js';

/** The longest range an update may cover, and a search may span. */
export const MAX_UPDATE_DAYS = 366;

type Row = TripUpdateRow;

function record(r: Row, today: string): TripUpdateRecord {
  const status = r.removed_at ? 'removed' : today < r.start_date ? 'scheduled' : today > r.end_date ? 'over' : 'in_force';
  return {
    update_id: r.update_id,
    sequence: r.seq,
    kind: r.kind,
    is_detour: r.kind === 'detour',
    trip_id: r.trip_id,
    route_id: r.route_id,
    start_time: r.start_time === null ? null : formatGtfsTime(r.start_time),
    start_date: r.start_date,
    end_date: r.end_date,
    stop: r.details.stop ?? null,
    replacement: r.details.replacement ?? null,
    added_stop: r.details.added_stop ?? null,
    detour: r.details.detour ?? null,
    message: r.message,
    status,
    created_at: r.created_at.toISOString(),
    created_by: r.created_by,
    ended_at: r.ended_at?.toISOString() ?? null,
    removed_at: r.removed_at?.toISOString() ?? null,
  };
}

/** JSON with sorted keys, so two equal bodies hash the same whatever their key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v as object).filter((k) => (v as Record<string, unknown>)[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

const FIELDS_OF: Record<UpdateKind, (keyof PutTripUpdateBody)[]> = {
  cancel: [],
  skip_stop: ['stop'],
  move_stop: ['stop', 'replacement'],
  add_stop: ['added_stop'],
  detour: ['detour'],
  message: ['message'],
};
const KIND_FIELDS: (keyof PutTripUpdateBody)[] = ['stop', 'replacement', 'added_stop', 'detour'];

/** Checks the shape rules the schema cannot say, then the references against the GTFS in force. */
async function check(db: Queryable, groupId: string, b: PutTripUpdateBody, timezone: string): Promise<void> {
  const issues: ValidationIssue[] = [];
  const bad = (loc: (string | number)[], msg: string, input?: unknown) => issues.push({ loc: ['body', ...loc], msg, type: 'value_error', ...(input !== undefined ? { input } : {}) });
  if ((b.trip_id === undefined) === (b.route_id === undefined)) bad(['trip_id'], 'Give trip_id (one trip) or route_id (every trip of the route), not both');
  if (b.start_time !== undefined && b.trip_id === undefined) bad(['start_time'], 'start_time names an instance of a trip: it goes with trip_id');
  for (const f of FIELDS_OF[b.kind]) if (b[f] === undefined) bad([f], `A ${b.kind} update needs ${f}`);
  for (const f of KIND_FIELDS) if (b[f] !== undefined && !FIELDS_OF[b.kind].includes(f)) bad([f], `${f} does not go with a ${b.kind} update`);
  const places = [b.replacement, b.added_stop?.place, ...(b.detour?.added_stops.map((a) => a.place) ?? [])];
  places.forEach((p) => {
    if (p && p.stop_id === undefined && (p.lat === undefined || p.lon === undefined || p.name === undefined)) bad(['replacement'], 'A place is a stop_id, or a temporary stop with lat, lon and name');
  });
  const refs: [StopRef, (string | number)[]][] = [];
  if (b.stop) refs.push([b.stop, ['stop']]);
  if (b.added_stop) refs.push([b.added_stop.after, ['added_stop', 'after']]);
  b.detour?.skipped_stops.forEach((s, i) => refs.push([s, ['detour', 'skipped_stops', i]]));
  b.detour?.added_stops.forEach((a, i) => refs.push([a.after, ['detour', 'added_stops', i, 'after']]));
  if (b.route_id !== undefined) for (const [ref, loc] of refs) if (ref.stop_id === undefined) bad([...loc, 'stop_id'], 'An update of a whole route names its stops by stop_id');
  const start = isoDate(b.start_date);
  const end = isoDate(b.end_date);
  try {
    period(start, end, timezone, MAX_UPDATE_DAYS);
  } catch (e) {
    if (e instanceof ValidationError) issues.push(...e.issues.map((i) => ({ ...i, loc: ['body', 'end_date'] })));
  }
  if (issues.length > 0) throw new ValidationError(issues);

  // References: the trip or route, and its stops, in the GTFS in force on the first date.
  const gtfsId = await versionInForce(db, groupId, start);
  if (gtfsId === null) throw invalid(['body', 'start_date'], 'No GTFS is published for this date: publish one before recording updates', 'value_error', b.start_date);
  if (b.trip_id !== undefined) {
    const stops = await tripStopTimes(db, groupId, start, b.trip_id, { gtfsId });
    if (stops.length === 0) throw invalid(['body', 'trip_id'], `No trip ${JSON.stringify(b.trip_id)} in the GTFS in force on ${start}`, 'value_error', b.trip_id);
    if (b.start_time !== undefined) {
      const day = await tripsOnServiceDate(db, groupId, start, { gtfsId, tripIds: [b.trip_id] });
      if (day.trips.length > 0 && !day.trips.some((t) => t.start_time === formatGtfsTime(gtfsSeconds(b.start_time!)))) {
        throw invalid(['body', 'start_time'], `Trip ${b.trip_id} has no instance starting at ${b.start_time} on ${start}`, 'value_error', b.start_time);
      }
    }
    for (const [ref, loc] of refs) if (resolveStop(ref, stops).length === 0) bad(loc, `Trip ${b.trip_id} does not call at ${JSON.stringify(ref)}`, ref);
  } else {
    const routes = await routesOf(db, groupId, gtfsId, [b.route_id!]);
    if (routes.length === 0) throw invalid(['body', 'route_id'], `No route ${JSON.stringify(b.route_id)} in the GTFS in force on ${start}`, 'value_error', b.route_id);
  }
  if (issues.length > 0) throw new ValidationError(issues);
}

/** PUT trip-updates: records an update; the same id and body again answer the same record. */
export async function putTripUpdate(ctx: AppContext, scope: GroupScope, b: PutTripUpdateBody, by: string | null): Promise<TripUpdateRecord> {
  const hash = createHash('sha256').update(canonical({ ...b, start_date: isoDate(b.start_date), end_date: isoDate(b.end_date) })).digest('hex');
  const today = localDate(ctx.clock.now(), scope.timezone);
  const existing = await selectTripUpdate(ctx.db, scope.groupId, b.update_id);
  if (existing) return sameOrConflict(existing, hash, today);
  await check(ctx.db, scope.groupId, b, scope.timezone);
  const { stop, replacement, added_stop, detour } = b;
  const inserted = await insertTripUpdate(ctx.db, scope.groupId, {
    update_id: b.update_id, kind: b.kind, trip_id: b.trip_id ?? null, route_id: b.route_id ?? null, start_time: b.start_time === undefined ? null : gtfsSeconds(b.start_time),
    start_date: isoDate(b.start_date), end_date: isoDate(b.end_date), details: { stop, replacement, added_stop, detour }, message: b.message ?? null,
    body_hash: hash, created_at: ctx.clock.now(), created_by: by,
  });
  if (inserted) {
    publishTripUpdate(ctx, scope.groupId, b.update_id, 'put');
    return record(inserted, today);
  }
  // Recorded meanwhile by a concurrent request with the same id.
  const now = (await selectTripUpdate(ctx.db, scope.groupId, b.update_id))!;
  return sameOrConflict(now, hash, today);
}

function sameOrConflict(r: Row, hash: string, today: string): TripUpdateRecord {
  if (r.body_hash !== hash) throw errors.conflict('TripUpdateConflict', `Update ${JSON.stringify(r.update_id)} was recorded with another body; choose a new update_id`);
  return record(r, today);
}

async function requireUpdate(db: Queryable, groupId: string, id: string): Promise<Row> {
  const r = await selectTripUpdate(db, groupId, id);
  if (!r) throw errors.notFound('TripUpdateNotFound', `No trip update ${JSON.stringify(id)} in the group`);
  return r;
}

/** Ends an update early: its last date becomes `endDate` (default: today in the group's zone). */
export async function endTripUpdate(ctx: AppContext, scope: GroupScope, id: string, endDate: string | undefined): Promise<TripUpdateRecord> {
  const today = localDate(ctx.clock.now(), scope.timezone);
  const r = await requireUpdate(ctx.db, scope.groupId, id);
  if (r.removed_at) throw errors.conflict('TripUpdateRemoved', `Update ${JSON.stringify(id)} was removed`);
  const end = endDate === undefined ? today : isoDate(endDate);
  if (end > r.end_date) throw invalid(['body', 'end_date'], `Ending early moves the last date earlier; it is ${r.end_date}`, 'value_error', endDate);
  if (end < r.start_date) throw invalid(['body', 'end_date'], `The update starts on ${r.start_date}: remove it instead`, 'value_error', endDate);
  const ended = await updateTripUpdateEnd(ctx.db, scope.groupId, id, end, ctx.clock.now());
  publishTripUpdate(ctx, scope.groupId, id, 'ended');
  return record(ended!, today);
}

/** Removes an update: it no longer applies to any date; the record stays (removed_at). */
export async function removeTripUpdate(ctx: AppContext, scope: GroupScope, id: string): Promise<TripUpdateRecord> {
  const before = await requireUpdate(ctx.db, scope.groupId, id);
  const removed = await updateTripUpdateRemoved(ctx.db, scope.groupId, id, ctx.clock.now());
  if (!before.removed_at) publishTripUpdate(ctx, scope.groupId, id, 'removed');
  return record(removed!, localDate(ctx.clock.now(), scope.timezone));
}

/** One update as it stands now (the live stream reads it when told it changed); null when unknown. */
export async function getTripUpdate(db: Queryable, groupId: string, id: string, today: string): Promise<TripUpdateRecord | null> {
  const r = await selectTripUpdate(db, groupId, id);
  return r ? record(r, today) : null;
}

export interface SearchQuery {
  date?: string | undefined;
  start_date?: string | undefined;
  end_date?: string | undefined;
  route_id?: string | undefined;
  trip_id?: string | undefined;
  kind?: UpdateKind | undefined;
  include_removed?: boolean | undefined;
}

/** Updates in force on a date or during a period (default: today), oldest first. */
export async function searchTripUpdates(ctx: AppContext, scope: GroupScope, q: SearchQuery): Promise<TripUpdateRecord[]> {
  const today = localDate(ctx.clock.now(), scope.timezone);
  if (q.date !== undefined && (q.start_date !== undefined || q.end_date !== undefined)) throw invalid(['query', 'date'], 'Give date, or start_date and end_date', 'value_error');
  const start = isoDate(q.date ?? q.start_date ?? q.end_date ?? today);
  const end = isoDate(q.date ?? q.end_date ?? q.start_date ?? today);
  period(start, end, scope.timezone, MAX_UPDATE_DAYS);
  // A trip is concerned by its own updates and by those of its route; a route by its own and by
  // those of its trips (routes of trips as the GTFS in force on the first date says).
  const gtfsId = await versionInForce(ctx.db, scope.groupId, start);
  const rows = await selectTripUpdates(ctx.db, scope.groupId, {
    start, end, tripId: q.trip_id ?? null, routeId: q.route_id ?? null, kind: q.kind ?? null, includeRemoved: q.include_removed ?? false, gtfsId,
  });
  return rows.map((r) => record(r, today));
}

/** The updates in force on a service date for these trips (or their routes), oldest first. */
export async function updatesInForce(db: Queryable, groupId: string, serviceDate: string, o: { tripIds?: readonly string[]; routeIds?: readonly string[] } = {}): Promise<TripUpdateRecord[]> {
  // A date's updates in force are few (an operator's detours and cancellations): read whole, kept
  // while trip_updates has not changed, filtered here as the statement filters them.
  const all = await inForceRead(db, `${groupId}\n${serviceDate}`, () => selectTripUpdatesInForce(db, groupId, serviceDate, null, null));
  const trips = o.tripIds ? new Set(o.tripIds) : null;
  const routes = o.routeIds ? new Set(o.routeIds) : null;
  const wanted = trips === null && routes === null ? all : all.filter((r) => (r.trip_id !== null && trips?.has(r.trip_id)) || (r.route_id !== null && routes?.has(r.route_id)));
  return wanted.map((r) => record(r, serviceDate));
}

/**
 * The updates in force by group and date, per database handle, kept exact by the change feed: a
 * trip object reads them twice (its tracking's overlay, its own), every feed rebuild once per
 * date. The TTL only bounds a lost notification.
 */
const inForceRead = readPerDb<readonly TripUpdateRow[]>({ only: ['trip_updates'] }, 60_000);

export interface TripKey {
  trip_id: string;
  route_id: string;
  start_time?: string | null;
}

export const overlayKey = (t: { trip_id: string; start_time?: string | null }) => `${t.trip_id}@${t.start_time ?? ''}`;

/**
 * The overlay of each trip (see overlay.ts) on a service date. Stop lists are read only for the
 * trips an update names stops of. Trips without updates get an empty overlay.
 */
export async function overlaysFor(db: Queryable, groupId: string, serviceDate: string, trips: readonly TripKey[]): Promise<Map<string, TripOverlay>> {
  const out = new Map<string, TripOverlay>();
  if (trips.length === 0) return out;
  const updates = await updatesInForce(db, groupId, serviceDate, { tripIds: [...new Set(trips.map((t) => t.trip_id))], routeIds: [...new Set(trips.map((t) => t.route_id))] });
  for (const t of trips) {
    const mine = updates.filter((u) => concerns(u, t));
    if (mine.length === 0) {
      out.set(overlayKey(t), emptyOverlay());
      continue;
    }
    const needsStops = mine.some((u) => u.kind !== 'cancel' && u.kind !== 'message');
    const stops = needsStops ? await tripStopTimes(db, groupId, serviceDate, t.trip_id, t.start_time ? { startTime: t.start_time } : {}) : [];
    out.set(overlayKey(t), overlayTrip(mine, stops));
  }
  return out;
}
