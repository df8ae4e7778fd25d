/**
 * The schedule memo's stop times on a service day (gtfs/schedule-memo.ts): the feeds' rebuilds
 * ask for the same trips every few seconds, so a trip's instants are made once per trip, day and
 * start, and are the instants onServiceDay gives. A service date's schedule is read once per
 * version and date, however many ask for it at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScheduleMemo } from '../../src/domains/gtfs/schedule-memo.js';
import type { StoredStopTimes } from '../../src/domains/gtfs/service-days.js';
import type { Queryable } from '../../src/platform/db/index.js';
import { feedFixture, type FeedFixture } from '../feeds/fixture.js';

const stop = (seq: number, seconds: number) => ({
  stop_id: `S${seq}`, stop_sequence: seq, stop_name: null, stop_lat: null, stop_lon: null, stop_headsign: null,
  arrival_time: seconds, departure_time: seconds + 30, pickup_type: null, drop_off_type: null, timepoint: null, shape_dist_traveled: null,
});
// 08:00:00 and 08:05:00 of the service day.
const stored: StoredStopTimes = { first_departure: 8 * 3600, stops: [stop(1, 8 * 3600), stop(2, 8 * 3600 + 300)] };
const dayStart = new Date('2026-03-16T04:00:00Z');

describe('ScheduleMemo.stopsOnDay', () => {
  it('gives the instants of the day (day start + seconds), shifted to a frequency instance start', () => {
    const memo = new ScheduleMemo();
    expect(memo.stopsOnDay('g', 'v1', 'T1', stored, dayStart).map((s) => [s.arrival_at?.toISOString(), s.departure_at?.toISOString()])).toEqual([
      ['2026-03-16T12:00:00.000Z', '2026-03-16T12:00:30.000Z'],
      ['2026-03-16T12:05:00.000Z', '2026-03-16T12:05:30.000Z'],
    ]);
    // The instance starting at 09:10:00: 70 minutes later.
    expect(memo.stopsOnDay('g', 'v1', 'T1', stored, dayStart, '09:10:00').map((s) => s.arrival_at?.toISOString())).toEqual(['2026-03-16T13:10:00.000Z', '2026-03-16T13:15:00.000Z']);
  });

  it('makes a trip day and start once, and each other one apart', () => {
    const memo = new ScheduleMemo();
    const first = memo.stopsOnDay('g', 'v1', 'T1', stored, dayStart);
    expect(memo.stopsOnDay('g', 'v1', 'T1', stored, dayStart)).toBe(first);
    const nextDay = new Date(dayStart.getTime() + 86_400_000);
    for (const other of [
      memo.stopsOnDay('g', 'v1', 'T1', stored, nextDay),
      memo.stopsOnDay('g', 'v2', 'T1', stored, dayStart),
      memo.stopsOnDay('g', 'v1', 'T2', stored, dayStart),
      memo.stopsOnDay('g', 'v1', 'T1', stored, dayStart, '09:10:00'),
    ]) expect(other).not.toBe(first);
    expect(memo.stopsOnDay('g', 'v1', 'T1', stored, nextDay)[0]!.arrival_at!.getTime() - first[0]!.arrival_at!.getTime()).toBe(86_400_000);
  });
});

describe('ScheduleMemo.dayOf', () => {
  let f: FeedFixture;
  beforeAll(async () => {
    f = await feedFixture();
  });
  afterAll(async () => f?.t.close());

  /** The fixture's database, its statements reading the day's trips counted, the first `failing` of them failed. */
  function counted(failing = 0): { db: Queryable; reads: () => number } {
    let reads = 0;
    const db: Queryable = {
      query: async (text, params) => {
        if (/JOIN gtfs_trips/.test(text) && /FROM gtfs_calendars/.test(text) && ++reads <= failing) throw new Error('the read of the day failed');
        return f.t.db.query(text, params);
      },
      exec: (script) => f.t.db.exec(script),
      copyFrom: (table, columns, chunks) => f.t.db.copyFrom(table, columns, chunks),
    };
    return { db, reads: () => reads };
  }

  it('callers asking for a day while it is read share that read: one read, one day (regression: each read the whole day, a city\'s 55,000 trips, until the first was kept)', async () => {
    const memo = new ScheduleMemo();
    const { db, reads } = counted();
    const days = await Promise.all([1, 2, 3, 4].map(() => memo.dayOf(db, f.g, undefined, '2026-03-10')));
    expect(days[0]!.trips.map((t) => t.trip_id).sort()).toEqual(['T1', 'T2', 'T3', 'T4']);
    expect(new Set(days).size).toBe(1);
    expect(reads()).toBe(1);
    expect(await memo.dayOf(db, f.g, undefined, '2026-03-10')).toBe(days[0]);
    expect(reads()).toBe(1);
  });

  it('a read that failed is not kept: its caller gets the error, those who joined it read again on their own', async () => {
    const memo = new ScheduleMemo();
    const { db, reads } = counted(1);
    // Which of the two reads (the other joins) is the order their first statements come back in.
    const settled = await Promise.allSettled([memo.dayOf(db, f.g, undefined, '2026-03-10'), memo.dayOf(db, f.g, undefined, '2026-03-10')]);
    const failed = settled.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
    const days = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toContain('the read of the day failed');
    expect(days.map((d) => d.trips.length)).toEqual([4]);
    expect(reads()).toBe(2);
    expect(await memo.dayOf(db, f.g, undefined, '2026-03-10')).toBe(days[0]);
    expect(reads()).toBe(2);
  });
});
