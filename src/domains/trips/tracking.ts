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
import type { AppContext } from '../../platform/context.js';
import type { Db, Queryable, Tx } from '../../platform/db/index.js';
import { tripShape, tripStopTimes, tripsOnServiceDate, type ScheduledStopTime, type ScheduledTrip } from '../gtfs/service-days.js';
import { formatGtfsTime } from '../gtfs/time.js';
import { emptyOverlay, type TripOverlay } from '../updates/overlay.js';
import { overlayKey, overlaysFor } from '../updates/service.js';
import { GPS_GAP_SECONDS, Itinerary, OFF_ITINERARY_M, kilometres, progressOf, stopTimes, type Crossing, type Kilometres, type LonLat } from './passages.js';

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
}

// ---------------------------------------------------------------------------------------------
// The dirty queue: marked by ingest in its transaction, drained after commit, by the worker loop
// and by every read.

/*
 * Marks are written by ingest's one statement (insertReports, device/ingest.ts) from the rows it
 * inserted. A mark is the database's clock at the time of marking (not the service's clock, which
 * tests fix and instances may disagree on): a refresh deletes only marks no newer than the one it
 * read, so a report committed while a refresh runs keeps its trip in the queue. Marks of one trip
 * are ordered by the row lock of the upsert.
 */

interface DirtyRow {
  group_id: string;
  service_date: string;
  trip_id: string;
  /** As text: the mark has microseconds, a Date only milliseconds (its mark would never be cleared). */
  marked_at: string;
}

/**
 * Recomputes the dirty trips (of a group, dates and trips when given) and clears their marks,
 * unless a newer report marked them again meanwhile. Returns how many trips were recomputed.
 */
