/**
 * The journeys the feeds tell (issue #17, section 2): SIRI EstimatedTimetable covers every journey
 * in progress or scheduled to run within its horizon (FEEDS_ET_HORIZON_MINUTES, 60 by default),
 * on time or not, including those whose vehicle is not known yet (Monitored false, their expected
 * times predicted from the scheduled departure: with no history, the schedule itself); GTFS-Realtime
 * TripUpdates tells the journeys whose vehicle is known: in progress, the next trips of their
 * blocks, and a trip about to start whose vehicle reported on it while laying over.
 *
 * The shared network (fixture.ts), Tuesday 2026-03-10, clock 08:35 local: T1 08:00–08:20 and
 * T2 09:00–09:30 (block B1), T3 08:30–08:50 and T4 10:00–10:20 (block B2). No history: every
 * running time is the schedule's, so the truth of each expected time is the timetable (or the
 * timetable after the minimum layover).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create } from 'xmlbuilder2';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { feedFixture, readFeed, secs, settled, type FeedFixture } from './fixture.js';
import { siriErrors } from './siri-xsd.js';

const list = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);
const local = (hhmm: string) => `2026-03-10T${hhmm}:00+01:00`;

async function et(f: FeedFixture) {
  const res = await f.t.app.inject({ url: `/api/v4/groups/${f.g}/siri/estimated-timetable` });
  if (res.statusCode === 204) return { text: null, journeys: new Map<string, any>() };
  expect(res.statusCode).toBe(200);
  const frame = (create(res.body).end({ format: 'object' }) as any).Siri.ServiceDelivery.EstimatedTimetableDelivery.EstimatedJourneyVersionFrame;
  return { text: res.body, journeys: new Map((list(frame.EstimatedVehicleJourney) as any[]).map((j) => [j.FramedVehicleJourneyRef.DatedVehicleJourneyRef as string, j])) };
}
const calls = (j: any) => (list(j.EstimatedCalls.EstimatedCall) as any[]).map((c) => [c.StopPointRef, c.ExpectedArrivalTime, c.ExpectedDepartureTime]);
const tripUpdates = async (f: FeedFixture) => new Map(((await readFeed(f, 'trip-updates')).message!.entity as any[]).map((e) => [e.tripUpdate.trip.tripId as string, e.tripUpdate]));

/** A bus signs on and reports `items` (trip events, positions) for the fixture's date. */
async function bus(f: FeedFixture, items: unknown[]) {
  const device = await newDevice(f.t, f.g);
  const r = await send(f.t, f.g, device.auth, [item('sign_on', '2026-03-10T06:50:00Z', { driver_id: await newDriver(f.t, f.g), vehicle_id: await newVehicle(f.t, f.g) }), ...items]);
  expect(r.json.rejected).toEqual([]);
}

