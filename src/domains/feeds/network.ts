/**
 * What passenger information publishes, read once per refresh and shared by GTFS-Realtime and
 * SIRI: the network "now" of a group.
 *
 * - Trips: those of the current service date (and of the previous one while its trips still run)
 *   that have something to tell: an update in force (trip-updates overlay), a prediction (every
 *   trip in progress, on time or not, and the next trips of its block starting within
 *   BLOCK_HORIZON_SECONDS: predictTrips, called once per date and rebuild for the whole network,
 *   docs/predictions.md) or a reported delay. A trip leaves the feeds PAST_TRIP_SECONDS after its
 *   scheduled last arrival plus its delay.
 * - Calls: each trip's stops in order, with what the overlay makes of them (skipped, added,
 *   a moved stop being the original skipped and its replacement added) and expected times: the
 *   predicted ones at the stops ahead and the observed ones at the stops passed for a predicted
 *   trip; else (a trip with a delay and no prediction: a frequency trip, a trip just over) the
 *   scheduled time plus the delay, from the stop the delay was observed at onwards.
 * - Updates: those in force on those dates (alerts, situations).
 * - Vehicles: the latest position of each vehicle seen within the stale limit.
 */
import type { PredictionsConfig } from '../../config.js';
import type { Db, Queryable } from '../../platform/db/index.js';
import { slices } from '../../platform/slices.js';
import { addDays, localDate, serviceDayStart } from '../../platform/time.js';
import { ScheduleMemo } from '../gtfs/schedule-memo.js';
import { latestVehiclePositions, type VehiclePositionRow } from '../device/positions.js';
import { getGroup } from '../groups/service.js';
import { dayIndex, tripsOnServiceDate, tripsRoutes, versionInForce, type ScheduledStopTime, type ScheduledTrip, type ServiceDay, type ShapePoint } from '../gtfs/service-days.js';
import { formatGtfsTime } from '../gtfs/time.js';
import { concerns, overlayTrip, type TripOverlay } from '../updates/overlay.js';
import type { Place, TripUpdateRecord } from '../updates/schemas.js';
import { updatesInForce } from '../updates/service.js';
import { observedDelays } from '../trips/delays.js';
import type { TripTracking } from '../trips/tracking.js';
import { predictOpenTrips, type TripPrediction } from '../predictions/service.js';

/** A trip stays in the feeds this long after its (expected) last arrival. */
export const PAST_TRIP_SECONDS = 1800;

export interface Call {
  /** The GTFS stop, or the id given to a temporary stop (`tmp-<update_id>-<n>`). */
  stop_id: string;
  /** GTFS stop_sequence; null for a stop the overlay adds. */
  stop_sequence: number | null;
  name: string | null;
  lat: number | null;
  lon: number | null;
  status: 'scheduled' | 'skipped' | 'added';
  /** A temporary stop (not in the GTFS): place given by its coordinates. */
  temporary: boolean;
  update_id: string | null;
  arrival_at: Date | null;
  departure_at: Date | null;
  /**
   * A predicted trip: the prediction at a stop ahead, the observed time at a stop passed (`passed`).
   * Else the scheduled time plus the delay, for the calls from the observed stop onwards.
   */
  expected_arrival_at: Date | null;
  expected_departure_at: Date | null;
  /** Seconds (GTFS-Realtime StopTimeEvent.uncertainty): set at the stops a prediction covers. */
  uncertainty_seconds: number | null;
  /** The vehicle passed the stop: its expected times are the observed ones. */
  passed: boolean;
}

export interface FeedTrip {
  key: string;
  service_date: string;
  trip: ScheduledTrip;
  gtfs_id: string;
  stops: readonly ScheduledStopTime[];
  overlay: TripOverlay;
  delay: ObservedDelay | null;
  /**
   * The predicted times at the stops ahead: a trip in progress, a next trip of its block, or a trip
   * of the schedule horizon whose vehicle is not known yet (`from_trip_id` null: SIRI only).
   */
  prediction: TripPrediction | null;
  /** When the vehicle's progress was last observed (the trip it runs now), at most the snapshot's time. */
  observed_at: Date | null;
  calls: Call[];
  /** The trip's GTFS shape, read for a trip on a detour (the detour's full path is built from it). */
  shape: ShapePoint[] | null;
  /**
   * What the outputs tell of the trip beyond its schedule (immutable for a GTFS version), as a
   * string: two snapshots' trips of the same key and signature are told the same in every output,
   * whose pieces are kept from one rebuild to the next (fragments.ts). Null for a trip an update
   * applies to (a few: made again at each rebuild).
   */
  signature: string | null;
}