export async function refreshDirty(db: Db, o: { groupId?: string; dates?: readonly string[]; from?: string; to?: string; tripIds?: readonly string[]; limit?: number } = {}): Promise<number> {
  const rows = await db.query<DirtyRow>(
    `SELECT group_id, service_date, trip_id, marked_at::text AS marked_at FROM trip_tracking_dirty
     WHERE ($1::text IS NULL OR group_id = $1) AND ($2::date[] IS NULL OR service_date = ANY($2::date[]))
       AND ($3::date IS NULL OR service_date >= $3) AND ($4::date IS NULL OR service_date <= $4)
       AND ($5::text[] IS NULL OR trip_id = ANY($5::text[]))
     ORDER BY trip_tracking_dirty.marked_at LIMIT $6`,
    [o.groupId ?? null, o.dates ? [...o.dates] : null, o.from ?? null, o.to ?? null, o.tripIds ? [...o.tripIds] : null, o.limit ?? 100_000],
  );
  for (const r of rows) {
    await recomputeTrip(db, r.group_id, r.service_date, r.trip_id);
    await db.query('DELETE FROM trip_tracking_dirty WHERE group_id = $1 AND service_date = $2 AND trip_id = $3 AND marked_at <= $4', [r.group_id, r.service_date, r.trip_id, r.marked_at]);
  }
  return rows.length;
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
/** Trips recomputed per refreshDirty call of a round. */
const REFRESH_CHUNK = 100;

interface RefreshQueue {
  pending: Map<string, Map<string, TripRef>>;
  running: Promise<void> | undefined;
}
const queues = new WeakMap<AppContext, RefreshQueue>();

/**
 * Recomputes soon after an ingest commit, without holding up the device's answer; a failure is
 * logged, and the trip stays in the queue for the worker and the next read.
 */
export function refreshSoon(ctx: AppContext, groupId: string, trips: readonly TripRef[]): void {
  if (trips.length === 0) return;
  const q = queues.get(ctx) ?? queues.set(ctx, { pending: new Map(), running: undefined }).get(ctx)!;
  const mine = q.pending.get(groupId) ?? q.pending.set(groupId, new Map()).get(groupId)!;
  for (const t of trips) mine.set(`${t.service_date} ${t.trip_id}`, t);
  q.running ??= drain(ctx, q).finally(() => (q.running = undefined));
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

async function drain(ctx: AppContext, q: RefreshQueue): Promise<void> {
  let next = 0;
  while (q.pending.size > 0) {
    const wait = next - Date.now();
    await new Promise((resolve) => (wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve)));
    const started = Date.now();
    const round = [...q.pending];
    q.pending.clear();
    for (const [groupId, byKey] of round) {
      await refreshRound(ctx.db, groupId, [...byKey.values()], (err) => ctx.log.warn({ err }, 'trip tracking refresh failed; the worker retries'));
    }
    const took = Date.now() - started;
    next = started + Math.max(REFRESH_ROUND_MS, took * (1 + REFRESH_REST));
  }
}

/**
 * The worker loop: drains the queue every `intervalMs` (trips whose refresh after commit failed
 * or was cut by a restart). The function it returns stops the loop and waits for running work.
 */
export function startTrackingWorker(ctx: AppContext, intervalMs = 5000): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  let busy = false;
  const timer = setInterval(() => {
    // While the refresh after ingest runs, it is the one draining (at its bounded pace).
    if (busy || queues.get(ctx)?.running) return;
    busy = true;
    running = refreshDirty(ctx.db, { limit: 500 })
      .catch((err: unknown) => ctx.log.warn({ err }, 'trip tracking worker failed'))
      .finally(() => (busy = false));
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
    await queues.get(ctx)?.running;
  };
}

// ---------------------------------------------------------------------------------------------
// Computing one trip.

interface EventRow {
  device_id: string;
  at: Date;
  event: 'stop_passed' | 'departure' | 'arrival' | 'state_change';
  stop_id: string | null;
  stop_sequence: number | null;
  start_time: number | null;
  lat: number | null;
  lon: number | null;
  gps_valid: boolean;
}

interface PositionRow {
  device_id: string;
  at: Date;
  lat: number;
  lon: number;
  gps_valid: boolean;
  start_time: number | null;
}

interface DutyRow {
  device_id: string;
  driver_id: string;
  vehicle_id: string;
  signed_on_at: Date;
  signed_off_at: Date | null;
}

/** A stop's passing time (actual_at) with the report it came from, and its arrival and departure. */
interface Passage {
  at: Date;
  source: 'event' | 'position';
  device_id: string;
  lat: number | null;
  lon: number | null;
  gps_valid: boolean | null;
}

interface StopPassage {
  passing: Passage | null;
  arrival_at: Date | null;
  departure_at: Date | null;
}

/** Reads everything recorded for a trip on a date, computes its tracking and stores it. */
/** Recomputations of one trip in this process, chained: the last to start writes last. */
const running = new WeakMap<Db, Map<string, Promise<void>>>();

/**
 * Recomputes the stored tracking of a trip from everything recorded. Two recomputations of the same
 * trip in one process run one after the other, so an older reading never overwrites a newer one.
 * (Across instances, a newer mark stays in the queue and a later refresh or read recomputes.)
 */
export async function recomputeTrip(db: Db, groupId: string, serviceDate: string, tripId: string): Promise<void> {
  let chains = running.get(db);
  if (!chains) running.set(db, (chains = new Map()));
  const k = `${groupId}\u0000${serviceDate}\u0000${tripId}`;
  const next = (chains.get(k) ?? Promise.resolve()).catch(() => undefined).then(() => recomputeTripNow(db, groupId, serviceDate, tripId));
  chains.set(k, next);
  try {
    await next;
  } finally {
    if (chains.get(k) === next) chains.delete(k);
  }
}

async function recomputeTripNow(db: Db, groupId: string, serviceDate: string, tripId: string): Promise<void> {
  const key = [groupId, serviceDate, tripId];
  const [events, positions, runs, counts] = await Promise.all([
    db.query<EventRow>(
      `SELECT device_id, at, event, stop_id, stop_sequence, start_time, lat, lon, gps_valid FROM trip_events
       WHERE group_id = $1 AND service_date = $2 AND trip_id = $3 ORDER BY at, client_id`, key),
    db.query<PositionRow>(
      `SELECT device_id, at, lat, lon, gps_valid, start_time FROM positions
       WHERE group_id = $1 AND service_date = $2 AND trip_id = $3 ORDER BY at, client_id`, key),
    db.query<{ device_id: string; kind: 'start' | 'end'; at: Date; start_time: number | null }>(
      'SELECT device_id, kind, at, start_time FROM trip_runs WHERE group_id = $1 AND service_date = $2 AND trip_id = $3 ORDER BY at', key),
    db.query<{ device_id: string; at: Date; stop_id: string; stop_sequence: number | null; door: number; boardings: number; alightings: number }>(
      `SELECT device_id, at, stop_id, stop_sequence, door, SUM(boardings)::int AS boardings, SUM(alightings)::int AS alightings FROM passenger_counts
       WHERE group_id = $1 AND service_date = $2 AND trip_id = $3 GROUP BY device_id, client_id, at, stop_id, stop_sequence, door ORDER BY at`, key),
  ]);
  const reportTimes = [...events.map((e) => e.at), ...positions.map((p) => p.at), ...runs.map((r) => r.at), ...counts.map((c) => c.at)];
  if (reportTimes.length === 0) {
    await db.transaction(async (tx) => {
      await tx.query('DELETE FROM trip_tracking_stops WHERE group_id = $1 AND service_date = $2 AND trip_id = $3', key);
      await tx.query('DELETE FROM trip_tracking WHERE group_id = $1 AND service_date = $2 AND trip_id = $3', key);
    });
    return;
  }

  // The scheduled trip: the instance whose start time the reports name, else the first one.
  const day = await tripsOnServiceDate(db, groupId, serviceDate, { tripIds: [tripId] });
  const reportedStart = [...runs, ...events, ...positions].find((r) => r.start_time !== null)?.start_time ?? null;
  const trip: ScheduledTrip | undefined = day.trips.find((t) => reportedStart !== null && t.first_departure === reportedStart) ?? day.trips[0];
  const stops: ScheduledStopTime[] = trip ? await tripStopTimes(db, groupId, serviceDate, tripId, { startTime: trip.first_departure }) : [];
  const shape = trip?.shape_id && day.gtfsId ? await tripShape(db, groupId, day.gtfsId, trip.shape_id) : [];

  const devices = [...new Set([...runs, ...events, ...positions, ...counts].map((r) => r.device_id))];
  const from = new Date(Math.min(...reportTimes.map((d) => d.getTime())));
  const until = new Date(Math.max(...reportTimes.map((d) => d.getTime())));
  const duties = await db.query<DutyRow>(
    `SELECT device_id, driver_id, vehicle_id, signed_on_at, signed_off_at FROM duties
     WHERE group_id = $1 AND device_id = ANY($2) AND signed_on_at <= $4 AND (signed_off_at IS NULL OR signed_off_at > $3)
     ORDER BY signed_on_at`,
    [groupId, devices, from, until],
  );
  const dutyAt = (deviceId: string, at: Date) =>
    duties.find((d) => d.device_id === deviceId && d.signed_on_at <= at && (d.signed_off_at === null || d.signed_off_at > at)) ?? null;

  const line = shape.length >= 2 ? shape.map((p) => [p.lon, p.lat] as LonLat) : stopLine(stops);
  const passages = matchStops(stops, events, positions, line);
  const km = kilometres(line, positions);

  // Passenger counts per call: by stop_sequence, else the first call of the stop_id.
  const doors = new Map<number, { in: number[]; out: number[] }>();
  for (const c of counts) {
    const seq = c.stop_sequence !== null && stops.some((s) => s.stop_sequence === c.stop_sequence) ? c.stop_sequence : stops.find((s) => s.stop_id === c.stop_id)?.stop_sequence;
    if (seq === undefined) continue;
    const d = doors.get(seq) ?? doors.set(seq, { in: [], out: [] }).get(seq)!;
    while (d.in.length < c.door) {
      d.in.push(0);
      d.out.push(0);
    }
    d.in[c.door - 1]! += c.boardings;
    d.out[c.door - 1]! += c.alightings;
  }
  let load = 0;
  let maxLoad = 0;
  let boardings = 0;
  let alightings = 0;
  for (const s of stops) {
    const d = doors.get(s.stop_sequence);
    if (!d) continue;
    const i = d.in.reduce((a, b) => a + b, 0);
    const o = d.out.reduce((a, b) => a + b, 0);
    boardings += i;
    alightings += o;
    load = Math.max(0, load + i - o);
    maxLoad = Math.max(maxLoad, load);
  }

  // Who operated it: the duty open on the reporting device at each report, first seen first.
  const seenVehicles: string[] = [];
  const seenDrivers: string[] = [];
  for (const r of [...runs, ...events, ...positions, ...counts].sort((a, b) => a.at.getTime() - b.at.getTime())) {
    const d = dutyAt(r.device_id, r.at);
    if (d && !seenVehicles.includes(d.vehicle_id)) seenVehicles.push(d.vehicle_id);
    if (d && !seenDrivers.includes(d.driver_id)) seenDrivers.push(d.driver_id);
  }

  const last = stops[stops.length - 1];
  const rows = stops.map((s) => {
    const passage = passages.get(s.stop_sequence);
    const p = passage?.passing ?? null;
    const scheduled = s === last ? (s.arrival_at ?? s.departure_at) : (s.departure_at ?? s.arrival_at);
    const duty = p ? dutyAt(p.device_id, p.at) : null;
    const d = doors.get(s.stop_sequence);
    return {
      s,
      p,
      arrival: passage?.arrival_at ?? null,
      departure: passage?.departure_at ?? null,
      delay: p && scheduled ? Math.round((p.at.getTime() - scheduled.getTime()) / 1000) : null,
      vehicle: duty?.vehicle_id ?? null,
      driver: duty?.driver_id ?? null,
      in: d?.in ?? [],
      out: d?.out ?? [],
    };
  });
  const passed = rows.filter((r) => r.p !== null);
  const lastPassed = passed[passed.length - 1] ?? null;
  const lastDelayed = [...passed].reverse().find((r) => r.delay !== null) ?? null;
  const startRun = runs.find((r) => r.kind === 'start');
  const endRun = [...runs].reverse().find((r) => r.kind === 'end');

  await db.transaction(async (tx) => {
    await tx.query(
      `DELETE FROM trip_tracking_stops WHERE group_id = $1 AND service_date = $2 AND trip_id = $3 AND NOT (stop_sequence = ANY($4::int[]))`,
      [...key, stops.map((s) => s.stop_sequence)],
    );
    if (rows.length > 0) {
      await tx.query(
        `INSERT INTO trip_tracking_stops (group_id, service_date, trip_id, stop_sequence, stop_id, stop_name, stop_lat, stop_lon, scheduled_arrival_at, scheduled_departure_at,
           actual_at, source, delay_seconds, lat, lon, gps_valid, device_id, vehicle_id, driver_id, doors_in, doors_out, actual_arrival_at, actual_departure_at)
         SELECT $1, $2, $3, u.stop_sequence, u.stop_id, u.stop_name, u.stop_lat, u.stop_lon, u.sa, u.sd, u.actual_at, u.source, u.delay_seconds, u.lat, u.lon, u.gps_valid, u.device_id, u.vehicle_id, u.driver_id, u.di::int[], u.dout::int[], u.aa, u.ad FROM unnest($4::int[], $5::text[], $6::text[], $7::float8[], $8::float8[], $9::timestamptz[], $10::timestamptz[], $11::timestamptz[], $12::text[],
           $13::int[], $14::float8[], $15::float8[], $16::bool[], $17::text[], $18::text[], $19::text[], $20::text[], $21::text[], $22::timestamptz[], $23::timestamptz[])
           AS u(stop_sequence, stop_id, stop_name, stop_lat, stop_lon, sa, sd, actual_at, source, delay_seconds, lat, lon, gps_valid, device_id, vehicle_id, driver_id, di, dout, aa, ad)
         ON CONFLICT (group_id, service_date, trip_id, stop_sequence) DO UPDATE SET
           stop_id = EXCLUDED.stop_id, stop_name = EXCLUDED.stop_name, stop_lat = EXCLUDED.stop_lat, stop_lon = EXCLUDED.stop_lon,
           scheduled_arrival_at = EXCLUDED.scheduled_arrival_at, scheduled_departure_at = EXCLUDED.scheduled_departure_at, actual_at = EXCLUDED.actual_at,
           source = EXCLUDED.source, delay_seconds = EXCLUDED.delay_seconds, lat = EXCLUDED.lat, lon = EXCLUDED.lon, gps_valid = EXCLUDED.gps_valid,
           device_id = EXCLUDED.device_id, vehicle_id = EXCLUDED.vehicle_id, driver_id = EXCLUDED.driver_id, doors_in = EXCLUDED.doors_in, doors_out = EXCLUDED.doors_out,
           actual_arrival_at = EXCLUDED.actual_arrival_at, actual_departure_at = EXCLUDED.actual_departure_at`,
        [
          ...key,
          rows.map((r) => r.s.stop_sequence), rows.map((r) => r.s.stop_id), rows.map((r) => r.s.stop_name), rows.map((r) => r.s.stop_lat), rows.map((r) => r.s.stop_lon),
          rows.map((r) => r.s.arrival_at), rows.map((r) => r.s.departure_at), rows.map((r) => r.p?.at ?? null), rows.map((r) => r.p?.source ?? null),
          rows.map((r) => r.delay), rows.map((r) => r.p?.lat ?? null), rows.map((r) => r.p?.lon ?? null), rows.map((r) => r.p?.gps_valid ?? null),
          rows.map((r) => r.p?.device_id ?? null), rows.map((r) => r.vehicle), rows.map((r) => r.driver),
          // int[][] does not travel through unnest as rows: each row's door list as an array literal.
          rows.map((r) => `{${r.in.join(',')}}`), rows.map((r) => `{${r.out.join(',')}}`),
          rows.map((r) => r.arrival), rows.map((r) => r.departure),
        ],
      );
    }
    await tx.query(
      `INSERT INTO trip_tracking (group_id, service_date, trip_id, route_id, start_time, gtfs_id, scheduled_start_at, scheduled_end_at, started_at, ended_at, end_reported,
         last_report_at, delay_seconds, delay_stop_sequence, planned_stops, recorded_stops, unpassed_stops, last_passed_sequence, tk, vk, recorded_commercial_km,
         off_itinerary_km, reliable_km, unreliable_km, percent_km, positions, invalid_positions, boardings, alightings, max_load, device_ids, vehicle_ids, driver_ids,
         direction_id, block_id, headsign, first_stop_id, last_stop_id, last_sequence, doors, computed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33,
         $34, $35, $36, $37, $38, $39, $40, now())
       ON CONFLICT (group_id, service_date, trip_id) DO UPDATE SET
         route_id = EXCLUDED.route_id, start_time = EXCLUDED.start_time, gtfs_id = EXCLUDED.gtfs_id, scheduled_start_at = EXCLUDED.scheduled_start_at,
         scheduled_end_at = EXCLUDED.scheduled_end_at, started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at, end_reported = EXCLUDED.end_reported,
         last_report_at = EXCLUDED.last_report_at, delay_seconds = EXCLUDED.delay_seconds, delay_stop_sequence = EXCLUDED.delay_stop_sequence,
         planned_stops = EXCLUDED.planned_stops, recorded_stops = EXCLUDED.recorded_stops, unpassed_stops = EXCLUDED.unpassed_stops,
         last_passed_sequence = EXCLUDED.last_passed_sequence, tk = EXCLUDED.tk, vk = EXCLUDED.vk, recorded_commercial_km = EXCLUDED.recorded_commercial_km,
         off_itinerary_km = EXCLUDED.off_itinerary_km, reliable_km = EXCLUDED.reliable_km, unreliable_km = EXCLUDED.unreliable_km, percent_km = EXCLUDED.percent_km,
         positions = EXCLUDED.positions, invalid_positions = EXCLUDED.invalid_positions, boardings = EXCLUDED.boardings, alightings = EXCLUDED.alightings,
         max_load = EXCLUDED.max_load, device_ids = EXCLUDED.device_ids, vehicle_ids = EXCLUDED.vehicle_ids, driver_ids = EXCLUDED.driver_ids,
         direction_id = EXCLUDED.direction_id, block_id = EXCLUDED.block_id, headsign = EXCLUDED.headsign, first_stop_id = EXCLUDED.first_stop_id,
         last_stop_id = EXCLUDED.last_stop_id, last_sequence = EXCLUDED.last_sequence, doors = EXCLUDED.doors, computed_at = now()`,
      [
        ...key, trip?.route_id ?? null, trip?.first_departure ?? reportedStart, day.gtfsId, trip?.first_departure_at ?? null, trip?.last_arrival_at ?? null,
        startRun?.at ?? from, endRun?.at ?? until, endRun !== undefined, until, lastDelayed?.delay ?? null, lastDelayed?.s.stop_sequence ?? null,
        stops.length, passed.length, rows.filter((r) => r.p === null).map((r) => r.s.stop_sequence), lastPassed?.s.stop_sequence ?? null,
        km.tk, km.vk, km.recorded_commercial_km, km.off_itinerary_km, km.reliable_km, km.unreliable_km, km.percent_km,
        positions.length, positions.filter((p) => !p.gps_valid).length, boardings, alightings, maxLoad, devices, seenVehicles, seenDrivers,
        trip?.direction_id ?? null, trip?.block_id ?? null, trip?.headsign ?? null, stops[0]?.stop_id ?? null, last?.stop_id ?? null, last?.stop_sequence ?? null,
        Math.max(0, ...[...doors.values()].map((d) => d.in.length)),
      ],
    );
  });
}

/**
 * Arrival, departure and passing time of each stop (see the rules at the top of this file), by
 * stop_sequence; `line` is the trip's itinerary (shape, else the line through the stops).
 */
export function matchStops(stops: readonly ScheduledStopTime[], events: readonly EventRow[], positions: readonly PositionRow[], line: readonly LonLat[]): Map<number, StopPassage> {
  const bySeq = new Map<number, { arrival?: EventRow; departure?: EventRow; passed?: EventRow }>();
  let lastSeq = -Infinity;
  for (const e of events) {
    if (e.event === 'state_change') continue;
    let seq: number | undefined;
    if (e.stop_sequence !== null && stops.some((s) => s.stop_sequence === e.stop_sequence)) seq = e.stop_sequence;
    else if (e.stop_id !== null) {
      seq = (stops.find((s) => s.stop_id === e.stop_id && s.stop_sequence >= lastSeq) ?? stops.find((s) => s.stop_id === e.stop_id))?.stop_sequence;
    }
    if (seq === undefined) continue;
    lastSeq = seq;
    const slot = bySeq.get(seq) ?? bySeq.set(seq, {}).get(seq)!;
    if (e.event === 'arrival') slot.arrival ??= e;
    else if (e.event === 'departure') slot.departure = e;
    else slot.passed ??= e;
  }
  const valid = positions.filter((p) => p.gps_valid);
  const it = new Itinerary(line, line[0]?.[1] ?? valid[0]?.lat ?? 45);
  const fromPositions = it.usable && valid.length > 0 ? stopTimes(it, stops, valid, progressOf(it, valid)) : [];
  const byEvent = (e: EventRow): Passage => ({ at: e.at, source: 'event', device_id: e.device_id, lat: e.lat, lon: e.lon, gps_valid: e.gps_valid });
  const byFix = (c: Crossing): Passage => {
    const p = valid[c.index]!;
    return { at: c.at, source: 'position', device_id: p.device_id, lat: p.lat, lon: p.lon, gps_valid: true };
  };
  const out = new Map<number, StopPassage>();
  const last = stops[stops.length - 1];
  stops.forEach((s, k) => {
    const slot = bySeq.get(s.stop_sequence) ?? {};
    const pos = fromPositions[k];
    const arrivalEvent = slot.arrival ?? slot.passed;
    const departureEvent = slot.departure ?? slot.passed;
    const arrival = arrivalEvent ? byEvent(arrivalEvent) : pos?.arrival ? byFix(pos.arrival) : null;
    const departure = departureEvent ? byEvent(departureEvent) : s !== last && pos?.departure ? byFix(pos.departure) : null;
    const passing = s === last
      ? (arrival ?? departure)
      : (departure ?? (slot.arrival ? byEvent(slot.arrival) : null));
    if (passing || arrival || departure) out.set(s.stop_sequence, { passing, arrival_at: arrival?.at ?? null, departure_at: departure?.at ?? null });
  });
  return out;
}

function stopLine(stops: readonly ScheduledStopTime[]): LonLat[] {
  return stops.filter((s) => s.stop_lat !== null && s.stop_lon !== null).map((s) => [s.stop_lon!, s.stop_lat!]);
}

// ---------------------------------------------------------------------------------------------
// Reading.

/** A stored trip summary row: its kilometres are the columns of the same names. */
interface SummaryRow extends Kilometres {
  trip_id: string;
  route_id: string | null;
  start_time: number | null;
  scheduled_end_at: Date | null;
  started_at: Date;
  ended_at: Date;
  end_reported: boolean;
  delay_seconds: number | null;
  delay_stop_sequence: number | null;
  planned_stops: number;
  recorded_stops: number;
  unpassed_stops: number[];
  last_passed_sequence: number | null;
  boardings: number;
  alightings: number;
  max_load: number;
  device_ids: string[];
  vehicle_ids: string[];
  driver_ids: string[];
}

interface StopRow {
  trip_id: string;
  stop_sequence: number;
  stop_id: string;
  stop_name: string | null;
  scheduled_arrival_at: Date | null;
  scheduled_departure_at: Date | null;
  actual_at: Date | null;
  source: 'event' | 'position' | null;
  actual_arrival_at: Date | null;
  actual_departure_at: Date | null;
  delay_seconds: number | null;
  vehicle_id: string | null;
  doors_in: number[];
  doors_out: number[];
}

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
 */
export async function trackingOf(db: Db, groupId: string, serviceDate: string, tripIds?: readonly string[], o: { now?: Date; open?: boolean } = {}): Promise<TripTracking[]> {
  const now = o.now ?? new Date();
  await refreshDirty(db, { groupId, dates: [serviceDate], ...(tripIds ? { tripIds } : {}) });
  const summaries = await db.query<SummaryRow>(
    `SELECT trip_id, route_id, start_time, scheduled_end_at, started_at, ended_at, end_reported, delay_seconds, delay_stop_sequence, planned_stops, recorded_stops,
            unpassed_stops, last_passed_sequence, tk, vk, recorded_commercial_km, off_itinerary_km, reliable_km, unreliable_km, percent_km, boardings, alightings,
            max_load, device_ids, vehicle_ids, driver_ids
     FROM trip_tracking WHERE group_id = $1 AND service_date = $2 AND ($3::text[] IS NULL OR trip_id = ANY($3::text[]))
       AND (NOT $4::boolean OR (NOT end_reported AND (scheduled_end_at IS NULL OR scheduled_end_at >= $5))) ORDER BY started_at, trip_id`,
    [groupId, serviceDate, tripIds ? [...tripIds] : null, o.open === true, new Date(now.getTime() - TRIP_CLOSE_AFTER_SECONDS * 1000)],
  );
  const stopTrips = o.open ? summaries.map((s) => s.trip_id) : tripIds ? [...tripIds] : null;
  const stopRows = await db.query<StopRow>(
    `SELECT trip_id, stop_sequence, stop_id, stop_name, scheduled_arrival_at, scheduled_departure_at, actual_at, source, actual_arrival_at, actual_departure_at,
            delay_seconds, vehicle_id, doors_in, doors_out
     FROM trip_tracking_stops WHERE group_id = $1 AND service_date = $2 AND ($3::text[] IS NULL OR trip_id = ANY($3::text[])) ORDER BY trip_id, stop_sequence`,
    [groupId, serviceDate, stopTrips],
  );
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
  for (const s of summaries) {
    const start = s.start_time === null ? null : formatGtfsTime(s.start_time);
    const overlay = overlayOf({ trip_id: s.trip_id, start_time: start });
    const rows = stopsOf.get(s.trip_id) ?? [];
    const lastSeq = rows[rows.length - 1]?.stop_sequence ?? null;
    const over = tripOver({ ...s, last_sequence: lastSeq }, now);
    const stops = rows.map((r, i): TrackedStop => {
      const later = s.last_passed_sequence !== null && r.stop_sequence < s.last_passed_sequence;
      const status: StopStatus = r.actual_at ? 'passed' : overlay.skipped.has(r.stop_sequence) ? 'skipped' : later || over ? 'missed' : overlay.cancelled ? 'cancelled' : 'pending';
      const scheduledAt = i === rows.length - 1 ? (r.scheduled_arrival_at ?? r.scheduled_departure_at) : (r.scheduled_departure_at ?? r.scheduled_arrival_at);
      return {
        stop_id: r.stop_id, stop_sequence: r.stop_sequence, stop_name: r.stop_name,
        scheduled_arrival_at: iso(r.scheduled_arrival_at), scheduled_departure_at: iso(r.scheduled_departure_at), scheduled_at: iso(scheduledAt),
        actual_at: iso(r.actual_at), source: r.source, actual_arrival_at: iso(r.actual_arrival_at), actual_departure_at: iso(r.actual_departure_at),
        dwell_seconds: r.actual_arrival_at && r.actual_departure_at ? Math.round((r.actual_departure_at.getTime() - r.actual_arrival_at.getTime()) / 1000) : null,
        delay_seconds: r.delay_seconds, status, vehicle_id: r.vehicle_id,
        boardings: sum(r.doors_in), alightings: sum(r.doors_out),
      };
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
