/**
 * One round of tracking recomputation, set-based (issue #16 §2): whatever the number of trips,
 * a fixed handful of statements (docs/tracking.md, "A round of recomputation"):
 *
 * - per group and service date: the trips of the date the round names (tripsOnServiceDate: the
 *   group's time zone, the version in force, the trips);
 * - their stop times and shapes, only for the trips and shapes not yet in the schedule memo
 *   (gtfs/schedule-memo.ts, shared with the passenger feeds: a GTFS version is never changed
 *   once imported, so what was read of it stays true);
 * - per group: the trip events, positions, trip runs and passenger counts of all the round's
 *   trips, one statement each, bounded to the service dates' windows (reportWindow) so
 *   PostgreSQL reads only the partitions that can hold them, each trip from its own bound: only
 *   the reports since its last round when this handle holds the ones before (incremental reads,
 *   docs/tracking.md); the duties of all their devices;
 * - the computation, pure (compute.ts), per trip;
 * - one statement writing everything (its parts committed together): the stop rows no longer scheduled deleted, the trips with
 *   nothing recorded deleted, the stop rows that changed since this handle's last write (all
 *   when it holds none) and every trip row upserted (one statement each, arrays through unnest;
 *   a stop row that did not change is not rewritten), and the dirty marks
 *   the round read cleared unless a newer report marked the trip again meanwhile.
 */
import type { Db } from '../../../platform/db/index.js';
import { slices } from '../../../platform/slices.js';
import { scheduleMemoOf } from '../../gtfs/schedule-memo.js';
import { onServiceDay, tripsOnServiceDate, type ScheduledTrip, type ShapePoint, type StoredStopTimes } from '../../gtfs/service-days.js';
import { Itinerary, type LonLat } from '../passages.js';
import { sameStop, selectDutiesOfDevices, selectRecorded, writeRound } from '../queries/round.js';
import { computeTrip, pickInstance, reportedStart, type Recorded, type StopResult, type TripMemo, type TripResult } from './compute.js';

/** Reports of a service date are read from this long before the start of its service day, in hours. */
export const WINDOW_BEFORE_HOURS = 1;
/** …to this long after it, in hours. */
export const WINDOW_AFTER_HOURS = 48;

/**
 * The instants a trip of a service date can have reports at: [dayStart − 1 h, dayStart + 48 h)
 * (dayStart: noon minus 12 h of the date in the group's zone, where GTFS times count from). A
 * trip's times are at least 00:00:00 of its service day (a device may report it from up to an
 * hour before: a layover at the first stop before an early departure), and GTFS times pass
 * 24:00:00 for trips after midnight (rarely beyond 30:00:00); 48 h leaves a whole day of delay.
 * Reports are dated by the fix (`at`), not by their arrival, so a device's offline backlog is in
 * its window however late it arrives. A report outside is not counted for the trip.
 */
export function reportWindow(dayStart: Date): { from: Date; until: Date } {
  return { from: new Date(dayStart.getTime() - WINDOW_BEFORE_HOURS * 3_600_000), until: new Date(dayStart.getTime() + WINDOW_AFTER_HOURS * 3_600_000) };
}

export interface TripKey {
  group_id: string;
  service_date: string;
  trip_id: string;
}

/**
 * A dirty mark read by the round (as text: microseconds), cleared after the write unless newer:
 * `since` the earliest report it stands for (null: everything; a Date, to the millisecond below),
 * `computed_at` the trip's last recomputation as read with the mark (text; null: none stored).
 */
export interface Mark extends TripKey {
  marked_at: string;
  since: Date | null;
  computed_at: string | null;
}

// ---------------------------------------------------------------------------------------------
// What a round keeps for the next (incremental computation): per trip, the progress of the fixes
// already projected onto its itinerary (compute.ts, TripMemo); per shape, its itinerary.

/** Trips whose computation is kept (those in progress; an ended trip's is dropped), and itineraries. */
const MAX_TRIP_MEMOS = 8_000;
const MAX_ITINERARIES = 5_000;

/** A trip's key in the memos: group, service date and trip. */
const k3 = (k: TripKey) => `${k.group_id}\u0000${k.service_date}\u0000${k.trip_id}`;

class TrackingMemo {
  private readonly trips = new Map<string, TripMemo>();
  private readonly itineraries = new Map<string, Itinerary>();
  private readonly recorded = new Map<string, HeldReports>();