/** A vehicle of the feeds: its latest position (VehiclePositionRow), its trip's route, the trip's start as HH:MM:SS. */
export interface FeedVehicle extends Omit<VehiclePositionRow, 'start_time'> {
  route_id: string | null;
  start_time: string | null;
}

export interface NetworkNow {
  groupId: string;
  timezone: string;
  now: Date;
  /** The service dates whose trips it holds (the day before and the day, in the group's zone; none for the positions alone). */
  dates: string[];
  trips: FeedTrip[];
  updates: { service_date: string; update: TripUpdateRecord }[];
  vehicles: FeedVehicle[];
}

/** What the service's thread keeps of a snapshot built on the feeds' worker thread (feed-thread.ts): which group, its time zone, when. */
export type NetworkHead = Pick<NetworkNow, 'groupId' | 'timezone' | 'now'>;

/** The delay the feeds publish: trip tracking's (at the last stop passed), with where and when. */
export interface ObservedDelay {
  stop_sequence: number;
  stop_id: string;
  /** Seconds, positive when late. */
  delay: number;
  /** When the vehicle passed that stop. */
  at: Date;
}

/**
 * Whether what the feeds tell of a trip comes from its vehicle (SIRI Monitored; GTFS-Realtime
 * publishes only these): a delay observed, or a prediction from a vehicle in progress.
 */
export const monitored = (ft: Pick<FeedTrip, 'delay' | 'prediction'>) => ft.delay !== null || (ft.prediction !== null && ft.prediction.from_trip_id !== null);

/** Trip instance key: trip_id, and start time for a frequency instance. */
export const instanceKey = (tripId: string, startTime: string | null) => `${tripId}@${startTime ?? ''}`;

const isoBasic = (d: string) => d.replaceAll('-', '');
export { isoBasic };

/** The id of a place an update serves: its GTFS stop, or a temporary stop named after the update. */
export const placeId = (p: Place, updateId: string, n: number) => p.stop_id ?? `tmp-${updateId}-${n}`;

/**
 * Reads the network of a group at `now`, set-based: a fixed handful of queries for the whole
 * network whatever its size (per service date: the updates in force, the tracking of the trips
 * that may be in progress, when one is: the day's schedule and predictTrips' own queries; the
 * scheduled trips the updates, predictions and delays name, the stop times and shapes of the
 * trips new to the memo; once: the delays, the vehicles). Only trips still running are read: a trip that ended more than
 * PAST_TRIP_SECONDS ago (with its delay) is not read at all, so the cost does not grow with the
 * days recorded. `pause` (a test seam) is awaited after the trips are read and before the
 * vehicles are. `recompute` false: the trips' tracking and delays are read as the tracking rounds
 * left them, the trips marked dirty not recomputed first (the feeds' worker thread: cache.ts).
 *
 * Incremental: given the group's `previous` snapshot, a trip told exactly as then is that
 * snapshot's FeedTrip again, not one made anew. predictTrips gives back a prediction equal to the
 * previous one as the same object; a trip no update applies to, with the same prediction (by
 * identity), delay, time observed and stops passed as then, on the same GTFS version, keeps its
 * calls and signature. Between two snapshots a few seconds apart most of a network's trips are so
 * (a city's: 11,000 of 14,400 with no report in between), and the outputs reuse their pieces too.
 */
