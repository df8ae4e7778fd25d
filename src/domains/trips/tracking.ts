/**
 * Trip tracking: for each trip and service date, the time the vehicle passed each scheduled stop,
 * the delay, and the kilometres, computed from what the devices report and stored
 * (migration 0006). Readers (the trip object, stats, exports, GTFS-Realtime, SIRI) call
 * `trackingOf`; nothing else reads the tables directly except the bulk exports.
 *
 * Definitions (also in the OpenAPI descriptions and the README):
 * - Arrival at and departure from a stop (docs/tracking.md). From the trip events of the trip:
 *   arrival = the first `arrival`, else the first `stop_passed`; departure = the last `departure`,
 *   else the first `stop_passed`; an event names its call by stop_sequence, or by stop_id (the
 *   next call of that stop). Where no event gives it, from the positions of the trip with a valid
 *   fix, by progress along the itinerary (passages.ts): arrival when the vehicle reaches the stop,
 *   departure when it has moved beyond it (never while approaching or dwelling; the first stop is
 *   departed when the vehicle leaves it after its layover). Events take precedence.
 * - Passing a stop (actual_at): the departure; for the last stop the arrival (else its departure);
 *   a stop with only an arrival event is passed at that event.
 * - Delay of a stop: passing time minus scheduled time (departure; arrival for the last stop), in
 *   whole seconds, negative when early. Delay of the trip: the delay at the last stop passed.
 * - Kilometres, from the positions of the trip (those reporting its trip_id and service_date),
 *   consecutive per device, in km rounded to the metre (passages.ts): vk = the distance driven,
 *   along the itinerary where the vehicle is on it, with GPS noise filtered out (a parked vehicle
 *   adds nothing); reliable_km = the part between valid fixes at most GPS_GAP_SECONDS apart,
 *   unreliable_km = the rest (vk = reliable + unreliable); off_itinerary_km = the part farther than
 *   OFF_ITINERARY_M from the itinerary; recorded_commercial_km = the progress along the
 *   itinerary, at most tk; tk = length of the GTFS shape (or of the line through the stops when
 *   the trip has no shape); percent_km = recorded_commercial_km / tk × 100, one decimal.
 * - Statuses (derived at read time from the stored facts, the clock and the trip-update overlay):
 *   see TRIP_STATUSES and STOP_STATUSES.
 */
import type { Service } from '../../platform/lifecycle.js';
import { slices } from '../../platform/slices.js';
import type { Db, Queryable, Tx } from '../../platform/db/index.js';
import { tripStopTimes, tripsOnServiceDate, type ScheduledTrip } from '../gtfs/service-days.js';
import { formatGtfsTime } from '../gtfs/time.js';
import { emptyOverlay, type TripOverlay } from '../updates/overlay.js';
import { overlayKey, overlaysFor } from '../updates/service.js';
import { GPS_GAP_SECONDS, OFF_ITINERARY_M, kilometres, type Kilometres } from './passages.js';
import { markTrips, selectDirty, selectMarksOf, selectRecordedTripIds, selectStops, selectStopsWritten, selectSummaries, type StopRow, type SummaryRow } from './queries/tracking.js';
import { recomputeTrips, type Mark, type TripKey } from './tracking/round.js';

export { GPS_GAP_SECONDS, OFF_ITINERARY_M, kilometres, type Kilometres };

/** A recorded trip without a trip_end report is over this long after its scheduled end, in seconds. */
export const TRIP_CLOSE_AFTER_SECONDS = 3600;
/** A trip with nothing recorded is not done this long after its scheduled end, in seconds. */
export const NOT_DONE_AFTER_SECONDS = 900;

export const TRIP_STATUSES = {
  scheduled: 'nothing recorded yet, and the scheduled end is less than 15 minutes ago',
  in_progress: 'recorded, and not over yet (no trip_end report, last stop not passed, scheduled end less than one hour ago)',
  completed: 'over, and every stop not skipped by a trip update was passed',
  partial: 'over, and at least one stop not skipped by a trip update was not passed',
  not_done: 'nothing recorded, 15 minutes after the scheduled end (a missing trip)',
  cancelled: 'cancelled by a trip update, and nothing recorded',
} as const;
export type TripStatus = keyof typeof TRIP_STATUSES;

