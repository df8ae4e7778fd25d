/**
 * Issue 8 acceptance: an operator cancels a trip and diverts another; within one refresh of the
 * feeds (the rebuild a request starts once the snapshot is older than the interval) the live
 * stream's clients, GTFS-Realtime (decoded with the bindings) and SIRI ET/SX (valid against the
 * SIRI 2.1 schemas) and the trip objects (GET trips/{trip_id}) all show both;
 * once the updates end, nothing shows them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create } from 'xmlbuilder2';
import { inject } from '../helpers/app.js';
import { subscribe, type Stream } from '../helpers/live.js';
import { feedFixture, putUpdate, readFeed, settled, type FeedFixture } from '../feeds/fixture.js';
import { siriErrors } from '../feeds/siri-xsd.js';

let f: FeedFixture;
let stream: Stream;
beforeAll(async () => {
  f = await feedFixture();
  stream = await subscribe(f.t.app, f.g, f.op.auth);
});
afterAll(async () => {
  stream?.ws.close();
  await f?.t.close();
});

const list = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);
const REFRESH_MS = 5_000;

/** Everything passengers and operators see, read the way each client reads it. */
async function outputs() {
  const tripUpdates = ((await readFeed(f, 'trip-updates')).message!.entity ?? []) as any[];
  const alerts = ((await readFeed(f, 'alerts')).message!.entity ?? []) as any[];
  const modifications = ((await readFeed(f, 'trip-modifications')).message!.entity ?? []) as any[];
  const et = await inject(f.t, { url: `/api/v4/groups/${f.g}/siri/estimated-timetable` });
  const sx = await inject(f.t, { url: `/api/v4/groups/${f.g}/siri/situation-exchange` });
  // No journey to tell: 204 (the SIRI 2.1 schema has no empty EstimatedTimetableDelivery).
  expect(await siriErrors(...(et.status === 204 ? [sx.body] : [et.body, sx.body]))).toEqual([]);
  const etDoc = et.status === 204 ? {} : (create(et.body).end({ format: 'object' }) as any).Siri.ServiceDelivery.EstimatedTimetableDelivery.EstimatedJourneyVersionFrame;
  const sxDoc = (create(sx.body).end({ format: 'object' }) as any).Siri.ServiceDelivery.SituationExchangeDelivery;
  const trip = async (id: string) => {
    const r = await inject(f.t, { url: `/api/v4/groups/${f.g}/trips/${id}?date=2026-03-10`, headers: f.op.auth });
    expect(r.status).toBe(200);
    return { status: r.json.status, cancelled: r.json.updates.cancelled, detour: r.json.updates.detour?.update_id ?? null, skipped: r.json.updates.skipped_stops.map((x: any) => x.stop_sequence) };
  };
  return {
    trips: { T1: await trip('T1'), T2: await trip('T2') },
    tripUpdates: Object.fromEntries(tripUpdates.map((e) => [e.id, e.tripUpdate])),
    alerts: alerts.map((e) => e.id),
    modifications: modifications.map((e) => e.id),
    journeys: Object.fromEntries((list(etDoc.EstimatedVehicleJourney) as any[]).map((j) => [j.FramedVehicleJourneyRef.DatedVehicleJourneyRef, j])),
    situations: (list(sxDoc.Situations?.PtSituationElement) as any[]).map((s) => s.SituationNumber),
  };
}

/** What ET tells of each journey: monitored, cancelled, and its calls (stop, extra, cancelled). */
const schedule = (journeys: Record<string, any>) => Object.fromEntries(Object.entries(journeys).map(([id, j]) => [id, {
  monitored: j.Monitored, cancelled: j.Cancellation ?? null,
  calls: (list(j.EstimatedCalls?.EstimatedCall) as any[]).map((c) => [c.StopPointRef, c.ExtraCall ?? null, c.Cancellation ?? null]),
}]));
const SCHEDULED = {
  T3: { monitored: 'false', cancelled: null, calls: [['S1', null, null], ['S2', null, null], ['S3', null, null]] },
  T2: { monitored: 'false', cancelled: null, calls: [['S1', null, null], ['S2', null, null], ['S3', null, null], ['S4', null, null]] },
};

