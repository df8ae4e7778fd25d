/**
 * Predicted arrival and departure at every stop ahead (issue #17, section 2): a pure function, no
 * database, so the passenger feeds, the trip object and the tests call it alike.
 *
 * Times are seconds since the start of the trip's service day (noon minus 12 h, as GTFS counts
 * them); the caller converts instants. The method (docs/predictions.md):
 * - A segment is the run from the passing time at one stop to the passing time at the next (the
 *   time tracking measures delays at: departure, arrival at the last stop), so it holds the dwell
 *   at the next stop. Its running time is the learned median for the route direction, stop pair,
 *   day type and time band of the predicted departure (`lookup`), when the history holds at least
 *   `minSamples` runs; else the scheduled running time.
 * - From the vehicle's live state, each passing time ahead is the previous one plus the segment's
 *   running time, and never earlier than `now` (a vehicle that has not passed a stop yet passes it
 *   now at the earliest): a time already past is held to the block's next step of the clock
 *   (`heldNow`, heldClock), so that an overdue vehicle's predictions move once a step, not at every
 *   second the feeds are rebuilt. Nothing pulls a late trip back to its schedule: it recovers only where
 *   the learned running times are shorter than the scheduled ones.
 * - A trip leaves its first stop no earlier than its scheduled departure (terminal holding); the
 *   next trip of the block no earlier than the predicted arrival of the one before plus
 *   `minLayoverSeconds`.
 * - Published times are whole seconds, strictly increasing from one stop to the next (a second
 *   apart at least: GTFS-Realtime validators reject equal times between sequential stops).
 * - Uncertainty: each learned segment contributes the spread of its history (p90 − p10 of the
 *   running times, as the standard deviation of a normal law: / 2.563), a scheduled segment
 *   `fallbackSpread` × its running time; segments add as independent variances. At a block's next
 *   trip, the slack between the earliest possible start and the scheduled start absorbs as much.
 */

/** What the history says of one segment in one day type and time band (prediction_segments). */
export interface SegmentStats {
  n: number;
  median_run_s: number;
  p10_run_s: number;
  p90_run_s: number;
  /** Median dwell at the segment's last stop, when tracking records arrival and departure apart. */
  median_dwell_s: number | null;
}

export interface SegmentQuery {
  pattern_key: string;
  from_stop_id: string;
  to_stop_id: string;
  /** Predicted departure from the segment's first stop, seconds since the service day's start. */
  at: number;
}
export type SegmentLookup = (q: SegmentQuery) => SegmentStats | undefined;

export interface PlannedStop {
  stop_id: string;
  stop_sequence: number;
  /** Scheduled, seconds since the start of the service day; null where the feed gives no time. */
  arrival: number | null;
  departure: number | null;
}

export interface PlannedTrip {
  trip_id: string;
  /** The key of the learned segments of this trip (route and direction, see patternKey). */
  pattern_key: string;
  /** In stop_sequence order. */
  stops: readonly PlannedStop[];
}

/** Where the vehicle is on the first trip given. */
export type LiveState =
  /** It passed (left) the stop at `at`. */
  | { kind: 'passed'; stop_sequence: number; at: number }
  /** At `at` it had covered `fraction` (0..1) of the segment after the stop. */
  | { kind: 'between'; stop_sequence: number; fraction: number; at: number }
  /** It stands at the stop, since `since`, and has not left it. */
  | { kind: 'at_stop'; stop_sequence: number; since: number }
  /** It waits at the first stop for the trip to start (or the trip's vehicle is known and not started). */
  | { kind: 'at_terminal' };

export interface PredictOptions {
  now: number;
  /**
   * What a time already past (a stop the vehicle has not passed, predicted before `now`) is held
   * to: at least `now` (the default), e.g. the next step of the clock (heldClock). A time still
   * ahead is kept as it is.
   */
  heldNow?: number;
  lookup: SegmentLookup;
  /** Learned segments with fewer runs than this fall back to the schedule. */
  minSamples: number;
  /** The least time between the end of a trip and the start of the next trip of its block. */
  minLayoverSeconds: number;
  /** The standard deviation of a scheduled (unlearned) segment, as a fraction of its running time. */
  fallbackSpread?: number;
}

export type PredictionBasis = 'history' | 'schedule';

export interface PredictedStop {
  stop_id: string;
  stop_sequence: number;
  arrival: number;
  departure: number;
  /** Seconds, the standard deviation of the prediction (GTFS-Realtime StopTimeEvent.uncertainty). */
  uncertainty: number;
  /** Where the running time to this stop came from (the first stop ahead of a waiting trip: schedule). */
  basis: PredictionBasis;
}

export interface PredictedTrip {
  trip_id: string;
  stops: PredictedStop[];
}