export async function networkNow(
  db: Db,
  groupId: string,
  now: Date,
  o: {
    staleVehicleSeconds: number; predictions: Pick<PredictionsConfig, 'minSamples' | 'minLayoverSeconds' | 'clockStepSeconds'>; memo?: ScheduleMemo; pause?: () => Promise<void>;
    /** SIRI ET's horizon (FEEDS_ET_HORIZON_MINUTES, in seconds): also the trips whose vehicle is not known scheduled within it. */
    scheduleHorizonSeconds?: number;
    recompute?: boolean;
    /** The group's last snapshot: what is told the same is taken from it. */
    previous?: NetworkNow;
  },
): Promise<NetworkNow> {
  const memo = o.memo ?? new ScheduleMemo();
  const tz = (await getGroup(db, groupId))!.timezone;
  const previous = o.previous && o.previous.groupId === groupId && o.previous.timezone === tz ? o.previous : undefined;
  const today = localDate(now, tz);
  const dates = [addDays(today, -1), today];
  const net: NetworkNow = { groupId, timezone: tz, now, dates, trips: [], updates: [], vehicles: [] };
  const endedSince = new Date(now.getTime() - PAST_TRIP_SECONDS * 1000);
  const delays = new Map<string, Map<string, ObservedDelay>>(dates.map((d) => [d, new Map()]));
  const recompute = o.recompute === false ? { recompute: false } : {};
  for (const d of await observedDelays(db, groupId, dates, endedSince, recompute)) {
    delays.get(d.service_date)?.set(instanceKey(d.trip_id, d.start_time), { stop_sequence: d.stop_sequence, stop_id: d.stop_id, delay: d.delay_seconds, at: d.passed_at });
  }
  for (const date of dates) {
    const updates = await updatesInForce(db, groupId, date);
    for (const u of updates) net.updates.push({ service_date: date, update: u });
    const before = previous?.trips.filter((t) => t.service_date === date);
    const predicted = before && new Map(before.flatMap((t) => (t.prediction ? [[t.prediction.trip_id, t.prediction] as const] : [])));
    const live = await liveOf(db, groupId, tz, date, now, o.predictions, memo, o.scheduleHorizonSeconds ?? 0, o.recompute !== false, predicted);
    net.trips.push(...(await tripsOf(db, groupId, tz, date, updates, delays.get(date)!, live, now, memo, before && new Map(before.map((t) => [t.key, t])))));
  }
  await o.pause?.();
  net.vehicles = await vehiclesNow(db, groupId, now, o.staleVehicleSeconds);
  return net;
}

/**
 * The vehicles of a group at `now` alone (no trip, no update): what the outputs told from the
 * vehicles' positions (GTFS-Realtime VehiclePositions, SIRI VehicleMonitoring) are built from
 * while a network's whole rebuild is late (cache.ts): one statement, whatever the trips cost.
 */
export async function positionsNow(db: Db, groupId: string, now: Date, staleVehicleSeconds: number): Promise<NetworkNow> {
  const tz = (await getGroup(db, groupId))!.timezone;
  return { groupId, timezone: tz, now, dates: [], trips: [], updates: [], vehicles: await vehiclesNow(db, groupId, now, staleVehicleSeconds) };
}

/** What the feeds know live of a service date: the tracking of its open trips and their predictions. */
interface LiveDate {
  /** The day's whole schedule, read when a trip is in progress (predictTrips needs the blocks). */
  schedule: ServiceDay | null;
  tracking: Map<string, TripTracking>;
  predictions: Map<string, TripPrediction>;
}

/**
 * One prediction for the whole network of a date (predictTrips on the tracking and schedule read
 * here, the stop times and the day's schedule through the memo), shared by every feed built from
 * the snapshot: the trips in progress, the next trips of their blocks and, within
 * `horizonSeconds`, the trips whose vehicle is not known yet.
 */
async function liveOf(
  db: Db, groupId: string, tz: string, date: string, now: Date, cfg: Pick<PredictionsConfig, 'minSamples' | 'minLayoverSeconds' | 'clockStepSeconds'>, memo: ScheduleMemo, horizonSeconds: number, recompute: boolean,
  previous: ReadonlyMap<string, TripPrediction> | undefined,
): Promise<LiveDate> {
  const ctx = { db, clock: { now: () => now }, config: { predictions: cfg } };
  const read = await predictOpenTrips(ctx, groupId, date, {
    now, schedule: () => memo.dayOf(db, groupId, tz, date), stopTimes: (gtfsId, ids) => memo.stopTimesOf(db, groupId, gtfsId, ids), scheduleHorizonSeconds: horizonSeconds, recompute,
    ...(previous ? { previous } : {}),
  });
  return {
    schedule: read.schedule,
    tracking: new Map(read.tracking.map((t) => [t.trip_id, t])),
    predictions: new Map(read.predictions.map((p) => [p.trip_id, p])),
  };
}

