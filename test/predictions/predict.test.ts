/**
 * The pure prediction function (src/domains/predictions/predict.ts), on trips and histories written
 * here whose truth is known. Times are seconds since the start of the service day.
 */
import { describe, expect, it } from 'vitest';
import { heldClock, predictBlock, scheduledPassings, type PlannedTrip, type PredictOptions, type SegmentLookup, type SegmentStats } from '../../src/domains/predictions/predict.js';

const h = (hh: number, mm = 0, ss = 0) => hh * 3600 + mm * 60 + ss;

/** S1 → S4, 5 minutes a segment, no dwell, starting at `start`. */
function line(tripId: string, start: number): PlannedTrip {
  return {
    trip_id: tripId,
    pattern_key: 'R1|0',
    stops: ['S1', 'S2', 'S3', 'S4'].map((stop_id, i) => ({ stop_id, stop_sequence: i + 1, arrival: start + i * 300, departure: start + i * 300 })),
  };
}

/** A lookup over a table of (from stop, hour band) → stats. */
function table(entries: Record<string, SegmentStats>): SegmentLookup {
  return (q) => entries[`${q.from_stop_id}>${q.to_stop_id}@${Math.floor(q.at / 3600)}`];
}
const stats = (median: number, spread = 60, n = 20): SegmentStats => ({ n, median_run_s: median, p10_run_s: median - spread / 2, p90_run_s: median + spread / 2, median_dwell_s: null });
const opts = (lookup: SegmentLookup, now: number, o: Partial<PredictOptions> = {}): PredictOptions => ({ now, lookup, minSamples: 5, minLayoverSeconds: 180, ...o });
/** The naive baseline: the current delay held constant. */
const naive = (trip: PlannedTrip, passedIndex: number, at: number) => trip.stops.slice(passedIndex + 1).map((s) => s.departure! + (at - trip.stops[passedIndex]!.departure!));

