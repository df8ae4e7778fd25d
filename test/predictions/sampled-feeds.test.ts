/**
 * The prediction sampler samples what TripUpdates serves (predictions/samples.ts): the feeds'
 * last snapshot while it is recent, on whichever thread builds it (the service's on PGlite, the
 * feeds' worker on PostgreSQL), and a prediction made anew once the snapshot is older than
 * SERVED_WITHIN_MS. The truth is the TripUpdates feed as a consumer decodes it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLES_YIELD_MS, SERVED_WITHIN_MS, recordSamples, samplePredictions } from '../../src/domains/predictions/samples.js';
import { predictTrips } from '../../src/domains/predictions/service.js';
import { item, newDevice, send } from '../helpers/actual.js';
import { eventually, feedFixture, readFeed, type FeedFixture } from '../feeds/fixture.js';

let f: FeedFixture;
beforeAll(async () => {
  f = await feedFixture();
});
afterAll(async () => f?.t.close());

const DATE = '2026-03-10';

/** The samples recorded, as [trip, stop_sequence, predicted arrival (s), horizon (s)], then deleted. */
async function taken(): Promise<[string, number, number, number][]> {
  const r = await f.t.db.query<{ trip_id: string; stop_sequence: number; predicted_arrival_at: Date; horizon_s: number }>(
    'SELECT trip_id, stop_sequence, predicted_arrival_at, horizon_s FROM prediction_samples WHERE group_id = $1 ORDER BY trip_id, stop_sequence', [f.g]);
  await f.t.db.query('DELETE FROM prediction_sample_sets WHERE group_id = $1', [f.g]);
  return r.map((x) => [x.trip_id, x.stop_sequence, new Date(x.predicted_arrival_at).getTime() / 1000, x.horizon_s]);
}