/** The latest time the vehicle was seen passing or at a stop of a trip, never after `now` (no entity is newer than the feed). */
function observedAt(t: TripTracking | undefined, now: Date): Date | null {
  // The times are ISO 8601 in UTC as toISOString writes them (one width): their text sorts as their instants.
  let latest: string | null = null;
  for (const s of t?.stops ?? []) {
    for (const at of [s.actual_at, s.actual_arrival_at, s.actual_departure_at]) if (at !== null && (latest === null || at > latest)) latest = at;
  }
  return latest === null ? null : new Date(Math.min(Date.parse(latest), now.getTime()));
}

/** The trip's own tracking each FeedTrip was told from (its stops passed), to tell at the next snapshot whether they changed. */
const trackedFrom = new WeakMap<FeedTrip, TripTracking | undefined>();

/**
 * Whether the trip `before` (of the previous snapshot, keyed the same) is told exactly as it
 * would be made now: no update applies to it then or now, on the same GTFS version, with the same
 * prediction (the object predictTrips gave back), delay, time observed, and stops passed.
 */
function toldAsBefore(
  before: FeedTrip, gtfsId: string, updates: readonly TripUpdateRecord[], delay: ObservedDelay | null, prediction: TripPrediction | null, tracked: TripTracking | undefined, observed: Date | null,
): boolean {
  if (before.signature === null || updates.length > 0 || before.gtfs_id !== gtfsId || before.prediction !== prediction) return false;
  if ((before.observed_at?.getTime() ?? null) !== (observed?.getTime() ?? null)) return false;
  const d = before.delay;
  if (d === null || delay === null ? d !== delay : d.stop_sequence !== delay.stop_sequence || d.delay !== delay.delay || d.at.getTime() !== delay.at.getTime()) return false;
  // The stops passed make the calls of a predicted trip only.
  return prediction === null || samePassed(trackedFrom.get(before), tracked);
}

/** Whether two trackings of a trip passed the same stops at the same times. */
function samePassed(a: TripTracking | undefined, b: TripTracking | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.stops.length !== b.stops.length) return false;
  for (let i = 0; i < a.stops.length; i++) {
    const x = a.stops[i]!;
    const y = b.stops[i]!;
    // A stop told as before is the same object (trackingOf keeps them between reads).
    if (x === y) continue;
    if (x.stop_sequence !== y.stop_sequence || x.actual_at !== y.actual_at || x.actual_arrival_at !== y.actual_arrival_at || x.actual_departure_at !== y.actual_departure_at) return false;
  }
  return true;
}

/** The updates of a trip none concerns (shared, never changed: most trips of a network). */
const NO_UPDATES: readonly TripUpdateRecord[] = Object.freeze([]);

