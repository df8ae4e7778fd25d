/**
 * Issue 16: the feeds' rebuild must not grow with the history recorded. It reads the observed
 * delays of the whole network in one query bounded to the trips still running (scheduled end plus
 * delay within PAST_TRIP_SECONDS of now), so the finished trips of today and every trip of
 * yesterday are not read at all; the feeds show the same as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { observedDelays } from '../../src/domains/trips/delays.js';
import { PAST_TRIP_SECONDS } from '../../src/domains/feeds/network.js';
import { item, newDevice, send } from '../helpers/actual.js';
import { feedFixture, readFeed, settled, type FeedFixture } from './fixture.js';

let f: FeedFixture;
beforeAll(async () => {
  f = await feedFixture();
  // 10:05 local: T1 (08:00-08:20) ended long ago, T4 (10:00-10:20) runs.
  f.clock.set('2026-03-10T09:05:00Z');
  const d = await newDevice(f.t, f.g);
  const passed = (tripId: string, date: string, at: string) => item('trip_event', at, { trip_id: tripId, service_date: date, event: 'stop_passed', stop_id: 'S1', stop_sequence: 1, gps_valid: true });
  const r = await send(f.t, f.g, d.auth, [
    // Yesterday (Monday), all day: history.
    passed('T1', '2026-03-09', '2026-03-09T07:03:00Z'),
    passed('T4', '2026-03-09', '2026-03-09T09:03:00Z'),
    // Today: T1 finished, T4 running 2 minutes late.
    passed('T1', '2026-03-10', '2026-03-10T07:01:00Z'),
    passed('T4', '2026-03-10', '2026-03-10T09:02:00Z'),
  ]);
  expect(r.json.rejected).toEqual([]);
});
afterAll(async () => f?.t.close());

describe('the feeds rebuild reads only the trips still running', () => {
  it('the delays read are those of trips still running, not of the finished trips of today nor of yesterday (regression: the rebuild grew with history)', async () => {
    const now = f.clock.now();
    const delays = await observedDelays(f.t.db, f.g, ['2026-03-09', '2026-03-10'], new Date(now.getTime() - PAST_TRIP_SECONDS * 1000));
    expect(delays.map((d) => [d.service_date, d.trip_id, d.delay_seconds, d.stop_id])).toEqual([['2026-03-10', 'T4', 120, 'S1']]);
    // Every trip reported on is tracked, yesterday's included: the bound is in the read, not in the data.
    const tracked = await f.t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM trip_tracking WHERE group_id = $1 AND delay_seconds IS NOT NULL', [f.g]);
    expect(tracked[0]!.n).toBe(4);

    await settled(f);
    const tu = (await readFeed(f, 'trip-updates')).message!;
    expect(tu.entity.map((e: any) => [e.id, e.tripUpdate.delay])).toEqual([['trip:20260310:T4', 120]]);
  });
});