export const DEFAULT_FALLBACK_SPREAD = 0.15;
/** p90 − p10 of a normal law, in standard deviations. */
const P10_P90_SIGMAS = 2.563;

/** The key segments are learned and looked up by: route and direction. */
export function patternKey(routeId: string, directionId: number | null): string {
  return `${routeId}|${directionId ?? ''}`;
}

/**
 * Predicts the stops ahead of `trips[0]` from `state`, then every stop of the next trips of the
 * block (`trips[1..]`, in block order). A trip with no stop ahead (the vehicle passed its last
 * stop) yields no stops, and the block goes on from its end.
 */
export function predictBlock(trips: readonly PlannedTrip[], state: LiveState, o: PredictOptions): PredictedTrip[] {
  const out: PredictedTrip[] = [];
  let end: { at: number; variance: number } | undefined;
  trips.forEach((trip, t) => {
    const sched = passingsOf(trip.stops);
    if (sched.length === 0) {
      out.push({ trip_id: trip.trip_id, stops: [] });
      return;
    }
    let start: Start;
    if (t === 0) start = startFromState(trip, sched, state, o);
    else {
      // spec: the next trip of a block cannot start before the vehicle arrives plus a minimum layover
      const ready = end ? end.at + o.minLayoverSeconds : -Infinity;
      const scheduled = sched[0]!;
      const slack = Math.max(0, scheduled - ready);
      const sigma = end ? Math.max(0, Math.sqrt(end.variance) - slack) : 0;
      const departure = notPast(Math.max(scheduled, ready), o);
      start = { index: 0, departure, arrival: end ? Math.max(end.at, departure - dwellOf(trip.stops[0]!)) : departure - dwellOf(trip.stops[0]!), variance: sigma * sigma, emitFirst: true };
    }
    const predicted = strictlyIncreasing(propagate(trip, sched, start, o));
    out.push({ trip_id: trip.trip_id, stops: predicted });
    const last = predicted[predicted.length - 1];
    if (last) end = { at: last.arrival, variance: last.uncertainty * last.uncertainty };
    else if (state.kind === 'passed' && t === 0) end = { at: state.at, variance: 0 };
  });
  return out;
}

interface Start {
  /** Index of the stop the propagation starts from. */
  index: number;
  /** Its (predicted or actual) passing time. */
  departure: number;
  arrival: number;
  variance: number;
  /** Whether that stop is still ahead (its departure is a prediction). */
  emitFirst: boolean;
  /** A partly covered first segment: the time and share left of it. */
  partial?: { at: number; remaining: number };
}

function startFromState(trip: PlannedTrip, sched: readonly number[], state: LiveState, o: PredictOptions): Start {
  if (state.kind === 'at_terminal') {
    // spec: a trip waiting at a terminal cannot leave before its scheduled start
    const departure = notPast(sched[0]!, o);
    return { index: 0, departure, arrival: Math.min(departure, heldOf(o)), variance: 0, emitFirst: true };
  }
  const index = trip.stops.findIndex((s) => s.stop_sequence === state.stop_sequence);
  if (index < 0) throw new Error(`stop_sequence ${state.stop_sequence} is not a stop of trip ${trip.trip_id}`);
  if (state.kind === 'passed') return { index, departure: state.at, arrival: state.at, variance: 0, emitFirst: false };
  if (state.kind === 'at_stop') {
    const stop = trip.stops[index]!;
    // The dwell learned at this stop (it belongs to the segment into it), else the scheduled one.
    const into = index > 0 ? o.lookup({ pattern_key: trip.pattern_key, from_stop_id: trip.stops[index - 1]!.stop_id, to_stop_id: stop.stop_id, at: state.since }) : undefined;
    const dwell = into && into.n >= o.minSamples && into.median_dwell_s !== null ? into.median_dwell_s : dwellOf(stop);
    let departure = notPast(state.since + dwell, o);
    if (index === 0) departure = Math.max(departure, sched[0]!);
    return { index, departure, arrival: state.since, variance: 0, emitFirst: true };
  }
  const fraction = Math.min(1, Math.max(0, state.fraction));
  return { index, departure: state.at, arrival: state.at, variance: 0, emitFirst: false, partial: { at: state.at, remaining: 1 - fraction } };
}