  /** The memo of a trip, most recently used last (the least recent go first). */
  trip(k: TripKey): TripMemo {
    const key = k3(k);
    const m = this.trips.get(key) ?? {};
    this.trips.delete(key);
    this.trips.set(key, m);
    if (this.trips.size > MAX_TRIP_MEMOS) this.trips.delete(this.trips.keys().next().value!);
    return m;
  }

  forget(k: TripKey): void {
    const key = k3(k);
    this.trips.delete(key);
    this.recorded.delete(key);
  }

  /** What this handle's round wrote of a trip and read for it, if its `computedAt` is still the trip's stored one. */
  held(k: TripKey, computedAt: string | null): HeldReports | undefined {
    const h = this.recorded.get(k3(k));
    return h && computedAt !== null && h.computedAt === computedAt ? h : undefined;
  }

  /** Holds a trip's reports as read by a round, and its stop rows as written by it, which stored `computedAt` (least recent go first). */
  hold(k: TripKey, h: HeldReports): void {
    const key = k3(k);
    this.recorded.delete(key);
    this.recorded.set(key, h);
    if (this.recorded.size > MAX_TRIP_MEMOS) this.recorded.delete(this.recorded.keys().next().value!);
  }

  drop(k: TripKey): void {
    this.recorded.delete(k3(k));
  }

  /** The itinerary of a shape of a version (immutable, like the shape). */
  itinerary(groupId: string, gtfsId: string, shapeId: string, shape: readonly ShapePoint[]): Itinerary | undefined {
    if (shape.length < 2) return undefined;
    const key = `${groupId}\n${gtfsId}\n${shapeId}`;
    let it = this.itineraries.get(key);
    if (!it) {
      if (this.itineraries.size >= MAX_ITINERARIES) this.itineraries.clear();
      this.itineraries.set(key, (it = new Itinerary(shape.map((p) => [p.lon, p.lat] as LonLat), shape[0]!.lat)));
    }
    return it;
  }
}

/** A trip's reports as a round read them, its stop rows as the round stored them, and the trip's computed_at it wrote. */
interface HeldReports {
  rec: Recorded;
  stops: readonly StopResult[];
  computedAt: string;
}

/** The tracking memo of a database handle (kept by the handle, made on first use). */
const memoOf = (db: Db) => db.kept.of(TrackingMemo);

// ---------------------------------------------------------------------------------------------
// The round.

const k2 = (date: string, trip: string) => `${date}\u0000${trip}`;

function groupBy<T>(rows: readonly T[], key: (r: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) (out.get(key(r)) ?? out.set(key(r), []).get(key(r))!).push(r);
  return out;
}

/**
 * Recomputes the stored tracking of these trips (any groups and dates) from everything recorded,
 * and clears `marks` (those the caller read) in the same transaction, each unless newer.
 */
export async function recomputeTrips(db: Db, keys: readonly TripKey[], marks: readonly Mark[] = []): Promise<void> {
  const memo = memoOf(db);
  const markOf = new Map(marks.map((m) => [k3(m), m]));
  const results: Computed[] = [];
  for (const [groupId, ofGroup] of groupBy(keys, (k) => k.group_id)) {
    results.push(...(await computeGroup(db, groupId, ofGroup, markOf)));
  }
  let computedAt: string | null;
  try {
    computedAt = await writeRound(db, results, marks);
  } catch (err) {
    for (const r of results) memo.drop(r.key);
    throw err;
  }
  // The reports read are held for the next round of each trip still open, with the computed_at
  // just written: valid while the trip's stored one is still that (no other instance's round since).
  for (const r of results) {
    if (computedAt !== null && r.result && !r.result.end_reported) memo.hold(r.key, { rec: r.rec, stops: r.result.stops, computedAt });
    else memo.drop(r.key);
  }
}

interface Computed {
  key: TripKey;
  result: TripResult | null;
  /** What was recorded for the trip, as computed from. */
  rec: Recorded;
  /** The stop rows to write: those that differ from what this handle's last round stored (all when it holds nothing). */
  changed?: readonly StopResult[];
}

/** A report's identity: its device and client id (and instant: the key of the partitioned tables). */
const idOf = (r: { device_id: string; at: Date }) => `${r.device_id}\u0000${(r as { client_id?: string }).client_id}\u0000${r.at.getTime()}`;