describe('the journeys of the feeds, with the default 60-minute horizon', () => {
  let f: FeedFixture;
  beforeAll(async () => {
    f = await feedFixture();
    // A bus on T3 left S1 on time at 08:30; nothing is reported on block B1 (T1, T2).
    await bus(f, [item('trip_event', '2026-03-10T07:30:00Z', { trip_id: 'T3', service_date: '2026-03-10', event: 'stop_passed', stop_id: 'S1', stop_sequence: 1, gps_valid: true })]);
  });
  afterAll(async () => f?.t.close());

  it('ET: the journey in progress and the next of its block are monitored; the journey within the horizon whose vehicle is not known is there, not monitored, at its scheduled times (exact, no history)', async () => {
    await settled(f);
    const { text, journeys } = await et(f);
    // T1 ended at 08:20 (before now): not there. T4 (10:00) is beyond the horizon but the next trip of T3's block, told after T3 (docs/feeds.md).
    expect([...journeys.keys()]).toEqual(['T3', 'T4', 'T2']);
    expect([...journeys.values()].map((j) => j.Monitored)).toEqual(['true', 'true', 'false']);
    expect(calls(journeys.get('T2'))).toEqual([
      ['S1', local('09:00'), local('09:00')], ['S2', local('09:10'), local('09:11')], ['S3', local('09:20'), local('09:20')], ['S4', local('09:30'), local('09:30')],
    ]);
    // T3 on time: S1 observed, S2 and S3 at their scheduled times; T4 keeps its timetable (plenty of layover).
    expect(calls(journeys.get('T3'))).toEqual([['S1', local('08:30'), local('08:30')], ['S2', local('08:40'), local('08:41')], ['S3', local('08:50'), local('08:50')]]);
    expect(calls(journeys.get('T4'))[0]).toEqual(['S1', local('10:00'), local('10:00')]);
    expect(await siriErrors(text!)).toEqual([]);
  });

  it('TripUpdates: the journeys whose vehicle is known only (T3 and the next trip of its block); StopMonitoring gives T2 the same expected time as ET, not monitored', async () => {
    expect([...(await tripUpdates(f)).keys()]).toEqual(['T3', 'T4']);
    const res = await f.t.app.inject({ url: `/api/v4/groups/${f.g}/siri/stop-monitoring?MonitoringRef=S1&PreviewInterval=PT1H` });
    expect(res.statusCode).toBe(200);
    const visits = list((create(res.body).end({ format: 'object' }) as any).Siri.ServiceDelivery.StopMonitoringDelivery.MonitoredStopVisit) as any[];
    const t2 = visits.map((v) => v.MonitoredVehicleJourney).find((j) => j.FramedVehicleJourneyRef.DatedVehicleJourneyRef === 'T2');
    expect(t2).toMatchObject({ Monitored: 'false', MonitoredCall: { ExpectedDepartureTime: local('09:00'), AimedDepartureTime: local('09:00') } });
    expect(await siriErrors(res.body)).toEqual([]);
  });

  it('a trip about to start whose vehicle reported on it while laying over: in TripUpdates with every stop, leaving S1 at its scheduled 09:00 (terminal holding, exact), monitored in ET', async () => {
    // Another bus waits at S1 for T2, reporting T2 (its next trip) at 08:36.
    await bus(f, [item('position', '2026-03-10T07:36:00Z', { lat: 48.85, lon: 2.35, gps_valid: true, trip_id: 'T2', service_date: '2026-03-10' })]);
    f.clock.advance(90_000);
    await settled(f);
    const t2 = (await tripUpdates(f)).get('T2');
    expect(t2, 'T2 in TripUpdates').toBeDefined();
    expect(t2.trip).toMatchObject({ tripId: 'T2', startTime: '09:00:00', startDate: '20260310', scheduleRelationship: 'SCHEDULED' });
    expect(t2.stopTimeUpdate.map((u: any) => u.stopSequence)).toEqual([1, 2, 3, 4]);
    expect(t2.stopTimeUpdate[0].departure.time).toBe(secs('2026-03-10T08:00:00Z'));
    expect(t2.stopTimeUpdate.slice(1).map((u: any) => [u.arrival.time, u.departure.time])).toEqual([
      [secs('2026-03-10T08:10:00Z'), secs('2026-03-10T08:11:00Z')], [secs('2026-03-10T08:20:00Z'), secs('2026-03-10T08:20:00Z')], [secs('2026-03-10T08:30:00Z'), secs('2026-03-10T08:30:00Z')],
    ]);
    const { journeys } = await et(f);
    expect(journeys.get('T2')!.Monitored).toBe('true');
    expect(calls(journeys.get('T2')).slice(1)).toEqual([['S2', local('09:10'), local('09:11')], ['S3', local('09:20'), local('09:20')], ['S4', local('09:30'), local('09:30')]]);
  });
});

describe('the ET horizon is configurable (FEEDS_ET_HORIZON_MINUTES)', () => {
  let f: FeedFixture;
  beforeAll(async () => {
    f = await feedFixture({ config: { feeds: { refreshSeconds: 5, staleVehicleSeconds: 300, etHorizonMinutes: 20, etRefreshSeconds: 0, keepFresh: false, worker: 'off' } } });
  });
  afterAll(async () => f?.t.close());

  it('20 minutes: at 08:35 T3 (scheduled 08:30–08:50, no vehicle) is there and T2 (09:00) is not; at 08:41 T2 is', async () => {
    await settled(f);
    expect([...(await et(f)).journeys.keys()]).toEqual(['T3']);
    f.clock.advance(6 * 60_000);
    await settled(f);
    const { text, journeys } = await et(f);
    expect([...journeys.keys()]).toEqual(['T3', 'T2']);
    expect([...journeys.values()].every((j) => j.Monitored === 'false')).toBe(true);
    expect(await siriErrors(text!)).toEqual([]);
    // Nothing known of any vehicle: nothing in TripUpdates.
    expect((await readFeed(f, 'trip-updates')).message!.entity ?? []).toEqual([]);
  });
});