export const STOP_STATUSES = {
  passed: 'the vehicle passed the stop (actual_at holds when)',
  skipped: 'a trip update skips the stop (never counted as missed)',
  missed: 'not passed, and a later stop was passed or the trip is over',
  pending: 'not passed yet, trip not over',
  cancelled: 'the trip is cancelled by a trip update',
} as const;
export type StopStatus = keyof typeof STOP_STATUSES;

export interface TrackedStop {
  stop_id: string;
  stop_sequence: number;
  stop_name: string | null;
  scheduled_arrival_at: string | null;
  scheduled_departure_at: string | null;
  /** The scheduled time the delay is measured against: departure (arrival for the last stop). */
  scheduled_at: string | null;
  actual_at: string | null;
  /** How actual_at was found: a trip event of the stop, or the positions. */
  source: 'event' | 'position' | null;
  /** When the vehicle reached the stop, and when it moved beyond it; dwell = their difference in seconds. */
  actual_arrival_at: string | null;
  actual_departure_at: string | null;
  dwell_seconds: number | null;
  delay_seconds: number | null;
  status: StopStatus;
  vehicle_id: string | null;
  boardings: number;
  alightings: number;
}

export interface TripTracking {
  trip_id: string;
  service_date: string;
  route_id: string | null;
  start_time: string | null;
  status: TripStatus;
  /** Whether anything was recorded for the trip on the date. */
  recorded: boolean;
  /** The trip's current delay in seconds (at the last stop passed); null before the first stop. */
  delay_seconds: number | null;
  delay_stop_sequence: number | null;
  started_at: string | null;
  ended_at: string | null;
  stops: TrackedStop[];
  planned_stops: number;
  recorded_stops: number;
  km: Kilometres;
  passengers: { boardings: number; alightings: number; max_load: number };
  device_ids: string[];
  vehicle_ids: string[];
  driver_ids: string[];
}

export interface TripRef {
  trip_id: string;
  service_date: string;
  /**
   * When the latest report that touched the trip was made (ms; device ingest gives it): the
   * refresh after ingest takes the trips reported on most recently first (TrackingRefresh).
   */
  reported_at?: number;
}

// ---------------------------------------------------------------------------------------------
// The dirty queue: marked by ingest with the reports, drained after commit, by the worker loop
// and by every read.

/*
 * Marks are written by the statement that stores a batch's reports (device/queries/reports.ts,
 * markTrips) for the trips of the reports it stored, in the same commit. A mark is the database's clock at the time of marking (not the service's clock, which
 * tests fix and instances may disagree on): a refresh deletes only marks no newer than the one it
 * read, so a report committed while a refresh runs keeps its trip in the queue. Marks of one trip
 * are ordered by the row lock of the upsert.
 */

/** Which dirty trips a refresh recomputes: of a group, dates (or a range of them) and trips when given; at most `limit`, the oldest marks first. */
export interface RefreshFilter {
  groupId?: string;
  dates?: readonly string[];
  from?: string;
  to?: string;
  tripIds?: readonly string[];
  limit?: number;
}

/**
 * Where the recomputations asked of a database handle run when not on it (kept by the handle,
 * Db.kept): the tracking's thread (tracking-thread.ts), so that one place recomputes each trip
 * (two handles' rounds of the same trip could write an older reading over a newer one).
 */
export class RecomputeElsewhere {
  to: ((o: RefreshFilter) => Promise<number>) | undefined;
}

/**
 * Recomputes the dirty trips (of a group, dates and trips when given) and clears their marks,
 * unless a newer report marked them again meanwhile. Returns how many trips were recomputed. On a
 * handle whose recomputations run on the tracking's thread (RecomputeElsewhere), they are asked of
 * it, and awaited.
 */
export async function refreshDirty(db: Db, o: RefreshFilter = {}): Promise<number> {
  const elsewhere = db.kept.of(RecomputeElsewhere).to;
  if (elsewhere) return elsewhere(o);
  const rows = await selectDirty(db, {
    groupId: o.groupId ?? null, dates: o.dates ? [...o.dates] : null, from: o.from ?? null, to: o.to ?? null, tripIds: o.tripIds ? [...o.tripIds] : null, limit: o.limit ?? 100_000,
  });
  for (let i = 0; i < rows.length; i += REFRESH_CHUNK) {
    const chunk = rows.slice(i, i + REFRESH_CHUNK);
    await recomputeBatch(db, chunk, chunk);
  }
  return rows.length;
}