describe('issue 8: one operator action reaches every output', () => {
  it('a cancellation and a detour show in the stream, GTFS-Realtime and SIRI within one refresh, and nowhere after they end', async () => {
    // The feeds are being served (cached) before the operator acts.
    const before = await outputs();
    expect(before.tripUpdates).toEqual({});
    // SIRI ET tells the journeys scheduled within its horizon (60 min) whose vehicle is not known, as not monitored: T3 (08:30) and T2 (09:00).
    expect(schedule(before.journeys)).toEqual(SCHEDULED);

    const day = { start_date: '2026-03-10', end_date: '2026-03-10' };
    const cancel = await putUpdate(f, { update_id: 'cancel-T1', kind: 'cancel', trip_id: 'T1', ...day, message: { header: 'Trip cancelled', cause: 'STRIKE' } });
    const detour = await putUpdate(f, {
      update_id: 'detour-T2', kind: 'detour', trip_id: 'T2', ...day,
      detour: { name: 'Works', shape: [[2.35, 48.85], [2.34, 48.865], [2.37, 48.87]], skipped_stops: [{ stop_id: 'S2' }], added_stops: [{ place: { lat: 48.865, lon: 2.34, name: 'Temporary' }, after: { stop_sequence: 1 } }] },
      message: { header: 'Detour via Temporary', cause: 'CONSTRUCTION' },
    });
    expect([cancel.status, detour.status]).toEqual([200, 200]);

    // The stream's client hears both at once.
    const heard = [await stream.next('trip_update'), await stream.next('trip_update')];
    expect(heard.map((m: any) => [m.data.action, m.data.update.update_id, m.data.update.kind])).toEqual([['put', 'cancel-T1', 'cancel'], ['put', 'detour-T2', 'detour']]);

    // One refresh later, the feeds show both.
    f.clock.advance(REFRESH_MS);
    await settled(f);
    const during = await outputs();
    expect(during.trips).toEqual({
      T1: { status: 'cancelled', cancelled: true, detour: null, skipped: [] },
      T2: { status: 'scheduled', cancelled: false, detour: 'detour-T2', skipped: [2] },
    });
    expect(during.tripUpdates['trip:20260310:T1'].trip.scheduleRelationship).toBe('CANCELED');
    expect(during.tripUpdates['trip:20260310:T2'].trip.modifiedTrip).toEqual({ modificationsId: 'tm:20260310:T2', affectedTripId: 'T2', startTime: '09:00:00', startDate: '20260310' });
    expect(during.tripUpdates['trip:20260310:T2'].stopTimeUpdate.map((u: any) => u.stopId)).toEqual(['tmp-detour-T2-0']);
    expect(during.alerts).toEqual(['alert:cancel-T1', 'alert:detour-T2']);
    expect(during.modifications).toEqual(['shape:detour:detour-T2:20260310:T2', 'tm:20260310:T2', 'stop:tmp-detour-T2-0']);
    expect(during.journeys['T1'].Cancellation).toBe('true');
    const calls = list(during.journeys['T2'].EstimatedCalls.EstimatedCall) as any[];
    expect(calls.filter((c) => c.ExtraCall === 'true').map((c) => c.StopPointRef)).toEqual(['tmp-detour-T2-0']);
    expect(calls.filter((c) => c.Cancellation === 'true').map((c) => c.StopPointRef)).toEqual(['S2']);
    expect(during.situations).toEqual(['cancel-T1', 'detour-T2']);

    // The operator ends both (removes them: they started today).
    for (const id of ['cancel-T1', 'detour-T2']) expect((await inject(f.t, { method: 'DELETE', url: `/api/v4/groups/${f.g}/trip-updates/${id}`, headers: f.op.auth })).status).toBe(200);
    const ended = [await stream.next('trip_update'), await stream.next('trip_update')];
    // Two updates ended one after the other may reach the stream in one announcement window, in either order (each is its own event).
    expect(ended.map((m: any) => [m.data.action, m.data.update.update_id]).sort()).toEqual([['removed', 'cancel-T1'], ['removed', 'detour-T2']]);

    f.clock.advance(REFRESH_MS);
    await settled(f);
    const after = await outputs();
    // T1 runs again as scheduled: nothing was recorded and its end (08:20) is 15 minutes past, so not done.
    expect(after).toEqual({
      trips: { T1: { status: 'not_done', cancelled: false, detour: null, skipped: [] }, T2: { status: 'scheduled', cancelled: false, detour: null, skipped: [] } },
      tripUpdates: {}, alerts: [], modifications: [], journeys: after.journeys, situations: [],
    });
    expect(schedule(after.journeys)).toEqual(SCHEDULED);
  });
});