async function tripsOf(
  db: Db, groupId: string, tz: string, date: string, updates: TripUpdateRecord[], delays: Map<string, ObservedDelay>, live: LiveDate, now: Date, memo: ScheduleMemo,
  previous: ReadonlyMap<string, FeedTrip> | undefined,
): Promise<FeedTrip[]> {
  const tripIds = new Set([...updates.flatMap((u) => (u.trip_id ? [u.trip_id] : [])), ...[...delays.keys()].map((k) => k.slice(0, k.lastIndexOf('@'))), ...live.predictions.keys()]);
  const routeIds = [...new Set(updates.flatMap((u) => (u.route_id ? [u.route_id] : [])))];
  const found = new Map<string, ScheduledTrip>();
  let gtfsId: string | null = null;
  if (live.schedule) {
    // The day's schedule is read already: the trips are taken from it.
    gtfsId = live.schedule.gtfsId;
    // By id, not by walking the day's every trip (dayIndex says why); by route only when an update names one.
    const { instances } = dayIndex(live.schedule);
    for (const id of tripIds) for (const t of instances.get(id) ?? []) found.set(instanceKey(t.trip_id, t.start_time), t);
    if (routeIds.length > 0) for (const t of live.schedule.trips) if (routeIds.includes(t.route_id)) found.set(instanceKey(t.trip_id, t.start_time), t);
  } else {
    for (const filter of [tripIds.size > 0 ? { tripIds: [...tripIds] } : null, routeIds.length > 0 ? { routeIds } : null]) {
      if (!filter) continue;
      const day = await tripsOnServiceDate(db, groupId, date, filter);
      gtfsId = day.gtfsId;
      for (const t of day.trips) found.set(instanceKey(t.trip_id, t.start_time), t);
    }
  }
  if (gtfsId === null) return [];
  // What can be decided from the schedule alone, before any stop time is read.
  const kept: { trip: ScheduledTrip; mine: readonly TripUpdateRecord[]; delay: ObservedDelay | null; prediction: TripPrediction | null }[] = [];
  // A network's thousands of trips in slices: the feed requests waiting are answered between two
  // (from the last snapshot: a rebuild never holds them).
  const turn = slices();
  for (const [instance, trip] of found) {
    const wait = turn();
    if (wait) await wait;
    const mine = updates.length === 0 ? NO_UPDATES : updates.filter((u) => concerns(u, trip));
    const delay = delays.get(instance) ?? delays.get(instanceKey(trip.trip_id, null)) ?? null;
    // predictTrips predicts timetable trips only (a frequency trip's instances share its trip_id).
    const prediction = trip.frequency ? null : (live.predictions.get(trip.trip_id) ?? null);
    // A trip with only a message is told by the alert (situation), not by the trip.
    if (!delay && !prediction && mine.every((u) => u.kind === 'message')) continue;
    const end = trip.last_arrival_at.getTime() + Math.max(0, delay?.delay ?? 0) * 1000;
    if (!prediction && end < now.getTime() - PAST_TRIP_SECONDS * 1000) continue;
    kept.push({ trip, mine, delay, prediction });
  }
  const stored = await memo.stopTimesOf(db, groupId, gtfsId, kept.map((k) => k.trip.trip_id));
  const dayStart = serviceDayStart(date, tz);
  // When each vehicle was last observed, once per trip it runs (the next trips of its block share it).
  const observedOn = new Map<string, Date | null>();
  const lastObserved = (fromTripId: string) => {
    if (!observedOn.has(fromTripId)) observedOn.set(fromTripId, observedAt(live.tracking.get(fromTripId), now));
    return observedOn.get(fromTripId)!;
  };
  const out: FeedTrip[] = [];
  const detours: { ft: FeedTrip; shape_id: string }[] = [];
  const basicDate = isoBasic(date);
  for (const { trip, mine, delay, prediction } of kept) {
    const wait = turn();
    if (wait) await wait;
    const key = `${basicDate}:${trip.trip_id}${trip.frequency ? `:${trip.start_time}` : ''}`;
    const tracked = trip.frequency ? undefined : live.tracking.get(trip.trip_id);
    const observed = prediction?.from_trip_id ? lastObserved(prediction.from_trip_id) : delay ? new Date(Math.min(delay.at.getTime(), now.getTime())) : null;
    const before = previous?.get(key);
    if (before && toldAsBefore(before, gtfsId, mine, delay, prediction, tracked, observed)) {
      trackedFrom.set(before, tracked);
      out.push(before);
      continue;
    }
    const st = stored.get(trip.trip_id);
    const stops = st ? memo.stopsOnDay(groupId, gtfsId, trip.trip_id, st, dayStart, trip.frequency ? trip.start_time : undefined) : [];
    const overlay = overlayTrip(mine, stops);
    if (!overlay.cancelled && overlay.skipped.size === 0 && overlay.moved.size === 0 && overlay.added.length === 0 && !overlay.detour && !delay && !prediction) continue;
    const calls = callsOf(stops, overlay, delay, prediction ? { prediction, tracked } : null);
    const ft: FeedTrip = {
      key, service_date: date, trip, gtfs_id: gtfsId, stops, overlay, delay, prediction, observed_at: observed, calls,
      shape: null, signature: overlay.applied.length > 0 ? null : signatureOf(gtfsId, tz, delay, prediction, observed, calls),
    };
    trackedFrom.set(ft, tracked);
    if (overlay.detour && trip.shape_id) detours.push({ ft, shape_id: trip.shape_id });
    out.push(ft);
  }
  // The GTFS shape of each trip on a detour (its full path is built from it).
  const shapes = await memo.shapesOf(db, groupId, gtfsId, detours.map((d) => d.shape_id));
  for (const { ft, shape_id } of detours) ft.shape = shapes.get(shape_id)!;
  return byDeparture(out);
}