/**
 * The tracking's service of an app (ctx.services.tracking): on the service's thread
 * (TrackingRefresh) or on a thread of its own (tracking-thread.ts).
 */
export interface Tracking extends Service {
  /** The statement that marks trips for recomputation, run by device ingest with the reports it stores (queries/tracking.ts). */
  readonly markTrips: typeof markTrips;
  /** Recomputes these trips soon, without holding up the caller. */
  refreshSoon(groupId: string, trips: readonly TripRef[]): void;
}

/**
 * The refresh after ingest, per application: touched trips gather in a queue that one loop drains,
 * a round at most every REFRESH_ROUND_MS. Under load a trip reported on by many batches is
 * recomputed once per round instead of once per batch, and the recomputations never hold more
 * than one pool connection, so the device answers keep theirs. The dirty marks stay the truth:
 * a read that covers a trip still waiting recomputes it first.
 */
const REFRESH_ROUND_MS = 250;
/**
 * After a round that took d ms, the next starts no sooner than REFRESH_REST × d later: the refresh
 * takes at most a third of the time, and the device answers keep priority under overload (the
 * queue then waits longer; a read still recomputes the trips it covers first).
 */
const REFRESH_REST = 2;
/**
 * The rest after a round is never longer than this. A backlog (a fleet's mornings replayed after an
 * outage, a restart) makes one round of some 30,000 trips: a minute of work, then two minutes of
 * rest, while the trips starting meanwhile stayed out of the passenger feeds (bench:network on the
 * city, 2026-12-02: 3-4 % of the trips in progress missing for 2-4 minutes). On PostgreSQL the
 * tracking has a thread of its own at a lower priority (tracking-thread.ts, TRACKING_THREAD_NICE),
 * so the device answers keep theirs from the system's scheduler; with the embedded database the
 * rounds share the service's thread (in slices), and a backlog's catch-up now takes more of it
 * than a third. A round of the steady state (a few seconds) rests as before.
 */
export const REFRESH_REST_MAX_MS = 10_000;
/**
 * Trips recomputed together (one set-based round of statements): a read that covers a trip being
 * recomputed waits for its chunk, no more.
 */
export const REFRESH_CHUNK = 500;

/**
 * The refresh of trip tracking of an app (a service of buildApp): the refresh after ingest
 * (refreshSoon: touched trips gather in a queue that one loop drains, at the pace above) and the
 * worker, which every `intervalMs` recomputes the trips still marked dirty (a refresh after commit
 * that failed, or was cut by a restart). close() stops the worker and waits for both.
 */
export class TrackingRefresh implements Service, Tracking {
  private readonly pending = new Map<string, Map<string, TripRef>>();
  private draining: Promise<void> | undefined;
  private worker: Promise<unknown> = Promise.resolve();
  private busy = false;
  private timer: NodeJS.Timeout | undefined;

  /**
   * The statement that marks trips for recomputation (queries/tracking.ts): device ingest runs it
   * as part of the statement that stores the reports, so a stored report always leaves its trip
   * marked, in the same commit (the worker and the reads recompute it even if the refresh after
   * commit never runs).
   */
  readonly markTrips = markTrips;

  constructor(private readonly ctx: { db: Db; log: { warn(o: { err: unknown }, message: string): void } }, private readonly intervalMs = 5000) {}

  /**
   * Recomputes soon after an ingest commit, without holding up the device's answer; a failure is
   * logged, and the trip stays in the queue for the worker and the next read.
   */
  refreshSoon(groupId: string, trips: readonly TripRef[]): void {
    if (trips.length === 0) return;
    const mine = this.pending.get(groupId) ?? this.pending.set(groupId, new Map()).get(groupId)!;
    for (const t of trips) {
      const key = `${t.service_date} ${t.trip_id}`;
      const before = mine.get(key);
      mine.set(key, before && reportedAt(before) > reportedAt(t) ? before : t);
    }
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  private async drain(): Promise<void> {
    let next = 0;
    while (this.pending.size > 0) {
      const wait = next - Date.now();
      await new Promise((resolve) => (wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve)));
      const started = Date.now();
      const round = [...this.pending];
      this.pending.clear();
      for (const [groupId, byKey] of round) {
        await refreshRound(this.ctx.db, groupId, roundOrder(byKey), (err) => this.ctx.log.warn({ err }, 'trip tracking refresh failed; the worker retries'));
      }
      const took = Date.now() - started;
      next = started + roundPeriod(took);
    }
  }

