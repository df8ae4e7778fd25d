import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create } from 'xmlbuilder2';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { eventually, feedFixture, putUpdate, settled, type FeedFixture } from './fixture.js';
import { SIRI_EXAMPLES, siriErrors } from './siri-xsd.js';

let f: FeedFixture;
let bus: string;
beforeAll(async () => {
  f = await feedFixture();
  const { t, g } = f;
  const day = { start_date: '2026-03-10', end_date: '2026-03-10' };
  await putUpdate(f, { update_id: 'cancel-T1', kind: 'cancel', trip_id: 'T1', ...day, message: { header: 'Trip cancelled', cause: 'STRIKE', language: 'en' } });
  await putUpdate(f, {
    update_id: 'detour-T2', kind: 'detour', trip_id: 'T2', ...day,
    detour: { name: 'Works', shape: [[2.35, 48.85], [2.34, 48.865], [2.37, 48.87]], skipped_stops: [{ stop_id: 'S2' }], added_stops: [{ place: { lat: 48.865, lon: 2.34, name: 'Temporary' }, after: { stop_sequence: 1 }, travel_seconds: 300 }] },
  });
  await putUpdate(f, { update_id: 'msg-R1', kind: 'message', route_id: 'R1', ...day, message: { header: 'Crowded', severity: 'info' } });
  const d = await newDevice(t, g);
  bus = await newVehicle(t, g);
  await send(t, g, d.auth, [
    item('sign_on', '2026-03-10T07:00:00Z', { driver_id: await newDriver(t, g), vehicle_id: bus }),
    item('position', '2026-03-10T07:33:00Z', { lat: 48.85, lon: 2.35, gps_valid: true, bearing: 90, trip_id: 'T3', service_date: '2026-03-10' }),
    item('trip_event', '2026-03-10T07:32:00Z', { trip_id: 'T3', service_date: '2026-03-10', event: 'stop_passed', stop_id: 'S1', stop_sequence: 1, gps_valid: true }),
  ]);
});
afterAll(async () => f?.t.close());

const get = async (path: string, headers: Record<string, string> = {}) => {
  const res = await f.t.app.inject({ url: `/api/v4/groups/${f.g}/siri/${path}`, headers });
  return { status: res.statusCode, headers: res.headers, text: res.body, doc: res.statusCode === 200 ? (create(res.body).end({ format: 'object' }) as any).Siri : null };
};
const list = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);

