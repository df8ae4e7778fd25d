/**
 * The schedule memo's stop times on a service day (gtfs/schedule-memo.ts): the feeds' rebuilds
 * ask for the same trips every few seconds, so a trip's instants are made once per trip, day and
 * start, and are the instants onServiceDay gives.
 */
import { describe, expect, it } from 'vitest';
import { ScheduleMemo } from '../../src/domains/gtfs/schedule-memo.js';
import type { StoredStopTimes } from '../../src/domains/gtfs/service-days.js';

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