describe('predictBlock', () => {
  it('a segment 3 minutes slower at 8 am on the history is predicted (exact on a noise-free history); the naive baseline misses it by 180 s', () => {
    const trip = line('T1', h(8));
    const lookup = table({ 'S1>S2@8': stats(300), 'S2>S3@8': stats(480), 'S3>S4@8': stats(300) });
    const [p] = predictBlock([trip], { kind: 'passed', stop_sequence: 1, at: h(8, 1) }, opts(lookup, h(8, 1)));
    expect(p!.stops.map((s) => s.departure)).toEqual([h(8, 6), h(8, 14), h(8, 19)]);
    expect(p!.stops.every((s) => s.basis === 'history')).toBe(true);
    const base = naive(trip, 0, h(8, 1));
    expect(base[2]! - h(8, 19)).toBe(-180);
  });

  it('a late trip does not recover unless the history says so', () => {
    const trip = line('T1', h(8));
    const asScheduled = table({ 'S2>S3@8': stats(300), 'S3>S4@8': stats(300) });
    const [late] = predictBlock([trip], { kind: 'passed', stop_sequence: 2, at: h(8, 12) }, opts(asScheduled, h(8, 12)));
    expect(late!.stops.map((s) => s.departure)).toEqual([h(8, 17), h(8, 22)]); // 7 minutes late throughout
    const faster = table({ 'S2>S3@8': stats(240), 'S3>S4@8': stats(240) });
    const [recovering] = predictBlock([trip], { kind: 'passed', stop_sequence: 2, at: h(8, 12) }, opts(faster, h(8, 12)));
    expect(recovering!.stops.map((s) => s.departure)).toEqual([h(8, 16), h(8, 20)]);
  });

  it('a stop not passed yet is predicted no earlier than now', () => {
    const trip = line('T1', h(8));
    const [p] = predictBlock([trip], { kind: 'passed', stop_sequence: 1, at: h(8) }, opts(table({}), h(8, 9)));
    expect(p!.stops[0]!.departure).toBe(h(8, 9));
    expect(p!.stops[1]!.departure).toBe(h(8, 14));
  });

  it('a stop overdue is predicted at the held clock given (heldNow); a stop still ahead of now, even before it, keeps its own time; a held clock before now is not used', () => {
    const trip = line('T1', h(8));
    // Left S1 at 08:00; S2 due at 08:05. At 08:09, S2 is overdue: held to 08:09:12, S3 five minutes after.
    const [held] = predictBlock([trip], { kind: 'passed', stop_sequence: 1, at: h(8) }, opts(table({}), h(8, 9), { heldNow: h(8, 9, 12) }));
    expect(held!.stops.map((s) => s.departure)).toEqual([h(8, 9, 12), h(8, 14, 12), h(8, 19, 12)]);
    // At 08:04:55, S2 (08:05) is still ahead: its time is kept though the held clock is later.
    const [ahead] = predictBlock([trip], { kind: 'passed', stop_sequence: 1, at: h(8) }, opts(table({}), h(8, 4, 55), { heldNow: h(8, 5, 7) }));
    expect(ahead!.stops.map((s) => s.departure)).toEqual([h(8, 5), h(8, 10), h(8, 15)]);
    // A held clock before now: now.
    const [early] = predictBlock([trip], { kind: 'passed', stop_sequence: 1, at: h(8) }, opts(table({}), h(8, 9), { heldNow: h(8, 8) }));
    expect(early!.stops[0]!.departure).toBe(h(8, 9));
    // A bus late for its start at the terminal, and the block's next trip it makes late: held alike.
    const [late, next] = predictBlock([trip, line('T2', h(8, 16))], { kind: 'at_terminal' }, opts(table({}), h(8, 4), { heldNow: h(8, 4, 9), minLayoverSeconds: 60 }));
    expect(late!.stops.map((s) => s.departure)).toEqual([h(8, 4, 9), h(8, 9, 9), h(8, 14, 9), h(8, 19, 9)]);
    expect(next!.stops[0]!.departure).toBe(h(8, 20, 9));
  });

  it('heldClock: within the step after now (15 s), the same through a key\'s step then a step later, the phases of 3,000 keys spread over the step; a step of 1 s is now itself', () => {
    const step = 15;
    const now = h(8, 30) + 0.25;
    const keys = Array.from({ length: 3000 }, (_, i) => `trip-${i}`);
    const phases = new Map<number, number>();
    for (const key of keys) {
      const at = heldClock(now, key, step);
      expect(at).toBeGreaterThanOrEqual(now);
      expect(at).toBeLessThan(now + step);
      expect(Number.isInteger(at)).toBe(true);
      // Every instant up to it gives it; the instant after, a step later.
      for (let t = now; t <= at; t += 0.5) expect(heldClock(t, key, step)).toBe(at);
      expect(heldClock(at + 0.001, key, step)).toBe(at + step);
      phases.set(at % step, (phases.get(at % step) ?? 0) + 1);
    }
    // 200 keys a phase on average: each phase holds at least half that (a block's rebuild moves a share of the network, not all of it).
    expect(phases.size).toBe(step);
    for (const n of phases.values()) expect(n).toBeGreaterThan(100);
    expect(heldClock(now, 'trip-1', 1)).toBe(now);
  });

  it('published times are whole seconds a second apart at least from stop to stop (GTFS-RT E022): stops held to now, a segment of 0 s, fractional medians', () => {
    // S2 and S3 at the same minute in the timetable; the bus left S1 at 08:00 and nothing since (a GPS gap): at 08:30, S2 and S3 are passed "now" at the earliest.
    const trip: PlannedTrip = { trip_id: 'T1', pattern_key: 'R1|0', stops: [[8, 0], [8, 5], [8, 5], [8, 10]].map(([hh, mm], i) => ({ stop_id: `S${i + 1}`, stop_sequence: i + 1, arrival: h(hh!, mm!), departure: h(hh!, mm!) })) };
    const [held] = predictBlock([trip], { kind: 'passed', stop_sequence: 1, at: h(8) }, opts(table({}), h(8, 30)));
    expect(held!.stops.map((s) => [s.arrival, s.departure])).toEqual([[h(8, 30), h(8, 30)], [h(8, 30, 1), h(8, 30, 1)], [h(8, 35), h(8, 35)]]);
    // Learned medians of 0.4 s between stops, from 08:00:00.3: rounded, then a second apart.
    const [fractional] = predictBlock([line('T2', h(8))], { kind: 'passed', stop_sequence: 1, at: h(8) + 0.3 }, opts(table({ 'S1>S2@8': stats(0.4, 0), 'S2>S3@8': stats(0.4, 0), 'S3>S4@8': stats(0.4, 0) }), h(8)));
    expect(fractional!.stops.map((s) => [s.arrival, s.departure])).toEqual([[h(8, 0, 1), h(8, 0, 1)], [h(8, 0, 2), h(8, 0, 2)], [h(8, 0, 3), h(8, 0, 3)]]);
  });

  it('terminal holding: a bus waiting at the first stop is not predicted to leave before the scheduled start (exact)', () => {
    const trip = line('T1', h(8));
    const fast = table({ 'S1>S2@8': stats(200), 'S2>S3@8': stats(200), 'S3>S4@8': stats(200) });
    const [p] = predictBlock([trip], { kind: 'at_terminal' }, opts(fast, h(7, 50)));
    expect(p!.stops[0]).toMatchObject({ stop_sequence: 1, departure: h(8) });
    expect(p!.stops[1]!.departure).toBe(h(8) + 200);
    const [standing] = predictBlock([trip], { kind: 'at_stop', stop_sequence: 1, since: h(7, 40) }, opts(fast, h(7, 50)));
    expect(standing!.stops[0]!.departure).toBe(h(8));
    // Late for its start: leaves now.
    const [late] = predictBlock([trip], { kind: 'at_terminal' }, opts(fast, h(8, 4)));
    expect(late!.stops[0]!.departure).toBe(h(8, 4));
  });

  it('block propagation: the next trip of the block starts no earlier than the predicted arrival plus the minimum layover (exact)', () => {
    const first = line('T1', h(8)); // ends 08:15
    const next = line('T2', h(8, 17)); // scheduled 2 minutes after
    const lookup = table({});
    const [a, b] = predictBlock([first, next], { kind: 'passed', stop_sequence: 2, at: h(8, 10) }, opts(lookup, h(8, 10)));
    expect(a!.stops[a!.stops.length - 1]!.arrival).toBe(h(8, 20)); // 5 minutes late
    expect(b!.stops[0]!.departure).toBe(h(8, 23)); // 08:20 + 3 min layover, not 08:17
    expect(b!.stops.map((s) => s.departure)).toEqual([h(8, 23), h(8, 28), h(8, 33), h(8, 38)]);
    // With enough slack the next trip keeps its schedule, and its uncertainty shrinks by the slack.
    const later = line('T3', h(9));
    const [, c] = predictBlock([first, later], { kind: 'passed', stop_sequence: 2, at: h(8, 10) }, opts(lookup, h(8, 10)));
    expect(c!.stops[0]!.departure).toBe(h(9));
    expect(c!.stops[0]!.uncertainty).toBe(0);
  });

  it('a trip whose vehicle passed the last stop yields nothing, and the block goes on from its end', () => {
    const [a, b] = predictBlock([line('T1', h(8)), line('T2', h(8, 17))], { kind: 'passed', stop_sequence: 4, at: h(8, 16) }, opts(table({}), h(8, 16)));
    expect(a!.stops).toEqual([]);
    expect(b!.stops[0]!.departure).toBe(h(8, 19));
  });

  it('thin history falls back to the schedule', () => {
    const trip = line('T1', h(8));
    const thin = table({ 'S1>S2@8': stats(600, 60, 4) });
    const [p] = predictBlock([trip], { kind: 'passed', stop_sequence: 1, at: h(8) }, opts(thin, h(8)));
    expect(p!.stops[0]).toMatchObject({ departure: h(8, 5), basis: 'schedule' });
    expect(p!.stops[0]!.uncertainty).toBe(45); // 15 % of 300 s
  });

  it('the uncertainty widens with the residual spread, and along the trip', () => {
    const trip = line('T1', h(8));
    const narrow = table({ 'S1>S2@8': stats(300, 30), 'S2>S3@8': stats(300, 30), 'S3>S4@8': stats(300, 30) });
    const wide = table({ 'S1>S2@8': stats(300, 240), 'S2>S3@8': stats(300, 240), 'S3>S4@8': stats(300, 240) });
    const [n] = predictBlock([trip], { kind: 'passed', stop_sequence: 1, at: h(8) }, opts(narrow, h(8)));
    const [w] = predictBlock([trip], { kind: 'passed', stop_sequence: 1, at: h(8) }, opts(wide, h(8)));
    expect(n!.stops.map((s) => s.uncertainty)).toEqual([12, 17, 20]); // 30 / 2.563 × √k
    expect(w!.stops.map((s) => s.uncertainty)).toEqual([94, 132, 162]);
  });

  it('the time band is that of the predicted departure from each segment', () => {
    // Leaving S1 at 07:58, S2 at 08:03: S2→S3 takes its 8 am time.
    const trip = line('T1', h(7, 58));
    const lookup = table({ 'S2>S3@7': stats(300), 'S2>S3@8': stats(480) });
    const [p] = predictBlock([trip], { kind: 'passed', stop_sequence: 1, at: h(7, 58) }, opts(lookup, h(7, 58)));
    expect(p!.stops[1]!.departure).toBe(h(8, 11));
  });

  it('a bus standing at a stop leaves after the dwell learned there (else the scheduled one), not before now', () => {
    const trip = line('T1', h(8));
    const dwelling = table({ 'S1>S2@8': { ...stats(300), median_dwell_s: 90 } });
    const [p] = predictBlock([trip], { kind: 'at_stop', stop_sequence: 2, since: h(8, 5) }, opts(dwelling, h(8, 5, 10)));
    expect(p!.stops[0]).toMatchObject({ stop_sequence: 2, arrival: h(8, 5), departure: h(8, 6, 30) });
    expect(p!.stops[1]!.departure).toBe(h(8, 11, 30));
    const [late] = predictBlock([trip], { kind: 'at_stop', stop_sequence: 2, since: h(8, 5) }, opts(dwelling, h(8, 8)));
    expect(late!.stops[0]!.departure).toBe(h(8, 8));
    const [unlearned] = predictBlock([trip], { kind: 'at_stop', stop_sequence: 2, since: h(8, 5) }, opts(table({}), h(8, 5)));
    expect(unlearned!.stops[0]!.departure).toBe(h(8, 5)); // the schedule has no dwell there
  });

  it('between two stops, only the rest of the segment is left to run', () => {
    const [p] = predictBlock([line('T1', h(8))], { kind: 'between', stop_sequence: 1, fraction: 0.6, at: h(8, 3) }, opts(table({}), h(8, 3)));
    expect(p!.stops[0]!.departure).toBe(h(8, 5));
  });

  it('arrivals come before departures by the dwell', () => {
    const trip: PlannedTrip = { trip_id: 'T', pattern_key: 'R1|0', stops: [
      { stop_id: 'S1', stop_sequence: 1, arrival: h(8), departure: h(8) },
      { stop_id: 'S2', stop_sequence: 2, arrival: h(8, 10), departure: h(8, 11) },
      { stop_id: 'S3', stop_sequence: 3, arrival: h(8, 20), departure: h(8, 20) },
    ] };
    const [p] = predictBlock([trip], { kind: 'passed', stop_sequence: 1, at: h(8) }, opts(table({}), h(8)));
    expect(p!.stops.map((s) => [s.arrival, s.departure])).toEqual([[h(8, 10), h(8, 11)], [h(8, 20), h(8, 20)]]);
  });
});

describe('scheduledPassings', () => {
  it('interpolates untimed stops and takes the arrival of the last stop', () => {
    expect(scheduledPassings([
      { stop_id: 'a', stop_sequence: 1, arrival: 0, departure: 10 },
      { stop_id: 'b', stop_sequence: 2, arrival: null, departure: null },
      { stop_id: 'c', stop_sequence: 3, arrival: 100, departure: 110 },
      { stop_id: 'd', stop_sequence: 4, arrival: 200, departure: 220 },
    ])).toEqual([10, 60, 110, 200]);
  });
});
