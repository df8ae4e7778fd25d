/**
 * The tracking of one trip on one service date from what was recorded and what was scheduled:
 * pure (no database, no clock). The definitions are at the top of ../tracking.ts and in
 * docs/tracking.md; the round (./round.ts) reads the inputs of all its trips set-based, calls
 * computeTrip for each, and writes the results set-based.
 */
import type { ScheduledStopTime, ScheduledTrip, ShapePoint } from '../../gtfs/service-days.js';
import { emptyProgressMemo, Itinerary, kilometres, progressOf, stopProgress, stopTimes, type Crossing, type Kilometres, type LonLat, type ProgressMemo } from '../passages.js';

export interface EventRow {
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

export interface PositionRow {
  device_id: string;
  at: Date;
  lat: number;
  lon: number;
  gps_valid: boolean;
  start_time: number | null;
}

export interface RunRow {
  device_id: string;
  kind: 'start' | 'end';
  at: Date;
  start_time: number | null;
}

export interface CountRow {
  device_id: string;
  at: Date;
  stop_id: string;
  stop_sequence: number | null;
  door: number;
  boardings: number;
  alightings: number;
}

export interface DutyRow {
  device_id: string;
  driver_id: string;
  vehicle_id: string;
  signed_on_at: Date;
  signed_off_at: Date | null;
}

/** Everything recorded for a trip on a date, each list in time order (events and positions by at, then client_id). */
export interface Recorded {
  events: readonly EventRow[];
  positions: readonly PositionRow[];
  runs: readonly RunRow[];
  counts: readonly CountRow[];
}

/** The scheduled trip the reports are matched against, or none (a trip the version does not run that day). */
export interface Schedule {
  gtfsId: string | null;
  trip: ScheduledTrip | undefined;
  stops: readonly ScheduledStopTime[];
  shape: readonly ShapePoint[];
  /** The itinerary of `shape` already made (shared by the trips of one shape); made here when absent. */
  itinerary?: Itinerary;
}

/**
 * What the computation of a trip keeps for its next computation (incremental, tracking rounds):
 * the itinerary it was made on, the progress of its stops, and the progress of the fixes already
 * projected (those of the passages, and each device's track for the kilometres). A new
 * computation projects only the fixes not seen yet; the result is the same as from nothing.
 * Made empty (`{}`) by the caller, kept per trip; an itinerary or stops that differ reset it.
 */
export interface TripMemo {
  it?: Itinerary;
  stopsKey?: string;
  along?: (number | null)[];
  valid?: ProgressMemo;
  km?: Map<string, ProgressMemo>;
}

/** A stop's passing time (actual_at) with the report it came from. */
export interface Passage {
  at: Date;
  source: 'event' | 'position';
  device_id: string;
  lat: number | null;
  lon: number | null;
  gps_valid: boolean | null;
}

export interface StopPassage {
  passing: Passage | null;
  arrival_at: Date | null;
  departure_at: Date | null;
}

/** One row of trip_tracking_stops. */
export interface StopResult {
  s: ScheduledStopTime;
  p: Passage | null;
  arrival: Date | null;
  departure: Date | null;
  delay: number | null;
  vehicle: string | null;
  driver: string | null;
  in: number[];
  out: number[];
}

/** One row of trip_tracking (its columns, bar the key and computed_at) and its stop rows. */
export interface TripResult {
  route_id: string | null;
  start_time: number | null;
  gtfs_id: string | null;
  scheduled_start_at: Date | null;
  scheduled_end_at: Date | null;
  started_at: Date;
  ended_at: Date;
  end_reported: boolean;
  last_report_at: Date;
  delay_seconds: number | null;
  delay_stop_sequence: number | null;
  planned_stops: number;
  recorded_stops: number;
  unpassed_stops: number[];
  last_passed_sequence: number | null;
  km: Kilometres;
  positions: number;
  invalid_positions: number;
  boardings: number;
  alightings: number;
  max_load: number;
  device_ids: string[];
  vehicle_ids: string[];
  driver_ids: string[];
  direction_id: number | null;
  block_id: string | null;
  headsign: string | null;
  first_stop_id: string | null;
  last_stop_id: string | null;
  last_sequence: number | null;
  doors: number;
  stops: StopResult[];
}

/** The start time (seconds of the service day) the reports name: of the first report naming one, runs first. */
export function reportedStart(r: Recorded): number | null {
  return [...r.runs, ...r.events, ...r.positions].find((x) => x.start_time !== null)?.start_time ?? null;
}

/** The scheduled instance the reports name (by start time), else the first one of the day. */
export function pickInstance(instances: readonly ScheduledTrip[], start: number | null): ScheduledTrip | undefined {
  return instances.find((t) => start !== null && t.first_departure === start) ?? instances[0];
}

/**
 * The tracking of a trip, or null when nothing is recorded (its stored tracking is then deleted).
 * `duties`: the duties of the reporting devices (any superset: each report takes the duty open on
 * its device at its time).
 */
export function computeTrip(rec: Recorded, sched: Schedule, duties: readonly DutyRow[], memo?: TripMemo): TripResult | null {
  const { events, positions, runs, counts } = rec;
  const reportTimes = [...events.map((e) => e.at), ...positions.map((p) => p.at), ...runs.map((r) => r.at), ...counts.map((c) => c.at)];
  if (reportTimes.length === 0) return null;
  const { trip, stops, shape } = sched;
  const start = reportedStart(rec);

  const devices = [...new Set([...runs, ...events, ...positions, ...counts].map((r) => r.device_id))];
  const from = new Date(Math.min(...reportTimes.map((d) => d.getTime())));
  const until = new Date(Math.max(...reportTimes.map((d) => d.getTime())));
  const mine = duties.filter((d) => devices.includes(d.device_id) && d.signed_on_at <= until && (d.signed_off_at === null || d.signed_off_at > from))
    .sort((a, b) => a.signed_on_at.getTime() - b.signed_on_at.getTime());
  const dutyAt = (deviceId: string, at: Date) =>
    mine.find((d) => d.device_id === deviceId && d.signed_on_at <= at && (d.signed_off_at === null || d.signed_off_at > at)) ?? null;

  const line = shape.length >= 2 ? shape.map((p) => [p.lon, p.lat] as LonLat) : stopLine(stops);
  // One itinerary for the passages and the kilometres (a line of fewer than two points has none).
  const it = line.length < 2 ? undefined : shape.length >= 2 && sched.itinerary ? sched.itinerary : new Itinerary(line, line[0]![1]);
  let m: Required<TripMemo> | undefined;
  if (memo && it) {
    const stopsKey = stops.map((s) => `${s.stop_lat},${s.stop_lon}`).join(';');
    if (memo.it !== it || memo.stopsKey !== stopsKey) {
      memo.it = it;
      memo.stopsKey = stopsKey;
      memo.along = stopProgress(it, stops);
      memo.valid = emptyProgressMemo();
      memo.km = new Map();
    }
    m = memo as Required<TripMemo>;
  }
  const passages = matchStops(stops, events, positions, line, it && { it, along: m?.along, memo: m?.valid });
  const km = kilometres(line, positions, it ? { itinerary: it, ...(m ? { memo: m.km } : {}) } : {});

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
  const rows = stops.map((s): StopResult => {
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

  return {
    route_id: trip?.route_id ?? null,
    start_time: trip?.first_departure ?? start,
    gtfs_id: sched.gtfsId,
    scheduled_start_at: trip?.first_departure_at ?? null,
    scheduled_end_at: trip?.last_arrival_at ?? null,
    started_at: startRun?.at ?? from,
    ended_at: endRun?.at ?? until,
    end_reported: endRun !== undefined,
    last_report_at: until,
    delay_seconds: lastDelayed?.delay ?? null,
    delay_stop_sequence: lastDelayed?.s.stop_sequence ?? null,
    planned_stops: stops.length,
    recorded_stops: passed.length,
    unpassed_stops: rows.filter((r) => r.p === null).map((r) => r.s.stop_sequence),
    last_passed_sequence: lastPassed?.s.stop_sequence ?? null,
    km,
    positions: positions.length,
    invalid_positions: positions.filter((p) => !p.gps_valid).length,
    boardings,
    alightings,
    max_load: maxLoad,
    device_ids: devices,
    vehicle_ids: seenVehicles,
    driver_ids: seenDrivers,
    direction_id: trip?.direction_id ?? null,
    block_id: trip?.block_id ?? null,
    headsign: trip?.headsign ?? null,
    first_stop_id: stops[0]?.stop_id ?? null,
    last_stop_id: last?.stop_id ?? null,
    last_sequence: last?.stop_sequence ?? null,
    doors: Math.max(0, ...[...doors.values()].map((d) => d.in.length)),
    stops: rows,
  };
}

/**
 * Arrival, departure and passing time of each stop (see the rules at the top of ../tracking.ts),
 * by stop_sequence; `line` is the trip's itinerary (shape, else the line through the stops).
 */
export function matchStops(
  stops: readonly ScheduledStopTime[], events: readonly EventRow[], positions: readonly PositionRow[], line: readonly LonLat[],
  made?: { it: Itinerary; along: (number | null)[] | undefined; memo: ProgressMemo | undefined },
): Map<number, StopPassage> {
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
  // `made`: the itinerary of `line` made already, the progress of the stops and of the fixes seen before (computeTrip).
  const it = made?.it ?? new Itinerary(line, line[0]?.[1] ?? valid[0]?.lat ?? 45);
  const fromPositions = it.usable && valid.length > 0 ? stopTimes(it, stops, valid, progressOf(it, valid, made?.memo), made?.along ?? stopProgress(it, stops)) : [];
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
