/**
 * Predictions for the trips of a service date (issue #17, section 2), for the passenger feeds and
 * the trip object: the trips in progress (a trip whose vehicle reported on it and that is not
 * over, including one waiting at its first stop), and the next trips of their blocks. Loaded
 * set-based: the tracking of the date (or the caller's), the day's trips, their stop times, the
 * day type and the model's segments: a handful of queries whatever the number of trips.
 */
import type { PredictionsConfig } from '../../config.js';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/index.js';
import { slices } from '../../platform/slices.js';
import { serviceDayStart, sharedInstant } from '../../platform/time.js';
import { scheduleMemoOf } from '../gtfs/schedule-memo.js';
import { dayIndex, tripsOverlapping, type ScheduledTrip, type ServiceDay, type StoredStopTimes } from '../gtfs/service-days.js';
import { storedTripIds, trackingOf, type TripTracking } from '../trips/tracking.js';
import { dayTypesOf, loadModel } from './model.js';
import { heldClock, patternKey, predictBlock, type LiveState, type PlannedStop, type PlannedTrip, type PredictedStop, type PredictedTrip, type PredictionBasis, type SegmentLookup } from './predict.js';

export interface PredictedStopTime {
  stop_id: string;
  stop_sequence: number;
  arrival_at: Date;
  departure_at: Date;
  /** Seconds (GTFS-Realtime StopTimeEvent.uncertainty). */
  uncertainty_seconds: number;
  basis: PredictionBasis;
}

export interface TripPrediction {
  trip_id: string;
  service_date: string;
  block_id: string | null;
  /**
   * The trip in progress whose vehicle will run this one (itself, or an earlier trip of the
   * block); null for a trip of the schedule horizon whose vehicle is not known (no report on it
   * nor on an earlier trip of its block): predicted from its scheduled departure.
   */
  from_trip_id: string | null;
  vehicle_ids: string[];
  /** The stops ahead, in order. */
  stops: PredictedStopTime[];
}

/** What predictTrips needs of the application's context (an AppContext is one). */
export interface PredictionContext {
  db: Db;
  clock: Clock;
  config: { predictions: Pick<PredictionsConfig, 'minSamples' | 'minLayoverSeconds' | 'clockStepSeconds'> };
}

/** How far after now the next trips of a block are predicted. */
export const BLOCK_HORIZON_SECONDS = 3 * 3600;

/**
 * What the passenger feeds publish for a service date (feeds/network.ts) and what the prediction
 * sampler records (samples.ts), in one place: predictTrips on the tracking of the trips that may
 * be in progress (trackingOf with `open`), the day's schedule read (through `schedule`) only when
 * there is something to predict. The tracking is given back too (the feeds publish it).
 * `recompute` false: the tracking as the rounds left it (trackingOf).
 */
export async function predictOpenTrips(
  ctx: PredictionContext,
  groupId: string,
  serviceDate: string,
  o: {
    now: Date; schedule: () => Promise<ServiceDay>;
    stopTimes?: (gtfsId: string, tripIds: readonly string[]) => Promise<Map<string, StoredStopTimes>>;
    scheduleHorizonSeconds?: number;
    recompute?: boolean;
    /** The date's predictions of the caller's previous read, by trip: one predicted the same again is given back as that object (predictTrips). */
    previous?: ReadonlyMap<string, TripPrediction>;
  },
): Promise<{ tracking: TripTracking[]; schedule: ServiceDay | null; predictions: TripPrediction[] }> {
  const tracking = await trackingOf(ctx.db, groupId, serviceDate, undefined, { now: o.now, open: true, ...(o.recompute === false ? { recompute: false } : {}) });
  const horizonS = o.scheduleHorizonSeconds ?? 0;
  if (horizonS <= 0 && !tracking.some((t) => t.status === 'in_progress')) return { tracking, schedule: null, predictions: [] };
  const schedule = await o.schedule();
  const predictions = await predictTrips(ctx, groupId, serviceDate, {
    tracking, schedule, now: o.now, scheduleHorizonSeconds: horizonS, ...(o.stopTimes ? { stopTimes: o.stopTimes } : {}), ...(o.previous ? { previous: o.previous } : {}),
  });
  return { tracking, schedule, predictions };
}

/**
 * Predicts the stops ahead of every trip in progress on `serviceDate` (narrowed to `tripIds`
 * when given) and of the next trips of their blocks within three hours. `tracking`: the caller's
 * trackingOf answer for the date, and `schedule` its tripsOnServiceDate answer, when it has them
 * already (the feeds do), so they are read once; `stopTimes` its reader of stored stop times.
 *
 * `scheduleHorizonSeconds` (SIRI EstimatedTimetable's horizon): also every timetable trip of the
 * date whose vehicle is not known (nothing recorded on it, not a next trip of a block in
 * progress) and whose scheduled run overlaps [now, now + horizon]: predicted from its scheduled
 * departure (the learned running times, else the schedule's), not held to now, as nothing says
 * where its vehicle is (`from_trip_id` null, no vehicle).
 *
 * `previous`: the caller's predictions of the same date from an earlier call (the feeds' last
 * snapshot), by trip. A trip predicted exactly as then (the same stops, times, uncertainties and
 * bases, from the same trip and vehicles) is given back as that object, not a new one: most of a
 * network's trips between two snapshots a few seconds apart, which the caller can then tell
 * unchanged by identity (feeds/network.ts keeps what it built from them).
 */