/**
 * The reports held of a trip and those just read from `bound` on, as one list in time order: every
 * report at or after the bound is among those read (reports are never changed or deleted, the
 * window aside), so the held ones not read again are all earlier than every one read. Only the
 * held ones dated from a second before the bound on are looked for among those read, from the end
 * (a margin: a Date drops the microseconds, and its parse may drop one more millisecond).
 */
function merged<R extends { device_id: string; at: Date }>(held: readonly R[], fresh: readonly R[], bound: number): readonly R[] {
  if (fresh.length === 0) return held;
  if (held.length === 0) return fresh;
  let tail = held.length;
  while (tail > 0 && held[tail - 1]!.at.getTime() >= bound - 1000) tail--;
  const out = held.slice(0, tail);
  if (tail < held.length) {
    const again = new Set(fresh.map(idOf));
    for (let i = tail; i < held.length; i++) if (!again.has(idOf(held[i]!))) out.push(held[i]!);
  }
  for (const r of fresh) out.push(r);
  return out;
}

/** The stop rows of `now` that differ from those stored before (by stop_sequence). */
function changedStops(before: readonly StopResult[], now: readonly StopResult[]): StopResult[] {
  const bySeq = new Map(before.map((x) => [x.s.stop_sequence, x]));
  return now.filter((x) => {
    const b = bySeq.get(x.s.stop_sequence);
    return !b || !sameStop(b, x);
  });
}