/**
 * Trips by first departure, then key. Each trip's departure is read once, not at each comparison:
 * the comparator reading both trips' Dates took a city's rebuild about 120 ms (a CPU profile,
 * bench/feeds-rebuild.ts, 2026-12-03) for its 14,000 trips.
 */
function byDeparture(trips: readonly FeedTrip[]): FeedTrip[] {
  const at = new Float64Array(trips.length);
  trips.forEach((ft, i) => (at[i] = ft.trip.first_departure_at.getTime()));
  const order = Array.from(trips.keys()).sort((i, j) => at[i]! - at[j]! || (trips[i]!.key < trips[j]!.key ? -1 : 1));
  return order.map((i) => trips[i]!);
}

/**
 * The signature of a trip no update applies to: its calls are its scheduled stops (the same for a
 * GTFS version, trip and start), so what varies is the delay, whether and from which trip it is
 * predicted, when it was observed, and each call's expected times, uncertainty and passing; and
 * the group's time zone, in which SIRI writes every time.
 */
function signatureOf(gtfsId: string, tz: string, delay: ObservedDelay | null, prediction: TripPrediction | null, observed: Date | null, calls: readonly Call[]): string {
  const ms = (d: Date | null) => (d === null ? '' : d.getTime());
  // Joined, not concatenated: one flat string (compared at the next rebuild), not a rope of thousands.
  const parts = [gtfsId, tz, delay ? `${delay.stop_sequence},${delay.delay},${delay.at.getTime()}` : '', prediction ? (prediction.from_trip_id ?? '-') : '', ms(observed)];
  for (const c of calls) parts.push(`${ms(c.expected_arrival_at)},${ms(c.expected_departure_at)},${c.uncertainty_seconds ?? ''}${c.passed ? 'p' : ''}`);
  return parts.join('|');
}

const plus = (d: Date | null, s: number) => (d ? new Date(d.getTime() + s * 1000) : null);

/**
 * The calls of a trip as the overlay leaves them, in order. An added stop comes after the stop
 * it follows, `travel_seconds` after its departure (default: half-way to the next stop).
 * Expected times: with a prediction, the predicted ones at the stops it covers, the observed ones
 * at the stops passed, and an added stop shifted as the stop before it; else, with a delay, the
 * scheduled ones plus the delay from the stop it was observed at onwards.
 */
