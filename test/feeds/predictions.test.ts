/**
 * The predictions published (issue #17, section 2): GTFS-Realtime TripUpdates, SIRI
 * EstimatedTimetable and StopMonitoring carry the times predictTrips gives for the same clock
 * (one computation, kept in the snapshot), for a trip in progress on time and for the next trip
 * of its block.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create } from 'xmlbuilder2';
import { siriTime } from '../../src/domains/feeds/siri/build.js';
import { predictTrips, type TripPrediction } from '../../src/domains/predictions/service.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { feedFixture, readFeed, secs, settled, type FeedFixture } from './fixture.js';
import { siriErrors } from './siri-xsd.js';

let f: FeedFixture;
let device: Awaited<ReturnType<typeof newDevice>>;
const TZ = 'Europe/Paris';
beforeAll(async () => {
  f = await feedFixture();
  const { t, g } = f;
  // A bus on T3 (block B2, then T4 at 10:00) left S1 on time at 08:30 local; the clock is at 08:35.
  device = await newDevice(t, g);
  const bus = await newVehicle(t, g);
  const r = await send(t, g, device.auth, [
    item('sign_on', '2026-03-10T07:00:00Z', { driver_id: await newDriver(t, g), vehicle_id: bus }),
    item('trip_event', '2026-03-10T07:30:00Z', { trip_id: 'T3', service_date: '2026-03-10', event: 'stop_passed', stop_id: 'S1', stop_sequence: 1, gps_valid: true }),
    item('position', '2026-03-10T07:33:00Z', { lat: 48.855, lon: 2.355, gps_valid: true, trip_id: 'T3', service_date: '2026-03-10' }),
  ]);
  expect(r.json.rejected).toEqual([]);
});
afterAll(async () => f?.t.close());

const list = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);
const s = (d: Date) => Math.floor(d.getTime() / 1000);
/** predictTrips for the feeds' clock: what the feeds must publish. */
async function predicted(): Promise<Map<string, TripPrediction>> {
  const out = await predictTrips(f.t.ctx, f.g, '2026-03-10', { now: f.clock.now(), scheduleHorizonSeconds: f.t.ctx.config.feeds.etHorizonMinutes * 60 });
  return new Map(out.map((p) => [p.trip_id, p]));
}
const tripUpdates = async () => {
  const m = (await readFeed(f, 'trip-updates')).message!;
  return { header: m.header, byId: Object.fromEntries((m.entity as any[]).map((e) => [e.id, e.tripUpdate])), entity: m.entity as any[] };
};
const siri = async (path: string) => {
  const res = await f.t.app.inject({ url: `/api/v4/groups/${f.g}/siri/${path}` });
  expect(res.statusCode, path).toBe(200);
  return { text: res.body, doc: (create(res.body).end({ format: 'object' }) as any).Siri.ServiceDelivery };
};