async function computeGroup(db: Db, groupId: string, keys: readonly TripKey[], markOf: ReadonlyMap<string, Mark>): Promise<Computed[]> {
  const cache = scheduleMemoOf(db);
  const memo = memoOf(db);
  const byDate = groupBy(keys, (k) => k.service_date);
  // The schedule of each date: the instances of the round's trips, the version, the window.
  const days = new Map<string, { gtfsId: string | null; dayStart: Date; instances: Map<string, ScheduledTrip[]>; window: { from: Date; until: Date } }>();
  for (const [date, ofDate] of byDate) {
    const day = await tripsOnServiceDate(db, groupId, date, { tripIds: [...new Set(ofDate.map((k) => k.trip_id))] });
    days.set(date, { gtfsId: day.gtfsId, dayStart: day.dayStart, instances: groupBy(day.trips, (t) => t.trip_id), window: reportWindow(day.dayStart) });
  }
  // Incremental reads: a trip whose reports this handle holds as of the trip's stored computation,
  // and whose mark says from when reports came since (a report's mark keeps the earliest), is read
  // from then on (a millisecond earlier: Dates have no microseconds); any other from its window's start.
  const held = new Map<string, HeldReports>();
  const reads = keys.map((k) => {
    const window = days.get(k.service_date)!.window;
    const m = markOf.get(k3(k));
    const h = m?.since ? memo.held(k, m.computed_at) : undefined;
    if (h) held.set(k2(k.service_date, k.trip_id), h);
    const from = h ? new Date(Math.max(window.from.getTime(), m!.since!.getTime() - 1)) : window.from;
    return { service_date: k.service_date, trip_id: k.trip_id, from };
  });
  const boundOf = new Map(reads.map((r) => [k2(r.service_date, r.trip_id), r.from.getTime()]));
  const from = new Date(Math.min(...reads.map((r) => r.from.getTime())));
  const until = new Date(Math.max(...[...days.values()].map((d) => d.window.until.getTime())));
  const { events, positions, runs, counts } = await selectRecorded(db, groupId, reads, from, until);
  // Each row within its own date's window.
  const inWindow = <R extends { service_date: string; at: Date }>(rows: R[]) =>
    groupBy(rows.filter((r) => {
      const w = days.get(r.service_date)?.window;
      return w !== undefined && r.at >= w.from && r.at < w.until;
    }), (r) => k2(r.service_date, (r as unknown as { trip_id: string }).trip_id));
  const eventsOf = inWindow(events);
  const positionsOf = inWindow(positions);
  const runsOf = inWindow(runs);
  const countsOf = inWindow(counts);

  const recorded = new Map<string, Recorded>();
  const devicesOf = new Map<string, Set<string>>();
  const devices = new Set<string>();
  let first = Infinity;
  let last = -Infinity;
  for (const k of keys) {
    const key = k2(k.service_date, k.trip_id);
    const h = held.get(key)?.rec;
    const bound = boundOf.get(key)!;
    const r: Recorded = {
      events: merged(h?.events ?? [], eventsOf.get(key) ?? [], bound), positions: merged(h?.positions ?? [], positionsOf.get(key) ?? [], bound),
      runs: merged(h?.runs ?? [], runsOf.get(key) ?? [], bound), counts: merged(h?.counts ?? [], countsOf.get(key) ?? [], bound),
    };
    recorded.set(key, r);
    const mine = new Set<string>();
    for (const list of [r.events, r.positions, r.runs, r.counts]) {
      for (const x of list) mine.add(x.device_id);
      // Each list is in time order: its first and last are its earliest and latest.
      if (list.length > 0) {
        first = Math.min(first, list[0]!.at.getTime());
        last = Math.max(last, list[list.length - 1]!.at.getTime());
      }
    }
    devicesOf.set(key, mine);
    for (const d of mine) devices.add(d);
  }

  // The instance each trip's reports name, then the stop times and shapes the cache lacks, per version.
  const instanceOf = new Map<string, ScheduledTrip | undefined>();
  const wantedTrips = new Map<string, Set<string>>();
  for (const k of keys) {
    const day = days.get(k.service_date)!;
    const trip = pickInstance(day.instances.get(k.trip_id) ?? [], reportedStart(recorded.get(k2(k.service_date, k.trip_id))!));
    instanceOf.set(k2(k.service_date, k.trip_id), trip);
    if (trip && day.gtfsId) (wantedTrips.get(day.gtfsId) ?? wantedTrips.set(day.gtfsId, new Set()).get(day.gtfsId)!).add(trip.trip_id);
  }
  const stopTimes = new Map<string, Map<string, StoredStopTimes>>();
  const shapes = new Map<string, Map<string, ShapePoint[]>>();
  for (const [gtfsId, trips] of wantedTrips) {
    stopTimes.set(gtfsId, await cache.stopTimesOf(db, groupId, gtfsId, [...trips]));
    const shapeIds = keys.filter((k) => days.get(k.service_date)!.gtfsId === gtfsId)
      .map((k) => instanceOf.get(k2(k.service_date, k.trip_id))?.shape_id).filter((s): s is string => !!s);
    shapes.set(gtfsId, await cache.shapesOf(db, groupId, gtfsId, shapeIds));
  }

  const duties = devices.size === 0 ? [] : await selectDutiesOfDevices(db, groupId, [...devices], new Date(first), new Date(last));
  const dutiesOf = groupBy(duties, (d) => d.device_id);

  // The computation of a whole network's trips is seconds of JavaScript: given in slices, so the
  // requests waiting (feeds answered from memory, device batches) are answered between two.
  const turn = slices();
  const out: Computed[] = [];
  for (const k of keys) {
    const wait = turn();
    if (wait) await wait;
    const key = k2(k.service_date, k.trip_id);
    const day = days.get(k.service_date)!;
    const trip = instanceOf.get(key);
    const stored = trip && day.gtfsId ? stopTimes.get(day.gtfsId)?.get(trip.trip_id) : undefined;
    const stops = trip && stored ? onServiceDay(stored, day.dayStart, trip.first_departure) : [];
    const shape = trip?.shape_id && day.gtfsId ? (shapes.get(day.gtfsId)?.get(trip.shape_id) ?? []) : [];
    const rec = recorded.get(key)!;
    const mine = [...devicesOf.get(key)!].flatMap((d) => dutiesOf.get(d) ?? []);
    const itinerary = trip?.shape_id && day.gtfsId ? memo.itinerary(groupId, day.gtfsId, trip.shape_id, shape) : undefined;
    const result = computeTrip(rec, { gtfsId: day.gtfsId, trip, stops, shape, ...(itinerary ? { itinerary } : {}) }, mine, memo.trip(k));
    // A trip over (trip_end reported) or with nothing recorded is not computed again soon: its memo goes.
    if (!result || result.end_reported) memo.forget(k);
    const before = held.get(key)?.stops;
    out.push({ key: k, result, rec, ...(result && before ? { changed: changedStops(before, result.stops) } : {}) });
  }
  return out;
}