export function callsOf(
  stops: readonly ScheduledStopTime[], overlay: TripOverlay, delay: ObservedDelay | null, live: { prediction: TripPrediction; tracked: TripTracking | undefined } | null = null,
): Call[] {
  const calls: Call[] = [];
  const counts = new Map<string, number>();
  const nextIndex = (updateId: string) => {
    const n = counts.get(updateId) ?? 0;
    counts.set(updateId, n + 1);
    return n;
  };
  const added = (place: Place, updateId: string, at: Date | null): Call => ({
    stop_id: placeId(place, updateId, nextIndex(updateId)),
    stop_sequence: null,
    name: place.name ?? null,
    lat: place.lat ?? null,
    lon: place.lon ?? null,
    status: 'added',
    temporary: place.stop_id === undefined,
    update_id: updateId,
    arrival_at: at,
    departure_at: at,
    expected_arrival_at: null,
    expected_departure_at: null,
    uncertainty_seconds: null,
    passed: false,
  });
  // Ids of temporary stops are numbered per update in the order the update lists them.
  const order = [...overlay.added].sort((a, b) => a.after_stop_sequence - b.after_stop_sequence);
  stops.forEach((s, i) => {
    const status = overlay.skipped.has(s.stop_sequence) || overlay.moved.has(s.stop_sequence) ? 'skipped' : 'scheduled';
    calls.push({
      stop_id: s.stop_id, stop_sequence: s.stop_sequence, name: s.stop_name, lat: s.stop_lat, lon: s.stop_lon, status, temporary: false,
      update_id: overlay.skipped.get(s.stop_sequence) ?? overlay.moved.get(s.stop_sequence)?.update_id ?? null,
      arrival_at: s.arrival_at, departure_at: s.departure_at, expected_arrival_at: null, expected_departure_at: null, uncertainty_seconds: null, passed: false,
    });
    const moved = overlay.moved.get(s.stop_sequence);
    if (moved) calls.push(added(moved.place, moved.update_id, s.arrival_at ?? s.departure_at));
    const next = stops[i + 1];
    const leave = s.departure_at ?? s.arrival_at;
    for (const a of order.filter((x) => x.after_stop_sequence === s.stop_sequence)) {
      const nextAt = next?.arrival_at ?? next?.departure_at;
      const travel = a.travel_seconds ?? (leave && nextAt ? Math.round((nextAt.getTime() - leave.getTime()) / 2000) : 0);
      calls.push(added(a.place, a.update_id, plus(leave, travel)));
    }
  });
  if (live) {
    const ahead = new Map(live.prediction.stops.map((p) => [p.stop_sequence, p]));
    const passed = new Map((live.tracked?.stops ?? []).filter((t) => t.actual_at !== null).map((t) => [t.stop_sequence, t]));
    // How far the last call with an expected time runs from its schedule (an added stop follows it).
    let shift: number | null = null;
    for (const c of calls) {
      const p = c.stop_sequence === null ? undefined : ahead.get(c.stop_sequence);
      const t = c.stop_sequence === null ? undefined : passed.get(c.stop_sequence);
      if (p) {
        c.expected_arrival_at = p.arrival_at;
        c.expected_departure_at = p.departure_at;
        c.uncertainty_seconds = p.uncertainty_seconds;
      } else if (t) {
        c.passed = true;
        c.expected_arrival_at = new Date(t.actual_arrival_at ?? t.actual_at!);
        c.expected_departure_at = new Date(t.actual_departure_at ?? t.actual_at!);
      } else if (c.status === 'added' && shift !== null) {
        c.expected_arrival_at = plus(c.arrival_at, shift);
        c.expected_departure_at = plus(c.departure_at, shift);
      }
      const aimed = c.departure_at ?? c.arrival_at;
      const expected = c.expected_departure_at ?? c.expected_arrival_at;
      if (c.status !== 'added' && aimed && expected) shift = (expected.getTime() - aimed.getTime()) / 1000;
    }
  } else if (delay) {
    const from = calls.findIndex((c) => c.stop_sequence === delay.stop_sequence);
    calls.forEach((c, i) => {
      if (i >= from) {
        c.expected_arrival_at = plus(c.arrival_at, delay.delay);
        c.expected_departure_at = plus(c.departure_at, delay.delay);
      }
    });
  }
  return calls;
}

/**
 * The latest position of each vehicle seen within `staleSeconds` of now, read in one statement:
 * the vehicle of the duty open on the device at the position's time, else the vehicle the device
 * is mounted in. A device with neither is not published (no vehicle to name). Of two devices in
 * one vehicle, the latest position wins. Positions dated after now are not published (no entity
 * is newer than the feed's header); a device whose latest position is dated after now (it
 * reported while the snapshot was being read) is published with its latest position at or before
 * now, read from its positions: it is never left out of a snapshot for having reported during it.
 */
export async function vehiclesNow(db: Queryable, groupId: string, now: Date, staleSeconds: number): Promise<FeedVehicle[]> {
  const rows = await latestVehiclePositions(db, groupId, new Date(now.getTime() - staleSeconds * 1000), now);
  // Routes of the trips, from the GTFS in force on each service date.
  const routes = new Map<string, string>();
  const byDate = new Map<string, Set<string>>();
  for (const r of rows) if (r.trip_id && r.service_date) (byDate.get(r.service_date) ?? byDate.set(r.service_date, new Set()).get(r.service_date)!).add(r.trip_id);
  for (const [date, ids] of byDate) {
    const gtfsId = await versionInForce(db, groupId, date);
    const found = await tripsRoutes(db, groupId, gtfsId, [...ids]);
    for (const f of found) routes.set(`${date}|${f.trip_id}`, f.route_id);
  }
  return rows.map((r) => {
    const route = r.trip_id && r.service_date ? routes.get(`${r.service_date}|${r.trip_id}`) : undefined;
    return {
      ...r,
      // A trip unknown to the GTFS in force is not published as the vehicle's trip.
      trip_id: route ? r.trip_id : null,
      route_id: route ?? null,
      service_date: route ? r.service_date : null,
      start_time: route && r.start_time !== null ? formatGtfsTime(r.start_time) : null,
    };
  });
}