  async start(): Promise<void> {
    if (this.timer) return;
    this.timer = setInterval(() => this.sweep(), this.intervalMs);
    this.timer.unref();
  }

  /** One pass of the worker: the trips still marked dirty, oldest first, 500 at most (none while a pass or the refresh after ingest runs). */
  sweep(): void {
    // While the refresh after ingest runs, it is the one draining (at its bounded pace).
    if (this.busy || this.draining) return;
    this.busy = true;
    this.worker = refreshDirty(this.ctx.db, { limit: 500 })
      .catch((err: unknown) => this.ctx.log.warn({ err }, 'trip tracking worker failed'))
      .finally(() => (this.busy = false));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.worker;
    await this.draining;
  }
}

/** A trip's latest report (TripRef.reported_at); a trip touched without one is not put after any. */
const reportedAt = (t: TripRef) => t.reported_at ?? Infinity;

/** From a round's start to the next's (ms), the round having taken `took` ms: the round, then its rest (REFRESH_REST, REFRESH_REST_MAX_MS). */
export const roundPeriod = (took: number) => Math.max(REFRESH_ROUND_MS, took + Math.min(took * REFRESH_REST, REFRESH_REST_MAX_MS));

/**
 * The trips of a round, reported on most recently first: its chunks are committed one by one, so
 * in a round that holds a backlog the trips running now are in the feeds before the backlog's.
 */
export function roundOrder(queue: ReadonlyMap<string, TripRef>): TripRef[] {
  return [...queue.values()].sort((a, b) => reportedAt(b) - reportedAt(a));
}

/**
 * One round of the refresh after ingest for a group: the dirty trips among `trips` recomputed, in
 * chunks of REFRESH_CHUNK. A chunk that fails is reported to `onError` (its trips stay marked) and
 * the next chunks still run; without `onError` the failure is thrown.
 */
export async function refreshRound(db: Db, groupId: string, trips: readonly TripRef[], onError?: (err: unknown) => void): Promise<void> {
  for (let i = 0; i < trips.length; i += REFRESH_CHUNK) {
    const chunk = trips.slice(i, i + REFRESH_CHUNK);
    const done = refreshDirty(db, { groupId, dates: [...new Set(chunk.map((t) => t.service_date))], tripIds: [...new Set(chunk.map((t) => t.trip_id))] });
    await (onError ? done.catch(onError) : done);
  }
}

// ---------------------------------------------------------------------------------------------
// Computing: set-based rounds (tracking/round.ts) of pure computations (tracking/compute.ts).

/**
 * Recomputations under way on a database handle (kept by the handle, Db.kept), by trip: a batch
 * waits for the earlier batches holding any of its trips.
 */
class Running extends Map<string, Promise<void>> {}
const runningKey = (groupId: string, serviceDate: string, tripId: string) => `${groupId}\u0000${serviceDate}\u0000${tripId}`;

/**
 * Recomputes the stored tracking of trips (any groups and dates) and clears the marks read for them,
 * in one round. Two recomputations of the same trip in one process run one after the other, so an
 * older reading never overwrites a newer one. (Across instances, a newer mark stays in the queue
 * and a later refresh or read recomputes.)
 */
