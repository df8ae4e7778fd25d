/**
 * What the readers of the schedule may keep between two reads: a GTFS version never changes once
 * imported (a new import is a new gtfs_id), so its stop times, shapes and the trips of a service
 * date read once stay true. One memo per database handle, shared by the passenger feeds'
 * rebuilds (feeds/network.ts) and the tracking rounds (trips/tracking/round.ts): each reads only
 * what the other has not read yet.
 *
 * Bounded: the stop times are emptied when they would hold more than MAX_TRIPS trips (some 20
 * stops each: tens of megabytes), the shapes past MAX_SHAPES, the days past MAX_DAYS (a few dates
 * per group: yesterday and today).
 */
import type { Db, Queryable } from '../../platform/db/index.js';
import { groupTimezone, onServiceDay, shapesOf, storedStopTimes, tripsOnServiceDate, versionInForce, type ScheduledStopTime, type ServiceDay, type ShapePoint, type StoredStopTimes } from './service-days.js';

export class ScheduleMemo {
  static readonly MAX_TRIPS = 50_000;
  static readonly MAX_SHAPES = 5_000;
  static readonly MAX_DAYS = 16;
  private readonly stopTimes = new Map<string, StoredStopTimes | null>();
  private readonly shapes = new Map<string, ShapePoint[]>();
  /** The days read or being read: callers that ask for a day while it is read share that read. */
  private readonly days = new Map<string, Promise<ServiceDay>>();
  private readonly onDay = new Map<string, readonly ScheduledStopTime[]>();

  /**
   * The whole schedule of a service date (tripsOnServiceDate): the same for a given GTFS version,
   * so read once per version and date (the version in force is asked each time: one query; the
   * group's time zone too when not given). Shared: the caller must not change it. Callers asking
   * while it is read wait for that read: a city's day is 55,000 trips, and the trip objects asked
   * for once a second each read it whole, holding the service's thread 1.4-1.6 s each, until the
   * first read was kept (a city run, 2026-11-30).
   */
  async dayOf(db: Queryable, groupId: string, timezone: string | undefined, date: string): Promise<ServiceDay> {
    timezone ??= await groupTimezone(db, groupId);
    const gtfsId = await versionInForce(db, groupId, date);
    const key = `${groupId}\n${timezone}\n${gtfsId}\n${date}`;
    const known = this.days.get(key);
    // A read that failed is not kept; those who joined it read again on their own (it may have
    // failed with its caller's transaction).
    if (known) return known.catch(() => this.dayOf(db, groupId, timezone, date));
    // The oldest go.
    if (this.days.size >= ScheduleMemo.MAX_DAYS) this.days.delete(this.days.keys().next().value!);
    const reading: Promise<ServiceDay> = tripsOnServiceDate(db, groupId, date, gtfsId === null ? {} : { gtfsId }).then(
      (day) => {
        // The group's zone changed meanwhile: not kept under the zone asked with.
        if (day.timezone !== timezone && this.days.get(key) === reading) this.days.delete(key);
        return day;
      },
      (err: unknown) => {
        if (this.days.get(key) === reading) this.days.delete(key);
        throw err;
      },
    );
    this.days.set(key, reading);
    return reading;
  }

  /** The stored stop times of these trips of a version (absent: a trip the version lacks); reads only those not known yet. */
  async stopTimesOf(db: Queryable, groupId: string, gtfsId: string, tripIds: readonly string[]): Promise<Map<string, StoredStopTimes>> {
    const key = (t: string) => `${groupId}\n${gtfsId}\n${t}`;
    const missing = [...new Set(tripIds)].filter((t) => !this.stopTimes.has(key(t)));
    if (missing.length > 0) {
      if (this.stopTimes.size + missing.length > ScheduleMemo.MAX_TRIPS) this.stopTimes.clear();
      const read = await storedStopTimes(db, groupId, gtfsId, missing);
      for (const t of missing) this.stopTimes.set(key(t), read.get(t) ?? null);
    }
    const out = new Map<string, StoredStopTimes>();
    for (const t of tripIds) {
      const stored = this.stopTimes.get(key(t));
      if (stored) out.set(t, stored);
    }
    return out;
  }

  /**
   * A trip's stored stop times as instants of a service day (onServiceDay; `startTime`: a
   * frequency instance's), made once per trip, day and start: the feeds' rebuilds ask for the same
   * trips every few seconds. Shared: the caller must not change them.
   */
  stopsOnDay(groupId: string, gtfsId: string, tripId: string, stored: StoredStopTimes, dayStart: Date, startTime?: string | number): readonly ScheduledStopTime[] {
    const key = `${groupId}\n${gtfsId}\n${tripId}\n${dayStart.getTime()}\n${startTime ?? ''}`;
    const known = this.onDay.get(key);
    if (known) return known;
    if (this.onDay.size >= ScheduleMemo.MAX_TRIPS) this.onDay.clear();
    const stops = onServiceDay(stored, dayStart, startTime);
    this.onDay.set(key, stops);
    return stops;
  }

  /** The points of these shapes of a version (an unknown shape: no points); reads only those not known yet. */
  async shapesOf(db: Queryable, groupId: string, gtfsId: string, shapeIds: readonly string[]): Promise<Map<string, ShapePoint[]>> {
    const key = (s: string) => `${groupId}\n${gtfsId}\n${s}`;
    const missing = [...new Set(shapeIds)].filter((s) => !this.shapes.has(key(s)));
    if (missing.length > 0) {
      if (this.shapes.size + missing.length > ScheduleMemo.MAX_SHAPES) this.shapes.clear();
      const read = await shapesOf(db, groupId, gtfsId, missing);
      for (const s of missing) this.shapes.set(key(s), read.get(s) ?? []);
    }
    return new Map(shapeIds.map((s) => [s, this.shapes.get(key(s)) ?? []]));
  }
}

/** The schedule memo of a database handle (kept by the handle, made on first use), shared by the feeds and the tracking rounds. */
export function scheduleMemoOf(db: Db): ScheduleMemo {
  return db.kept.of(ScheduleMemo);
}