const tracked = () => eventually(async () => (await f.t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM trip_tracking_dirty'))[0]!.n === 0, 'the tracking rounds done');

describe('prediction sampler and the feeds', () => {
  it('samples the TripUpdates a consumer is served while the snapshot is recent, and predicts anew once it is older than SERVED_WITHIN_MS', async () => {
    // T3 (08:30 local, 07:30Z; then T4 on block B2) left S1 on time; the clock at 07:35Z.
    const d = await newDevice(f.t, f.g);
    expect((await send(f.t, f.g, d.auth, [
      item('trip_start', '2026-03-10T07:29:00Z', { trip_id: 'T3', service_date: DATE }),
      item('trip_event', '2026-03-10T07:30:00Z', { trip_id: 'T3', service_date: DATE, event: 'departure', stop_id: 'S1', stop_sequence: 1, gps_valid: true }),
    ])).json.rejected).toEqual([]);
    await tracked();
    const built = f.clock.now();
    const feed = (await readFeed(f, 'trip-updates')).message!;
    expect(feed.header.timestamp).toBe(built.getTime() / 1000);
    // What a consumer was served: each stop's predicted arrival, of the trips in TripUpdates.
    const served = new Map<string, number>();
    for (const e of feed.entity) for (const u of e.tripUpdate!.stopTimeUpdate ?? []) if (u.arrival?.time) served.set(`${e.tripUpdate!.trip.tripId}/${u.stopSequence}`, Number(u.arrival.time));
    expect([...served.keys()]).toContain('T3/2');

    // 30 s later T3 passes S2 five minutes early: a prediction made now moves S3; the snapshot still tells the old one.
    f.clock.advance(30_000);
    expect((await send(f.t, f.g, d.auth, [
      item('trip_event', '2026-03-10T07:35:20Z', { trip_id: 'T3', service_date: DATE, event: 'departure', stop_id: 'S2', stop_sequence: 2, gps_valid: true }),
    ])).json.rejected).toEqual([]);
    await tracked();
    const sampledAt = f.clock.now();
    const anew = (await predictTrips(f.t.ctx, f.g, DATE, { now: sampledAt })).find((p) => p.trip_id === 'T3')!;
    const s3 = anew.stops.find((s) => s.stop_sequence === 3)!;
    expect(Math.abs(s3.arrival_at.getTime() / 1000 - served.get('T3/3')!)).toBeGreaterThanOrEqual(60);

    expect(await samplePredictions(f.t.ctx, { now: sampledAt, groupId: f.g })).toBeGreaterThan(0);
    const fromSnapshot = await taken();
    // Every sample is a stop TripUpdates served, at the time served, its horizon from the sampling time (T4 and beyond: past the 60-minute horizon bound).
    expect(fromSnapshot.length).toBeGreaterThan(0);
    for (const [trip, seq, arrival, horizon] of fromSnapshot) {
      expect(served.get(`${trip}/${seq}`)).toBe(arrival);
      expect(horizon).toBe(Math.round(arrival - sampledAt.getTime() / 1000));
    }
    expect(fromSnapshot.map(([trip, seq]) => `${trip}/${seq}`)).toEqual(
      [...served.keys()].filter((k) => served.get(k)! - sampledAt.getTime() / 1000 <= f.t.ctx.config.predictionSamples.maxHorizonMinutes * 60).sort());

    // The snapshot older than SERVED_WITHIN_MS (no consumer read the feeds since): predicted anew.
    f.clock.set(new Date(built.getTime() + SERVED_WITHIN_MS + 1000));
    const later = f.clock.now();
    const again = (await predictTrips(f.t.ctx, f.g, DATE, { now: later })).filter((p) => p.from_trip_id !== null);
    expect(await samplePredictions(f.t.ctx, { now: later, groupId: f.g })).toBeGreaterThan(0);
    const predicted = await taken();
    const want = again.flatMap((p) => p.stops.filter((s) => (s.arrival_at.getTime() - later.getTime()) / 1000 <= f.t.ctx.config.predictionSamples.maxHorizonMinutes * 60)
      .map((s) => [p.trip_id, s.stop_sequence, s.arrival_at.getTime() / 1000, Math.round((s.arrival_at.getTime() - later.getTime()) / 1000)]))
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])) || Number(a[1]) - Number(b[1]));
    expect(predicted).toEqual(want);
    expect(predicted.find(([trip, seq]) => trip === 'T3' && seq === 3)![2]).not.toBe(served.get('T3/3'));
  });

  it('a round records nothing while the thread says it is busy (a feeds rebuild on the worker), and all of it once it is not; a round waits yieldMs (SAMPLES_YIELD_MS) at most in all', async () => {
    // T3 in progress (the test above): a round predicts its stops ahead and those of T4 (the next trip of its block: three hours ahead), one statement per trip (chunkRows 1: a chunk is written once a trip's samples reach it).
    const now = f.clock.now();
    const ask = { now: now.getTime(), groupId: f.g, maxHorizonS: 3 * 3600, chunkRows: 1 };
    await taken();
    let release!: () => void;
    const rebuild = new Promise<void>((r) => (release = r));
    let building = true;
    let asked!: () => void;
    const firstAsked = new Promise<void>((r) => (asked = r));
    let asks = 0;
    const busy = () => {
      asks++;
      asked();
      return building ? rebuild : undefined;
    };
    const round = recordSamples(f.t.ctx, ask, { busy });
    await firstAsked;
    // Asked before its first statement: nothing recorded while the rebuild is under way.
    expect(await taken()).toEqual([]);
    building = false;
    release();
    const recorded = await round;
    expect(recorded).toBeGreaterThan(1);
    const rows = await taken();
    expect(rows.length).toBe(recorded);
    // Asked again before each statement (one per trip), and once more as the rebuild ended.
    expect(new Set(rows.map(([trip]) => trip)).size).toBeGreaterThan(1);
    expect(asks).toBeGreaterThanOrEqual(new Set(rows.map(([trip]) => trip)).size + 1);
    // The same rows as a round nothing held records.
    expect(await recordSamples(f.t.ctx, { ...ask, chunkRows: 1000 })).toBe(recorded);
    expect(await taken()).toEqual(rows);

    // A thread busy for good (rebuilds back to back): the round goes on once it waited yieldMs in all, and records the same.
    const never = new Promise<void>(() => undefined);
    expect(await recordSamples(f.t.ctx, ask, { busy: () => never, yieldMs: 50 })).toBe(recorded);
    expect(await taken()).toEqual(rows);
    // The service's bound lets a round end within its minute.
    expect(SAMPLES_YIELD_MS).toBeLessThan(60_000);
  });
});