export async function predictTrips(
  ctx: PredictionContext,
  groupId: string,
  serviceDate: string,
  o: {
    tripIds?: readonly string[]; tracking?: readonly TripTracking[]; schedule?: ServiceDay; now?: Date;
    /** The caller's reader of stored stop times, else the schedule memo's (read once per version and trip). */
    stopTimes?: (gtfsId: string, tripIds: readonly string[]) => Promise<Map<string, StoredStopTimes>>;
    scheduleHorizonSeconds?: number;
    previous?: ReadonlyMap<string, TripPrediction>;
  } = {},
): Promise<TripPrediction[]> {
  const { db } = ctx;
  const now = o.now ?? ctx.clock.now();
  const tracking = o.tracking ?? (await trackingOf(db, groupId, serviceDate, o.tripIds, { now }));
  const asked = o.tripIds ? new Set(o.tripIds) : null;
  const running = tracking.filter((t) => t.status === 'in_progress' && (!asked || asked.has(t.trip_id)));
  const horizonS = o.scheduleHorizonSeconds ?? 0;
  if (running.length === 0 && horizonS <= 0) return [];

  // The day's whole schedule (the blocks of the trips asked for) through the memo: read once per
  // version and date, not once per trip object (gtfs/schedule-memo.ts).
  const day = o.schedule ?? (await scheduleMemoOf(db).dayOf(db, groupId, undefined, serviceDate));
  if (day.gtfsId === null) return [];
  const dayStart = serviceDayStart(serviceDate, day.timezone).getTime();
  const secondsOf = (iso: string) => (Date.parse(iso) - dayStart) / 1000;
  const nowS = (now.getTime() - dayStart) / 1000;

  const index = dayIndex(day);
  const { byId, blocks } = index;
  const started = new Set(tracking.filter((t) => t.recorded).map((t) => t.trip_id));
  const chains: { live: TripTracking; trips: ScheduledTrip[] }[] = [];
  for (const live of running) {
    const own = byId.get(live.trip_id);
    if (!own) continue;
    const trips = [own];
    // The next trips of the block not started yet (one with reports has a prediction of its own).
    for (const next of own.block_id === null ? [] : blocks.get(own.block_id)!) {
      if (next.first_departure <= own.first_departure || next.trip_id === own.trip_id) continue;
      if (started.has(next.trip_id) || next.first_departure > nowS + BLOCK_HORIZON_SECONDS) break;
      trips.push(next);
    }
    chains.push({ live, trips });
  }
  // The schedule horizon: trips whose vehicle is not known, each a chain of its own.
  const chained = new Set(chains.flatMap((c) => c.trips.map((t) => t.trip_id)));
  let unknown = horizonS <= 0 ? [] : tripsOverlapping(index, nowS, nowS + horizonS).filter((t) => !started.has(t.trip_id) && !chained.has(t.trip_id) && (!asked || asked.has(t.trip_id)));
  if (unknown.length > 0) {
    // The caller's tracking may hold the open trips only: a trip already over (trip_end reported) is not one to come.
    const recorded = await storedTripIds(db, groupId, serviceDate, unknown.map((t) => t.trip_id));
    unknown = unknown.filter((t) => !recorded.has(t.trip_id));
  }
  if (chains.length === 0 && unknown.length === 0) return [];

  const readStopTimes = o.stopTimes ?? ((gtfsId: string, ids: readonly string[]) => scheduleMemoOf(db).stopTimesOf(db, groupId, gtfsId, ids));
  const all = [...chains.flatMap((c) => c.trips), ...unknown];
  const [stored, dayTypes] = await Promise.all([readStopTimes(day.gtfsId, [...new Set(all.map((t) => t.trip_id))]), dayTypesOf(db, groupId, [serviceDate])]);
  const dayType = dayTypes.get(serviceDate)!;
  const keyOf = (t: ScheduledTrip) => patternKey(t.route_id, t.direction_id);
  const horizon = Math.max(...all.map((t) => t.last_arrival));
  const earliest = Math.min(nowS, ...all.map((t) => t.first_departure));
  const model = await loadModel(db, groupId, { patternKeys: [...new Set(all.map(keyOf))], dayType, from: earliest - 3600, to: Math.max(horizon, nowS) + 3600 });
  const cfg = ctx.config.predictions;
  const lookup: SegmentLookup = (q) => model?.segments.get(q.pattern_key, q.from_stop_id, q.to_stop_id, Math.floor(q.at / model.bandSeconds));

  const plannedOf = (t: ScheduledTrip): PlannedTrip => ({ trip_id: t.trip_id, pattern_key: keyOf(t), stops: plannedStops(stored.get(t.trip_id)) });
  const opts = { lookup, minSamples: cfg.minSamples, minLayoverSeconds: cfg.minLayoverSeconds };
  const stopsOf = (p: PredictedTrip) => p.stops.map((s) => ({
    stop_id: s.stop_id, stop_sequence: s.stop_sequence, arrival_at: sharedInstant(dayStart + s.arrival * 1000), departure_at: sharedInstant(dayStart + s.departure * 1000),
    uncertainty_seconds: s.uncertainty, basis: s.basis,
  }));
  /** The trip's prediction: the previous call's object when it is the same. */
  const predictionOf = (p: PredictedTrip, blockId: string | null, fromTripId: string | null, vehicleIds: string[]): TripPrediction => {
    const before = o.previous?.get(p.trip_id);
    if (before && before.service_date === serviceDate && before.block_id === blockId && before.from_trip_id === fromTripId && sameItems(before.vehicle_ids, vehicleIds) && samePrediction(before.stops, p.stops, dayStart)) return before;
    return { trip_id: p.trip_id, service_date: serviceDate, block_id: blockId, from_trip_id: fromTripId, vehicle_ids: vehicleIds, stops: stopsOf(p) };
  };

  const out = new Map<string, TripPrediction>();
  // A network's hundreds of blocks in slices: the requests waiting are answered between two.
  const turn = slices();
  for (const { live, trips } of chains) {
    const wait = turn();
    if (wait) await wait;
    const planned = trips.map(plannedOf);
    const state = liveState(live, secondsOf);
    // Tracking made on another version of the timetable may name stops this one lacks: no prediction then.
    if (state.kind !== 'at_terminal' && !planned[0]!.stops.some((s) => s.stop_sequence === state.stop_sequence)) continue;
    // Each block held to its own step of the clock when overdue (heldClock: the feeds' rebuilds then move a share of a network's late vehicles, not all).
    const predicted = predictBlock(planned, state, { now: nowS, heldNow: heldClock(nowS, live.trip_id, cfg.clockStepSeconds), ...opts });
    predicted.forEach((p, i) => {
      // A trip's own live state beats a prediction through its block.
      if (i > 0 && out.has(p.trip_id)) return;
      out.set(p.trip_id, predictionOf(p, trips[i]!.block_id, live.trip_id, live.vehicle_ids));
    });
  }
  for (const t of unknown) {
    const wait = turn();
    if (wait) await wait;
    // From the scheduled departure: "now" is the trip's start, so nothing is held to the clock.
    const [p] = predictBlock([plannedOf(t)], { kind: 'at_terminal' }, { now: t.first_departure, ...opts });
    if (p && p.stops.length > 0 && !out.has(t.trip_id)) out.set(t.trip_id, predictionOf(p, t.block_id, null, []));
  }
  return [...out.values()];
}