async function recomputeBatch(db: Db, keys: readonly TripKey[], marks: readonly Mark[] = []): Promise<void> {
  const chains = db.kept.of(Running);
  const ks = [...new Set(keys.map((k) => runningKey(k.group_id, k.service_date, k.trip_id)))];
  const before = ks.map((k) => chains.get(k)).filter((p): p is Promise<void> => p !== undefined);
  const next = Promise.all(before.map((p) => p.catch(() => undefined))).then(async () => {
    // A refresh of marked trips that waited for another recomputation of some of them (a read
    // during a round): that one may have cleared their marks. Only the trips still marked are
    // recomputed, with their marks as they are now.
    if (before.length === 0 || marks.length === 0) return recomputeTrips(db, keys, marks);
    const still = await selectMarksOf(db, marks);
    if (still.length > 0) await recomputeTrips(db, still, still);
  });
  for (const k of ks) chains.set(k, next);
  try {
    await next;
  } finally {
    for (const k of ks) if (chains.get(k) === next) chains.delete(k);
  }
}

/** Recomputes the stored tracking of one trip from everything recorded (see recomputeBatch). */
export async function recomputeTrip(db: Db, groupId: string, serviceDate: string, tripId: string): Promise<void> {
  await recomputeBatch(db, [{ group_id: groupId, service_date: serviceDate, trip_id: tripId }]);
}

// ---------------------------------------------------------------------------------------------
// Reading.

/** Is a recorded trip over at `now`? */
export function tripOver(s: Pick<SummaryRow, 'end_reported' | 'scheduled_end_at' | 'last_passed_sequence' | 'planned_stops'> & { last_sequence: number | null }, now: Date): boolean {
  if (s.end_reported) return true;
  if (s.last_sequence !== null && s.last_passed_sequence === s.last_sequence) return true;
  return s.scheduled_end_at !== null && now.getTime() > s.scheduled_end_at.getTime() + TRIP_CLOSE_AFTER_SECONDS * 1000;
}