describe('the predictions in the feeds', () => {
  it('a trip in progress on time is in TripUpdates with the times of predictTrips at every stop ahead, increasing', async () => {
    await settled(f);
    const p = await predicted();
    const { header, byId } = await tripUpdates();
    const t3 = byId['trip:20260310:T3'];
    expect(t3.trip).toMatchObject({ tripId: 'T3', startDate: '20260310', scheduleRelationship: 'SCHEDULED' });
    // On time: no delay to tell, yet every stop ahead (S2, S3; S1 is passed) is there.
    expect(t3.stopTimeUpdate.map((u: any) => u.stopSequence)).toEqual([2, 3]);
    expect(t3.stopTimeUpdate).toEqual(p.get('T3')!.stops.map((x) => ({
      stopSequence: x.stop_sequence, stopId: x.stop_id,
      arrival: { time: s(x.arrival_at), uncertainty: x.uncertainty_seconds }, departure: { time: s(x.departure_at), uncertainty: x.uncertainty_seconds },
    })));
    const times = t3.stopTimeUpdate.flatMap((u: any) => [u.arrival.time, u.departure.time]);
    expect(times).toEqual([...times].sort((a: number, b: number) => a - b));
    // The scheduled times when nothing is learned: S2 at 08:40/08:41, S3 at 08:50 local.
    expect(times).toEqual([secs('2026-03-10T07:40:00Z'), secs('2026-03-10T07:41:00Z'), secs('2026-03-10T07:50:00Z'), secs('2026-03-10T07:50:00Z')]);
    expect(t3.timestamp).toBe(secs('2026-03-10T07:30:00Z'));
    expect(header.timestamp).toBe(secs('2026-03-10T07:35:00Z'));
  });

  it('the next trip of the block is in TripUpdates, predicted no earlier than the arrival before it plus the minimum layover', async () => {
    const p = await predicted();
    const { byId } = await tripUpdates();
    const t4 = byId['trip:20260310:T4'];
    expect(t4.stopTimeUpdate.map((u: any) => u.stopSequence)).toEqual([1, 2, 3]);
    expect(t4.stopTimeUpdate.map((u: any) => [u.arrival.time, u.departure.time])).toEqual(p.get('T4')!.stops.map((x) => [s(x.arrival_at), s(x.departure_at)]));
    const t3End = p.get('T3')!.stops.at(-1)!.arrival_at;
    expect(t4.stopTimeUpdate[0].departure.time).toBeGreaterThanOrEqual(s(t3End) + f.t.ctx.config.predictions.minLayoverSeconds);
    // Plenty of slack before 10:00: it keeps its timetable.
    expect(t4.stopTimeUpdate[0].departure.time).toBe(secs('2026-03-10T09:00:00Z'));
  });

  it('SIRI EstimatedTimetable and StopMonitoring carry the same expected times, valid against the SIRI 2.1 schemas', async () => {
    const p = await predicted();
    const et = await siri('estimated-timetable');
    const journeys = list(et.doc.EstimatedTimetableDelivery.EstimatedJourneyVersionFrame.EstimatedVehicleJourney) as any[];
    // T2 (09:00, block B1, nothing reported on it nor on T1): within the 60-minute horizon, vehicle not known (test/feeds/horizon.test.ts).
    expect(journeys.map((j) => [j.FramedVehicleJourneyRef.DatedVehicleJourneyRef, j.Monitored])).toEqual([['T3', 'true'], ['T4', 'true'], ['T2', 'false']]);
    for (const j of journeys) {
      const prediction = p.get(j.FramedVehicleJourneyRef.DatedVehicleJourneyRef)!;
      const calls = list(j.EstimatedCalls.EstimatedCall) as any[];
      const ahead = calls.filter((c) => prediction.stops.some((x) => x.stop_id === c.StopPointRef));
      expect(ahead.map((c) => [c.StopPointRef, c.ExpectedArrivalTime, c.ExpectedDepartureTime])).toEqual(
        prediction.stops.map((x) => [x.stop_id, siriTime(x.arrival_at, TZ), siriTime(x.departure_at, TZ)]),
      );
    }
    // T3's S1, passed: its observed time.
    expect(list(journeys[0].EstimatedCalls.EstimatedCall)[0]).toMatchObject({ StopPointRef: 'S1', ExpectedDepartureTime: '2026-03-10T08:30:00+01:00' });

    const sm = await siri('stop-monitoring?MonitoringRef=S3&PreviewInterval=PT2H');
    const visits = list(sm.doc.StopMonitoringDelivery.MonitoredStopVisit) as any[];
    const at = (trip: string) => visits.find((v) => v.MonitoredVehicleJourney.FramedVehicleJourneyRef.DatedVehicleJourneyRef === trip)!.MonitoredVehicleJourney.MonitoredCall;
    for (const trip of ['T3', 'T4']) {
      const x = p.get(trip)!.stops.find((y) => y.stop_id === 'S3')!;
      expect(at(trip)).toMatchObject({ ExpectedArrivalTime: siriTime(x.arrival_at, TZ), ExpectedDepartureTime: siriTime(x.departure_at, TZ) });
    }
    expect(await siriErrors(et.text, sm.text)).toEqual([]);
  });

  it('a trip update\'s timestamp is never after the header\'s, even for a report dated after the snapshot was read', async () => {
    // The vehicle reports passing S2 at 08:37 local while the service's clock says 08:35:05.
    const r = await send(f.t, f.g, device.auth, [item('trip_event', '2026-03-10T07:37:00Z', { trip_id: 'T3', service_date: '2026-03-10', event: 'stop_passed', stop_id: 'S2', stop_sequence: 2, gps_valid: true })]);
    expect(r.json.rejected).toEqual([]);
    f.clock.advance(5_000);
    await settled(f);
    const p = await predicted();
    const { header, entity, byId } = await tripUpdates();
    expect(header.timestamp).toBe(secs('2026-03-10T07:35:05Z'));
    for (const e of entity) if (e.tripUpdate.timestamp !== undefined) expect(e.tripUpdate.timestamp).toBeLessThanOrEqual(header.timestamp);
    expect(byId['trip:20260310:T3'].timestamp).toBe(header.timestamp);
    // S2 passed: only S3 ahead, from predictTrips for the same clock; stop_sequence increasing in every trip.
    expect(byId['trip:20260310:T3'].stopTimeUpdate.map((u: any) => [u.stopSequence, u.arrival.time])).toEqual(p.get('T3')!.stops.map((x) => [x.stop_sequence, s(x.arrival_at)]));
    for (const e of entity) {
      const seqs: number[] = (e.tripUpdate.stopTimeUpdate ?? []).map((u: any) => u.stopSequence);
      expect(seqs).toEqual([...new Set(seqs)].sort((a: number, b: number) => a - b));
    }
  });
});