describe('SIRI', () => {
  it('the validator setup works: the standard\'s own example validates, a broken one does not', async () => {
    const example = readFileSync(`${SIRI_EXAMPLES}/ext_estimatedTimetable_response.xml`, 'utf8');
    expect(await siriErrors(example)).toEqual([]);
    const broken = await siriErrors(example.replace('<ResponseTimestamp>', '<Bogus/><ResponseTimestamp>'));
    expect(broken.join('\n')).toContain("Element '{http://www.siri.org.uk/siri}Bogus': This element is not expected");
  });

  it('every service answers documents valid against the SIRI 2.1 schemas', async () => {
    const paths = ['estimated-timetable', 'estimated-timetable?LineRef=R1', 'vehicle-monitoring', 'vehicle-monitoring?LineRef=R9', 'stop-monitoring?MonitoringRef=NOPE', 'stop-monitoring?MonitoringRef=S1&PreviewInterval=PT2H', 'stop-monitoring?MonitoringRef=tmp-detour-T2-0',
      'situation-exchange', 'check-status', 'lines-discovery', 'stop-points-discovery'];
    const docs = [];
    for (const p of paths) {
      const r = await get(p);
      expect(r.status, p).toBe(200);
      expect(r.headers['content-type']).toBe('application/xml; charset=utf-8');
      docs.push(r.text);
    }
    expect(await siriErrors(...docs)).toEqual([]);
  });

  it('EstimatedTimetable: the cancelled journey, the detour\'s cancelled and extra calls, the delay', async () => {
    const { doc } = await get('estimated-timetable');
    expect(doc['@version']).toBe('2.1');
    const journeys = list(doc.ServiceDelivery.EstimatedTimetableDelivery.EstimatedJourneyVersionFrame.EstimatedVehicleJourney) as any[];
    // T4: the next trip of T3's block, predicted from T3's vehicle, told after it; then the journeys no vehicle's predictions move, by departure (docs/feeds.md).
    expect(journeys.map((j) => j.FramedVehicleJourneyRef.DatedVehicleJourneyRef)).toEqual(['T3', 'T4', 'T1', 'T2']);
    const journey = (ref: string) => journeys.find((j) => j.FramedVehicleJourneyRef.DatedVehicleJourneyRef === ref);
    expect(journey('T1')).toMatchObject({ LineRef: 'R1', FramedVehicleJourneyRef: { DataFrameRef: '2026-03-10' }, Cancellation: 'true' });
    expect(journey('T1').SituationRef).toEqual([{ SituationSimpleRef: 'cancel-T1' }, { SituationSimpleRef: 'msg-R1' }]);
    expect(journey('T1').EstimatedCalls).toBeUndefined();
    // T3: passed S1 at 08:32 (scheduled 08:30, observed), then predicted (no history: the scheduled runs) 2 minutes late.
    const t3 = list(journey('T3').EstimatedCalls.EstimatedCall) as any[];
    expect(t3.map((c) => [c.StopPointRef, c.AimedDepartureTime, c.ExpectedDepartureTime])).toEqual([
      ['S1', '2026-03-10T08:30:00+01:00', '2026-03-10T08:32:00+01:00'],
      ['S2', '2026-03-10T08:41:00+01:00', '2026-03-10T08:43:00+01:00'],
      ['S3', '2026-03-10T08:50:00+01:00', '2026-03-10T08:52:00+01:00'],
    ]);
    expect(journey('T3').Monitored).toBe('true');
    const t2 = list(journey('T2').EstimatedCalls.EstimatedCall) as any[];
    expect(t2.map((c) => [c.StopPointRef, c.Order, c.ExtraCall, c.Cancellation, c.AimedArrivalTime])).toEqual([
      ['S1', '1', undefined, undefined, '2026-03-10T09:00:00+01:00'],
      ['tmp-detour-T2-0', '2', 'true', undefined, '2026-03-10T09:05:00+01:00'],
      ['S2', '3', undefined, 'true', '2026-03-10T09:10:00+01:00'],
      ['S3', '4', undefined, undefined, '2026-03-10T09:20:00+01:00'],
      ['S4', '5', undefined, undefined, '2026-03-10T09:30:00+01:00'],
    ]);
    expect(t2[2].DepartureStatus).toBe('cancelled');
    expect(list(journey('T2').SituationRef).map((s: any) => s.SituationSimpleRef)).toEqual(['detour-T2', 'msg-R1']);
  });

  it('SituationExchange: the messages and the detour, with their validity and what they affect', async () => {
    const { doc } = await get('situation-exchange');
    const situations = list(doc.ServiceDelivery.SituationExchangeDelivery.Situations.PtSituationElement) as any[];
    expect(situations.map((s) => s.SituationNumber)).toEqual(['cancel-T1', 'detour-T2', 'msg-R1']);
    expect(situations[0]).toMatchObject({
      ParticipantRef: f.g, Progress: 'open', PersonnelReason: 'industrialAction', Severity: 'normal', Summary: { '@xml:lang': 'en', '#': 'Trip cancelled' },
      ValidityPeriod: { StartTime: '2026-03-10T00:00:00+01:00', EndTime: '2026-03-11T00:00:00+01:00' },
      Affects: { VehicleJourneys: { AffectedVehicleJourney: { DatedVehicleJourneyRef: 'T1' } } },
    });
    expect(situations[1].Summary).toBe('Detour: Works');
    expect(situations[2]).toMatchObject({ Severity: 'slight', Affects: { Networks: { AffectedNetwork: { AffectedLine: { LineRef: 'R1' } } } } });
  });

  it('VehicleMonitoring, StopMonitoring and discovery', async () => {
    const vm = (await get('vehicle-monitoring')).doc.ServiceDelivery.VehicleMonitoringDelivery.VehicleActivity;
    expect(vm).toMatchObject({
      RecordedAtTime: '2026-03-10T08:33:00+01:00', ValidUntilTime: '2026-03-10T08:38:00+01:00', VehicleMonitoringRef: bus,
      MonitoredVehicleJourney: { LineRef: 'R1', FramedVehicleJourneyRef: { DataFrameRef: '2026-03-10', DatedVehicleJourneyRef: 'T3' }, VehicleLocation: { Longitude: '2.35', Latitude: '48.85' }, Bearing: '90', VehicleRef: bus },
    });
    expect((await get('estimated-timetable?LineRef=R9')).status).toBe(204);
    expect((await get('vehicle-monitoring?LineRef=R9')).doc.ServiceDelivery.VehicleMonitoringDelivery.VehicleActivity).toBeUndefined();

    // S2 from 08:35 for 2 h: T3 at 08:41 (expected 08:43), T2 skipped by the detour at 09:11, T4 at 10:11 (predicted on time: T3's vehicle is free long before).
    const sm = list((await get('stop-monitoring?MonitoringRef=S2&PreviewInterval=PT2H')).doc.ServiceDelivery.StopMonitoringDelivery.MonitoredStopVisit) as any[];
    expect(sm.map((v) => [v.MonitoredVehicleJourney.FramedVehicleJourneyRef.DatedVehicleJourneyRef, v.MonitoredVehicleJourney.MonitoredCall.ExpectedDepartureTime, v.MonitoredVehicleJourney.MonitoredCall.DepartureStatus])).toEqual([
      ['T3', '2026-03-10T08:43:00+01:00', undefined],
      ['T2', undefined, 'cancelled'],
      ['T4', '2026-03-10T10:11:00+01:00', undefined],
    ]);
    const tmp = list((await get('stop-monitoring?MonitoringRef=tmp-detour-T2-0')).doc.ServiceDelivery.StopMonitoringDelivery.MonitoredStopVisit) as any[];
    expect(tmp.map((v) => v.MonitoredVehicleJourney.MonitoredCall.AimedDepartureTime)).toEqual(['2026-03-10T09:05:00+01:00']);
    expect((await get('stop-monitoring?MonitoringRef=S2&PreviewInterval=P2Y')).status).toBe(422);

    const lines = (await get('lines-discovery')).doc.LinesDelivery.AnnotatedLineRef;
    expect(lines).toEqual({ LineRef: 'R1', LineName: '1', Monitored: 'true' });
    const stops = list((await get('stop-points-discovery')).doc.StopPointsDelivery.AnnotatedStopPointRef) as any[];
    expect(stops.map((s) => [s.StopPointRef, s.StopName, s.Lines.LineRef])).toEqual([['S1', 'First', 'R1'], ['S2', 'Second', 'R1'], ['S3', 'Third', 'R1'], ['S4', 'Fourth', 'R1']]);
    const status = (await get('check-status')).doc.CheckStatusResponse;
    expect(status).toMatchObject({ ResponseTimestamp: '2026-03-10T08:35:00+01:00', Status: 'true' });
  });

  it('gives a feed gzipped to a client that accepts gzip (made with the output, ready with its first answer), the same document once inflated; uncompressed to one that does not (the timetable kept gzipped only: inflated as it is sent)', async () => {
    const identity = await get('estimated-timetable');
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers['vary']).toBe('accept-encoding');
    expect(identity.text.length).toBeGreaterThan(1024);
    const zippedAsk = () => f.t.app.inject({ url: `/api/v4/groups/${f.g}/siri/estimated-timetable`, headers: { 'accept-encoding': 'br, gzip;q=0.8' } });
    const zipped = await zippedAsk();
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.rawPayload.length).toBeLessThan(identity.text.length);
    expect(gunzipSync(zipped.rawPayload).toString()).toBe(identity.text);
    const refused = await get('estimated-timetable', { 'accept-encoding': 'gzip;q=0, identity' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(refused.text).toBe(identity.text);
  });

  it('answers 304 to If-None-Match while the content is unchanged', async () => {
    const first = await get('situation-exchange');
    expect((await get('situation-exchange', { 'if-none-match': first.headers.etag as string })).status).toBe(304);
  });

  it('EstimatedTimetable and VehicleMonitoring keep their ETag across a rebuild that changes only the time (304), and change it with the content', async () => {
    const et = await get('estimated-timetable');
    const vm = await get('vehicle-monitoring');
    f.clock.advance(f.t.ctx.config.feeds.refreshSeconds * 1000 + 1000);
    await settled(f);
    const etLater = await get('estimated-timetable');
    expect(etLater.doc.ServiceDelivery.ResponseTimestamp).not.toBe(et.doc.ServiceDelivery.ResponseTimestamp);
    expect((await get('estimated-timetable', { 'if-none-match': et.headers.etag as string })).status).toBe(304);
    expect((await get('vehicle-monitoring', { 'if-none-match': vm.headers.etag as string })).status).toBe(304);
    // A new position: VehicleMonitoring's content changes, and so does its ETag.
    const d = await newDevice(f.t, f.g);
    const other = await newVehicle(f.t, f.g);
    await send(f.t, f.g, d.auth, [
      item('sign_on', new Date(f.clock.now().getTime() - 60_000).toISOString(), { driver_id: await newDriver(f.t, f.g), vehicle_id: other }),
      item('position', new Date(f.clock.now().getTime() - 30_000).toISOString(), { lat: 48.86, lon: 2.36, gps_valid: true }),
    ]);
    f.clock.advance(f.t.ctx.config.feeds.refreshSeconds * 1000 + 1000);
    await eventually(async () => (await get('vehicle-monitoring', { 'if-none-match': vm.headers.etag as string })).status === 200, 'a VehicleMonitoring with the new position');
    expect((await get('vehicle-monitoring')).text).toContain(`<VehicleRef>${other}</VehicleRef>`);
  });
});