/** The status of a trip from its stored summary (or none), its overlay and the clock. */
export function tripStatus(
  s: (Pick<SummaryRow, 'end_reported' | 'scheduled_end_at' | 'last_passed_sequence' | 'planned_stops' | 'unpassed_stops'> & { last_sequence: number | null }) | null,
  overlay: TripOverlay,
  scheduledEndAt: Date | null,
  now: Date,
): TripStatus {
  if (!s) {
    if (overlay.cancelled) return 'cancelled';
    return scheduledEndAt !== null && now.getTime() >= scheduledEndAt.getTime() + NOT_DONE_AFTER_SECONDS * 1000 ? 'not_done' : 'scheduled';
  }
  if (!tripOver(s, now)) return 'in_progress';
  return s.unpassed_stops.some((seq) => !overlay.skipped.has(seq)) ? 'partial' : 'completed';
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/**
 * The tracking of the trips of a service date: per trip its stops (scheduled time, actual time,
 * delay in seconds, status), its current delay, status, kilometres and who operated it.
 *
 * Without `tripIds`: every trip with something recorded on the date. With `tripIds`: those trips,
 * recorded or only scheduled (their stops then come from the GTFS, with no actual time); a trip
 * neither scheduled nor recorded on the date is left out. Trips marked dirty by ingest are
 * recomputed first, so the answer holds every report committed before the call.
 * Statuses apply the trip updates in force (a skipped stop is `skipped`, never `missed`).
 * `open`: only the recorded trips that may still be in progress at `now` (no trip_end report,
 * scheduled end less than TRIP_CLOSE_AFTER_SECONDS ago): the passenger feeds read those each refresh.
 * `recompute` false: the trips marked dirty are read as the tracking rounds left them, not
 * recomputed first (the feeds' worker thread, which reads what the service's rounds commit as
 * another instance would: docs/feeds.md).
 */
export async function trackingOf(
  db: Db, groupId: string, serviceDate: string, tripIds?: readonly string[], o: { now?: Date; open?: boolean; recompute?: boolean } = {},
): Promise<TripTracking[]> {
  const now = o.now ?? new Date();
  if (o.recompute !== false) await refreshDirty(db, { groupId, dates: [serviceDate], ...(tripIds ? { tripIds } : {}) });
  const summariesRead = selectSummaries(db, groupId, serviceDate, tripIds ? [...tripIds] : null, o.open === true, new Date(now.getTime() - TRIP_CLOSE_AFTER_SECONDS * 1000));
  // The stops of the trips named (or of every trip) are read beside their summaries; those of the
  // open trips once these are known, and only the rows written since the last such read
  // (OpenTripStops: the feeds read every open trip each refresh, and few rows changed in between).
  const stopsRead = o.open
    ? summariesRead.then((rows) => db.kept.of(OpenTripStops).read(db, groupId, serviceDate, rows))
    : selectStops(db, groupId, serviceDate, tripIds ? [...tripIds] : null);
  const [summaries, stopRows] = await Promise.all([summariesRead, stopsRead]);
  const stopsOf = new Map<string, StopRow[]>();
  for (const r of stopRows) (stopsOf.get(r.trip_id) ?? stopsOf.set(r.trip_id, []).get(r.trip_id)!).push(r);

  // Scheduled trips without records, when trips are named.
  const recorded = new Set(summaries.map((s) => s.trip_id));
  const missing = tripIds ? tripIds.filter((t) => !recorded.has(t)) : [];
  const scheduled = missing.length > 0 ? (await tripsOnServiceDate(db, groupId, serviceDate, { tripIds: missing })).trips : [];
  const firstInstance = new Map<string, ScheduledTrip>();
  for (const t of scheduled) if (!firstInstance.has(t.trip_id)) firstInstance.set(t.trip_id, t);

  const keys = [
    ...summaries.map((s) => ({ trip_id: s.trip_id, route_id: s.route_id ?? '', start_time: s.start_time === null ? null : formatGtfsTime(s.start_time) })),
    ...[...firstInstance.values()].map((t) => ({ trip_id: t.trip_id, route_id: t.route_id, start_time: t.start_time })),
  ];
  const overlays = await overlaysFor(db, groupId, serviceDate, keys);
  const overlayOf = (k: { trip_id: string; start_time: string | null }) => overlays.get(overlayKey(k)) ?? emptyOverlay();

  const out: TripTracking[] = [];
  // The open trips of a network (the feeds read them each refresh: tens of thousands of stops) in
  // slices, the requests waiting answered between two.
  const turn = slices();
  for (const s of summaries) {
    const wait = turn();
    if (wait) await wait;
    const start = s.start_time === null ? null : formatGtfsTime(s.start_time);
    const overlay = overlayOf({ trip_id: s.trip_id, start_time: start });
    const rows = stopsOf.get(s.trip_id) ?? [];
    const lastSeq = rows[rows.length - 1]?.stop_sequence ?? null;
    const over = tripOver({ ...s, last_sequence: lastSeq }, now);
    const stops = rows.map((r, i): TrackedStop => {
      const later = s.last_passed_sequence !== null && r.stop_sequence < s.last_passed_sequence;
      const status: StopStatus = r.actual_at ? 'passed' : overlay.skipped.has(r.stop_sequence) ? 'skipped' : later || over ? 'missed' : overlay.cancelled ? 'cancelled' : 'pending';
      // The open trips' rows are kept between reads (OpenTripStops): a row's stop, as told before, is taken again while its status holds.
      const told = o.open ? trackedStops.get(r) : undefined;
      if (told && told.status === status) return told;
      const scheduledAt = i === rows.length - 1 ? (r.scheduled_arrival_at ?? r.scheduled_departure_at) : (r.scheduled_departure_at ?? r.scheduled_arrival_at);
      const stop: TrackedStop = {
        stop_id: r.stop_id, stop_sequence: r.stop_sequence, stop_name: r.stop_name,
        scheduled_arrival_at: iso(r.scheduled_arrival_at), scheduled_departure_at: iso(r.scheduled_departure_at), scheduled_at: iso(scheduledAt),
        actual_at: iso(r.actual_at), source: r.source, actual_arrival_at: iso(r.actual_arrival_at), actual_departure_at: iso(r.actual_departure_at),
        dwell_seconds: r.actual_arrival_at && r.actual_departure_at ? Math.round((r.actual_departure_at.getTime() - r.actual_arrival_at.getTime()) / 1000) : null,
        delay_seconds: r.delay_seconds, status, vehicle_id: r.vehicle_id,
        boardings: sum(r.doors_in), alightings: sum(r.doors_out),
      };
      if (o.open) trackedStops.set(r, stop);
      return stop;
    });
    out.push({
      trip_id: s.trip_id, service_date: serviceDate, route_id: s.route_id, start_time: start,
      status: tripStatus({ ...s, last_sequence: lastSeq }, overlay, s.scheduled_end_at, now), recorded: true,
      delay_seconds: s.delay_seconds, delay_stop_sequence: s.delay_stop_sequence, started_at: iso(s.started_at), ended_at: over ? iso(s.ended_at) : null,
      stops, planned_stops: s.planned_stops, recorded_stops: s.recorded_stops,
      km: { tk: s.tk, vk: s.vk, recorded_commercial_km: s.recorded_commercial_km, off_itinerary_km: s.off_itinerary_km, reliable_km: s.reliable_km, unreliable_km: s.unreliable_km, percent_km: s.percent_km },
      passengers: { boardings: s.boardings, alightings: s.alightings, max_load: s.max_load },
      device_ids: s.device_ids, vehicle_ids: s.vehicle_ids, driver_ids: s.driver_ids,
    });
  }
  for (const t of firstInstance.values()) {
    const overlay = overlayOf(t);
    const status = tripStatus(null, overlay, t.last_arrival_at, now);
    const times = await tripStopTimes(db, groupId, serviceDate, t.trip_id, { startTime: t.first_departure });
    const stops = times.map((r, i): TrackedStop => {
      const scheduledAt = i === times.length - 1 ? (r.arrival_at ?? r.departure_at) : (r.departure_at ?? r.arrival_at);
      const stopStatus: StopStatus = overlay.skipped.has(r.stop_sequence) ? 'skipped' : status === 'cancelled' ? 'cancelled' : status === 'not_done' ? 'missed' : 'pending';
      return {
        stop_id: r.stop_id, stop_sequence: r.stop_sequence, stop_name: r.stop_name, scheduled_arrival_at: iso(r.arrival_at), scheduled_departure_at: iso(r.departure_at),
        scheduled_at: iso(scheduledAt), actual_at: null, source: null, actual_arrival_at: null, actual_departure_at: null, dwell_seconds: null, delay_seconds: null, status: stopStatus, vehicle_id: null, boardings: 0, alightings: 0,
      };
    });
    out.push({
      trip_id: t.trip_id, service_date: serviceDate, route_id: t.route_id, start_time: t.start_time, status, recorded: false,
      delay_seconds: null, delay_stop_sequence: null, started_at: null, ended_at: null, stops, planned_stops: stops.length, recorded_stops: 0,
      km: { tk: null, vk: 0, recorded_commercial_km: 0, off_itinerary_km: 0, reliable_km: 0, unreliable_km: 0, percent_km: 0 },
      passengers: { boardings: 0, alightings: 0, max_load: 0 }, device_ids: [], vehicle_ids: [], driver_ids: [],
    });
  }
  return out;
}

/** Whether two reads of a stored stop row (by the same statement: the same columns) hold the same values: times by their instant, door counts element by element. */
function sameRow(a: StopRow, b: StopRow): boolean {
  for (const k of Object.keys(a) as (keyof StopRow)[]) {
    const x = a[k];
    const y = b[k];
    if (x === y) continue;
    if (x instanceof Date && y instanceof Date) {
      if (x.getTime() !== y.getTime()) return false;
    } else if (Array.isArray(x) && Array.isArray(y)) {
      if (x.length !== y.length || x.some((n, i) => n !== y[i])) return false;
    } else {
      return false;
    }
  }
  return true;
}

/**
 * The stop each kept row of an open trip was told as (trackingOf with `open`): the feeds read a
 * city's open trips, some 180,000 stops, every few seconds, and few rows change in between. A
 * row is kept (OpenTripStops) while it reads the same (its trip recomputed or not), and a stop is
 * taken again only with the same status, so it is what would be made anew. Shared: callers must not change it.
 */
const trackedStops = new WeakMap<StopRow, TrackedStop>();

/**
 * The stored stop rows of the open trips of each group and date, as last read, with the trip's
 * write they came from (trip_tracking.written, migration 0022: the round writes a trip's summary
 * and its changed stops in one statement, the stops taking the summary's `written`). A read asks
 * the database only for the rows written since, of the trips written since (a round changes a stop
 * or two of a trip: a city's rebuild reads some thousands of rows, not its open trips' 290,000),
 * and for the whole of the trips new to it; a trip no longer open is forgotten. A row read again
 * that holds the same values as the one kept (a write changed a column not read) is the one kept.
 * A trip whose stops changed since is read whole: a stop new to it is among the rows read, rows
 * deleted are told by their count (the summary's planned_stops). Kept per database handle (Db.kept).
 */
export class OpenTripStops {
  private readonly dates = new Map<string, Map<string, { written: number; rows: StopRow[] }>>();

  async read(db: Db, groupId: string, serviceDate: string, summaries: readonly Pick<SummaryRow, 'trip_id' | 'written' | 'planned_stops'>[]): Promise<StopRow[]> {
    const key = `${groupId}\n${serviceDate}`;
    const known = this.dates.get(key) ?? new Map<string, { written: number; rows: StopRow[] }>();
    // Written since the last read: their changed rows; new to this reader (or written before what it read: never, a trip's writes draw increasing values), whole.
    const since = summaries.filter((s) => known.has(s.trip_id) && known.get(s.trip_id)!.written < s.written);
    const whole = summaries.filter((s) => !known.has(s.trip_id) || known.get(s.trip_id)!.written > s.written);
    const [changedRows, wholeRows] = await Promise.all([
      since.length > 0 ? selectStopsWritten(db, groupId, serviceDate, since.map((s) => ({ trip_id: s.trip_id, written: known.get(s.trip_id)!.written }))) : [],
      whole.length > 0 ? selectStops(db, groupId, serviceDate, whole.map((s) => s.trip_id)) : [],
    ]);
    const rowsOf = new Map<string, StopRow[]>(whole.map((s) => [s.trip_id, []]));
    for (const r of wholeRows) rowsOf.get(r.trip_id)?.push(r);
    const changedOf = new Map<string, StopRow[]>();
    for (const r of changedRows) (changedOf.get(r.trip_id) ?? changedOf.set(r.trip_id, []).get(r.trip_id)!).push(r);
    const again: string[] = [];
    for (const s of since) {
      const rows = merged(known.get(s.trip_id)!.rows, changedOf.get(s.trip_id) ?? []);
      if (rows !== null && rows.length === s.planned_stops) rowsOf.set(s.trip_id, rows);
      else again.push(s.trip_id);
    }
    // Stops added or rows deleted since (or a round committed between the summaries' read and this one's): read whole.
    if (again.length > 0) {
      for (const id of again) rowsOf.set(id, []);
      for (const r of await selectStops(db, groupId, serviceDate, again)) rowsOf.get(r.trip_id)!.push(r);
    }
    const next = new Map<string, { written: number; rows: StopRow[] }>();
    for (const s of summaries) next.set(s.trip_id, rowsOf.has(s.trip_id) ? { written: s.written, rows: rowsOf.get(s.trip_id)! } : known.get(s.trip_id)!);
    // Two dates per group at most are open at once (yesterday's trips past midnight, today's).
    if (!this.dates.has(key) && this.dates.size >= 64) this.dates.delete(this.dates.keys().next().value!);
    this.dates.set(key, next);
    return [...next.values()].flatMap((t) => t.rows);
  }
}

/**
 * A trip's rows as read before with those written since in their place (by stop_sequence): a row
 * written again that holds the same values as the one kept is the one kept, so the stop told from
 * it is taken again (trackedStops). Null when a stop is new to the trip (its stops changed): a
 * kept row may then be in another place, and a stop is told from its place too (the last one's
 * scheduled time is its arrival), so the trip is read whole.
 */
function merged(kept: readonly StopRow[], changed: readonly StopRow[]): StopRow[] | null {
  if (changed.length === 0) return kept as StopRow[];
  const bySequence = new Map(changed.map((r) => [r.stop_sequence, r]));
  const out = kept.map((k) => {
    const r = bySequence.get(k.stop_sequence);
    if (r === undefined) return k;
    bySequence.delete(k.stop_sequence);
    return sameRow(k, r) ? k : r;
  });
  return bySequence.size > 0 ? null : out;
}

/** Which of these trips have a stored tracking on the date, as stored (dirty trips are not recomputed first). */
export async function storedTripIds(db: Db, groupId: string, serviceDate: string, tripIds: readonly string[]): Promise<Set<string>> {
  return new Set(await selectRecordedTripIds(db, groupId, serviceDate, [...tripIds]));
}