function propagate(trip: PlannedTrip, sched: readonly number[], start: Start, o: PredictOptions): PredictedStop[] {
  const stops = trip.stops;
  const out: PredictedStop[] = [];
  if (start.emitFirst) {
    const s = stops[start.index]!;
    out.push({ stop_id: s.stop_id, stop_sequence: s.stop_sequence, arrival: Math.min(start.arrival, start.departure), departure: start.departure, uncertainty: Math.round(Math.sqrt(start.variance)), basis: 'schedule' });
  }
  let at = start.departure;
  let variance = start.variance;
  for (let i = start.index; i + 1 < stops.length; i++) {
    const from = stops[i]!;
    const to = stops[i + 1]!;
    const scheduledRun = Math.max(0, sched[i + 1]! - sched[i]!);
    const stats = o.lookup({ pattern_key: trip.pattern_key, from_stop_id: from.stop_id, to_stop_id: to.stop_id, at });
    const learned = stats !== undefined && stats.n >= o.minSamples;
    let run = learned ? Math.max(0, stats.median_run_s) : scheduledRun;
    let sigma = learned ? Math.max(0, stats.p90_run_s - stats.p10_run_s) / P10_P90_SIGMAS : (o.fallbackSpread ?? DEFAULT_FALLBACK_SPREAD) * scheduledRun;
    if (i === start.index && start.partial) {
      run *= start.partial.remaining;
      sigma *= start.partial.remaining;
    }
    const departed = at;
    at = notPast(at + run, o);
    variance += sigma * sigma;
    const isLast = i + 1 === stops.length - 1;
    const dwell = isLast ? 0 : learned && stats.median_dwell_s !== null ? stats.median_dwell_s : dwellOf(to);
    const arrival = isLast ? at : Math.max(departed, Math.min(at, notPast(at - dwell, o)));
    out.push({ stop_id: to.stop_id, stop_sequence: to.stop_sequence, arrival, departure: at, uncertainty: Math.round(Math.sqrt(variance)), basis: learned ? 'history' : 'schedule' });
  }
  return out;
}

/** The time a past time is held to: `heldNow`, never before `now`. */
const heldOf = (o: PredictOptions) => Math.max(o.now, o.heldNow ?? o.now);

/** `t` when it is still ahead (at `now` or later), else the time a past time is held to. */
const notPast = (t: number, o: PredictOptions) => (t >= o.now ? t : heldOf(o));

/**
 * The next step of the clock for a block (`key`): `now` moved up to the next multiple of `step`
 * seconds, shifted by a phase of the key's own (0 to step − 1 s, a hash of it), so in [now, now +
 * step). Held to it, an overdue vehicle's predictions are the same from one rebuild of the feeds
 * to the next within a step; the phases spread a network's blocks over the step, so each rebuild
 * moves a share of them, not all at once. `step` of 1 s or less: `now` itself.
 */
export function heldClock(now: number, key: string, step: number): number {
  if (step <= 1) return now;
  let h = 0x811c9dc5; // FNV-1a, 32 bits
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  const phase = (h >>> 0) % Math.floor(step);
  return Math.ceil((now - phase) / step) * step + phase;
}

/**
 * Whole seconds, and every stop's arrival at least a second after the departure from the stop
 * before (its departure not before its arrival): what GTFS-Realtime consumers check (MobilityData
 * validator E022: times between sequential stops never the same nor decreasing; E025). Stops the
 * clock holds to "now", or segments the timetable gives no time, would otherwise share a second.
 */
function strictlyIncreasing(stops: PredictedStop[]): PredictedStop[] {
  let previous = -Infinity;
  for (const s of stops) {
    s.arrival = Math.max(Math.round(s.arrival), previous + 1);
    s.departure = Math.max(Math.round(s.departure), s.arrival);
    previous = s.departure;
  }
  return stops;
}

/** The scheduled dwell at a stop (departure − arrival), 0 when a time is missing. */
function dwellOf(s: PlannedStop): number {
  return s.arrival !== null && s.departure !== null ? Math.max(0, s.departure - s.arrival) : 0;
}

const passings = new WeakMap<readonly PlannedStop[], readonly number[]>();

/** scheduledPassings of a trip's stops, made once per stops array (a caller that keeps its planned trips' stops, as predictTrips does, has them made once). */
function passingsOf(stops: readonly PlannedStop[]): readonly number[] {
  let known = passings.get(stops);
  if (!known) passings.set(stops, (known = scheduledPassings(stops)));
  return known;
}

/**
 * The scheduled passing time of each stop (departure; arrival for the last stop), untimed stops
 * interpolated linearly by position between the timed ones around them. Empty when no stop is timed.
 */
export function scheduledPassings(stops: readonly PlannedStop[]): number[] {
  const raw = stops.map((s, i) => (i === stops.length - 1 ? (s.arrival ?? s.departure) : (s.departure ?? s.arrival)));
  const timed = raw.flatMap((v, i) => (v === null ? [] : [i]));
  if (timed.length === 0) return [];
  return raw.map((v, i) => {
    if (v !== null) return v;
    const before = timed.filter((k) => k < i).pop();
    const after = timed.find((k) => k > i);
    if (before === undefined) return raw[after!]!;
    if (after === undefined) return raw[before]!;
    return raw[before]! + ((raw[after]! - raw[before]!) * (i - before)) / (after - before);
  });
}