/**
 * A trip's stops as predictBlock takes them, made once per stored stop times (the schedule memo's
 * are kept per version and trip): the feeds predict a city's 14,000 trips every few seconds, and
 * made anew each time these were half a million objects a rebuild.
 */
const planned = new WeakMap<StoredStopTimes, readonly PlannedStop[]>();
const NO_STOPS: readonly PlannedStop[] = Object.freeze([]);
function plannedStops(stored: StoredStopTimes | undefined): readonly PlannedStop[] {
  if (!stored) return NO_STOPS;
  let known = planned.get(stored);
  if (!known) planned.set(stored, (known = stored.stops.map((s) => ({ stop_id: s.stop_id, stop_sequence: s.stop_sequence, arrival: s.arrival_time, departure: s.departure_time }))));
  return known;
}

const sameItems = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** Whether the stops a prediction published (`before`) are those just predicted, `dayStart` the service day's start (ms). */
function samePrediction(before: readonly PredictedStopTime[], now: readonly PredictedStop[], dayStart: number): boolean {
  if (before.length !== now.length) return false;
  for (let i = 0; i < now.length; i++) {
    const b = before[i]!;
    const n = now[i]!;
    if (b.stop_sequence !== n.stop_sequence || b.stop_id !== n.stop_id || b.uncertainty_seconds !== n.uncertainty || b.basis !== n.basis) return false;
    if (b.arrival_at.getTime() !== dayStart + n.arrival * 1000 || b.departure_at.getTime() !== dayStart + n.departure * 1000) return false;
  }
  return true;
}

/**
 * The vehicle's live state from its tracking: the last stop passed; or standing at the stop after
 * it (arrived, not departed); or, nothing passed yet, waiting at the first stop.
 */
export function liveState(t: Pick<TripTracking, 'stops'>, secondsOf: (iso: string) => number): LiveState {
  let last = -1;
  t.stops.forEach((s, i) => {
    if (s.actual_at !== null) last = i;
  });
  const next = t.stops[last + 1];
  if (next?.actual_arrival_at && !next.actual_departure_at) return { kind: 'at_stop', stop_sequence: next.stop_sequence, since: secondsOf(next.actual_arrival_at) };
  if (last < 0) return { kind: 'at_terminal' };
  return { kind: 'passed', stop_sequence: t.stops[last]!.stop_sequence, at: secondsOf(t.stops[last]!.actual_at!) };
}
