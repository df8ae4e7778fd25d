import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import protobuf from 'protobufjs';
import { PROTO_PATH } from '../../src/domains/feeds/gtfs-rt/proto.js';
import { inject } from '../helpers/app.js';
import { item, newDevice, newDriver, newVehicle, send } from '../helpers/actual.js';
import { feedFixture, putUpdate, readFeed, secs, settled, type FeedFixture } from './fixture.js';

let f: FeedFixture;
let bus: string;
let late: string;
let nearlyStale: string;
beforeAll(async () => {
  f = await feedFixture();
  const { t, g } = f;
  const day = { start_date: '2026-03-10', end_date: '2026-03-10' };
  expect((await putUpdate(f, { update_id: 'cancel-T1', kind: 'cancel', trip_id: 'T1', ...day, message: { header: 'Trip cancelled', cause: 'STRIKE' } })).status).toBe(200);
  expect((await putUpdate(f, {
    update_id: 'detour-T2', kind: 'detour', trip_id: 'T2', ...day,
    detour: { name: 'Works', shape: [[2.35, 48.85], [2.34, 48.865], [2.37, 48.87]], skipped_stops: [{ stop_id: 'S2' }], added_stops: [{ place: { lat: 48.865, lon: 2.34, name: 'Temporary' }, after: { stop_sequence: 1 }, travel_seconds: 300 }] },
  })).status).toBe(200);
  expect((await putUpdate(f, { update_id: 'skip-T3-S3', kind: 'skip_stop', trip_id: 'T3', stop: { stop_sequence: 3 }, ...day })).status).toBe(200);
  expect((await putUpdate(f, { update_id: 'add-T4', kind: 'add_stop', trip_id: 'T4', added_stop: { place: { stop_id: 'S4' }, after: { stop_id: 'S1' }, travel_seconds: 120 }, ...day })).status).toBe(200);

  // Three buses: one on T3 two minutes late at S1, one seen exactly at the stale limit (300 s), one just before it.
  const devices = await Promise.all([0, 1, 2].map(() => newDevice(t, g)));
  const vehicles = await Promise.all([0, 1, 2].map(() => newVehicle(t, g)));
  [bus, nearlyStale, late] = vehicles as [string, string, string];
  const positions = ['2026-03-10T07:33:00Z', '2026-03-10T07:30:00Z', '2026-03-10T07:29:59Z'];
  for (const [i, d] of devices.entries()) {
    const driver = await newDriver(t, g);
    const vehicle = [bus, nearlyStale, late][i]!;
    const r = await send(t, g, d.auth, [
      item('sign_on', '2026-03-10T07:00:00Z', { driver_id: driver, vehicle_id: vehicle }),
      item('position', positions[i]!, { lat: 48.85, lon: 2.35, gps_valid: true, speed_kmh: 36, bearing: 90, ...(i === 0 ? { trip_id: 'T3', service_date: '2026-03-10' } : {}) }),
      ...(i === 0 ? [item('trip_event', '2026-03-10T07:32:00Z', { trip_id: 'T3', service_date: '2026-03-10', event: 'stop_passed', stop_id: 'S1', stop_sequence: 1, gps_valid: true })] : []),
    ]);
    expect(r.json.rejected).toEqual([]);
  }
});
afterAll(async () => f?.t.close());

const NOW = secs('2026-03-10T07:35:00Z');

describe('GTFS-Realtime TripUpdates', () => {
  it('carry the cancelled trip, the skipped stop, the predicted times ahead of the late trip and the modified trips with their added stops', async () => {
    const { status, message } = await readFeed(f, 'trip-updates');
    expect(status).toBe(200);
    expect(message!.header).toEqual({ gtfsRealtimeVersion: '2.0', incrementality: 'FULL_DATASET', timestamp: NOW });
    expect(message!.entity).toEqual([
      { id: 'trip:20260310:T1', tripUpdate: { trip: { tripId: 'T1', routeId: 'R1', directionId: 0, startTime: '08:00:00', startDate: '20260310', scheduleRelationship: 'CANCELED' } } },
      {
        id: 'trip:20260310:T3',
        tripUpdate: {
          trip: { tripId: 'T3', routeId: 'R1', directionId: 0, startTime: '08:30:00', startDate: '20260310', scheduleRelationship: 'SCHEDULED' },
          // 08:32 local at S1, scheduled 08:30: 120 s late. S1 passed is left out; S2 predicted
          // (no history: the scheduled run, 08:43 departure, arrival a dwell of 60 s before; 15 % of 11 min uncertain).
          stopTimeUpdate: [
            { stopSequence: 2, stopId: 'S2', arrival: { time: secs('2026-03-10T07:42:00Z'), uncertainty: 99 }, departure: { time: secs('2026-03-10T07:43:00Z'), uncertainty: 99 } },
            { stopSequence: 3, stopId: 'S3', scheduleRelationship: 'SKIPPED' },
          ],
          delay: 120,
          timestamp: secs('2026-03-10T07:32:00Z'),
        },
      },
      {
        id: 'trip:20260310:T2',
        tripUpdate: {
          trip: { modifiedTrip: { modificationsId: 'tm:20260310:T2', affectedTripId: 'T2', startTime: '09:00:00', startDate: '20260310' } },
          // The temporary stop 300 s after S1's 09:00 departure: 09:05 local.
          stopTimeUpdate: [{ stopId: 'tmp-detour-T2-0', arrival: { time: secs('2026-03-10T08:05:00Z') }, departure: { time: secs('2026-03-10T08:05:00Z') } }],
        },
      },
      {
        id: 'trip:20260310:T4',
        tripUpdate: {
          trip: { modifiedTrip: { modificationsId: 'tm:20260310:T4', affectedTripId: 'T4', startTime: '10:00:00', startDate: '20260310' } },
          stopTimeUpdate: [{ stopId: 'S4', arrival: { time: secs('2026-03-10T09:02:00Z') }, departure: { time: secs('2026-03-10T09:02:00Z') } }],
          // The next trip of T3's block: predicted from T3's vehicle, last seen at S1.
          timestamp: secs('2026-03-10T07:32:00Z'),
        },
      },
    ]);
  });

  it('give the same content as JSON', async () => {
    const pb = await readFeed(f, 'trip-updates');
    const json = await inject(f.t, { url: `/api/v4/groups/${f.g}/gtfs-rt/trip-updates?format=json` });
    expect(json.headers['content-type']).toContain('application/json');
    expect(json.json).toEqual(pb.message);
    expect(json.headers.etag).not.toBe(pb.headers.etag);
  });
});

describe('GTFS-Realtime TripModifications', () => {
  it('describe the detour with its shape and temporary stop, and the added stop as an insertion', async () => {
    const res = await f.t.app.inject({ url: `/api/v4/groups/${f.g}/gtfs-rt/trip-modifications` });
    // Decoded with the official proto, and with the bindings (2.2 carry the message too): the same.
    const type = protobuf.loadSync(PROTO_PATH).lookupType('transit_realtime.FeedMessage');
    const m = type.toObject(type.decode(res.rawPayload), { enums: String, longs: Number }) as any;
    const created = secs((await f.t.db.query<{ created_at: Date }>("SELECT created_at FROM trip_updates WHERE update_id = 'detour-T2'"))[0]!.created_at.toISOString());
    const ids = m.entity.map((e: any) => e.id);
    expect(ids).toEqual(['shape:detour:detour-T2:20260310:T2', 'tm:20260310:T2', 'tm:20260310:T4', 'stop:tmp-detour-T2-0']);
    expect(m.entity[1].tripModifications).toEqual({
      selectedTrips: [{ tripIds: ['T2'], shapeId: 'detour:detour-T2:20260310:T2' }],
      serviceDates: ['20260310'],
      modifications: [{
        startStopSelector: { stopSequence: 2 }, endStopSelector: { stopSequence: 2 },
        replacementStops: [{ stopId: 'tmp-detour-T2-0', travelTimeToStop: 300 }],
        serviceAlertId: 'alert:detour-T2', lastModifiedTime: created,
      }],
    });
    expect(m.entity[2].tripModifications.modifications).toEqual([{ startStopSelector: { stopSequence: 2 }, replacementStops: [{ stopId: 'S4', travelTimeToStop: 120 }], lastModifiedTime: expect.any(Number) }]);
    expect(m.entity[3].stop).toMatchObject({ stopId: 'tmp-detour-T2-0', stopName: { translation: [{ text: 'Temporary' }] } });
    expect(m.entity[3].stop.stopLat).toBeCloseTo(48.865, 4);
    // The full path: the shape up to S1, the detour's points, then the shape from S3 (where the trip rejoins).
    expect(decodePolyline(m.entity[0].shape.encodedPolyline)).toEqual([[2.35, 48.85], [2.35, 48.85], [2.34, 48.865], [2.37, 48.87], [2.37, 48.87], [2.38, 48.88]]);
    const bindings = (await import('./fixture.js')).rt;
    expect(bindings.FeedMessage.toObject(bindings.FeedMessage.decode(res.rawPayload), { enums: String, longs: Number })).toEqual(m);
  });
});

describe('GTFS-Realtime VehiclePositions', () => {
  it('carry each vehicle seen within 300 s with its trip, and drop the stale ones', async () => {
    const { message } = await readFeed(f, 'vehicle-positions');
    const byId = Object.fromEntries(message!.entity.map((e: any) => [e.id, e.vehicle]));
    expect(Object.keys(byId).sort()).toEqual([`vehicle:${bus}`, `vehicle:${nearlyStale}`].sort());
    expect(byId[`vehicle:${bus}`]).toEqual({
      trip: { tripId: 'T3', routeId: 'R1', startDate: '20260310' },
      vehicle: { id: bus, label: bus.toUpperCase() },
      position: { latitude: expect.closeTo(48.85, 5), longitude: expect.closeTo(2.35, 5), bearing: 90, speed: expect.closeTo(10, 5) },
      timestamp: secs('2026-03-10T07:33:00Z'),
    });
    expect(late).toBeDefined();
  });
});

describe('GTFS-Realtime Alerts', () => {
  it('carry the messages and the detours for their active period', async () => {
    const { message } = await readFeed(f, 'alerts');
    expect(message!.entity).toEqual([
      {
        id: 'alert:cancel-T1',
        alert: {
          // 2026-03-10 00:00 to 2026-03-11 00:00 in Paris (UTC+1).
          activePeriod: [{ start: secs('2026-03-09T23:00:00Z'), end: secs('2026-03-10T23:00:00Z') }],
          informedEntity: [{ trip: { tripId: 'T1' }, routeId: 'R1' }],
          cause: 'STRIKE', effect: 'NO_SERVICE', headerText: { translation: [{ text: 'Trip cancelled' }] }, severityLevel: 'WARNING',
        },
      },
      {
        id: 'alert:detour-T2',
        alert: {
          activePeriod: [{ start: secs('2026-03-09T23:00:00Z'), end: secs('2026-03-10T23:00:00Z') }],
          informedEntity: [{ trip: { tripId: 'T2' }, routeId: 'R1' }],
          cause: 'UNKNOWN_CAUSE', effect: 'DETOUR', headerText: { translation: [{ text: 'Detour: Works' }] }, severityLevel: 'WARNING',
        },
      },
    ]);
  });
});

function decodePolyline(s: string): [number, number][] {
  const out: [number, number][] = [];
  let i = 0;
  let lat = 0;
  let lon = 0;
  const next = () => {
    let shift = 0;
    let result = 0;
    let b: number;
    do {
      b = s.charCodeAt(i++) - 63;
      result |= (b & 0x1f) << shift;
      shift += 5;
    } while (b >= 0x20);
    return result & 1 ? ~(result >> 1) : result >> 1;
  };
  while (i < s.length) {
    lat += next();
    lon += next();
    out.push([lon / 1e5, lat / 1e5]);
  }
  return out;
}

describe('GTFS-Realtime validator rules (MobilityData rules the tests can check)', () => {
  it('hold for every feed: timestamps, unique ids, stop_sequence order, ids present in the published GTFS', async () => {
    const gtfs = async (sql: string) => new Set((await f.t.db.query<{ id: string }>(sql, [f.g])).map((r) => r.id));
    const trips = await gtfs('SELECT trip_id AS id FROM gtfs_trips WHERE group_id = $1');
    const routes = await gtfs('SELECT route_id AS id FROM gtfs_routes WHERE group_id = $1');
    const stops = await gtfs('SELECT stop_id AS id FROM gtfs_stops WHERE group_id = $1');
    const tm = (await readFeed(f, 'trip-modifications')).message!;
    const declaredStops = new Set(tm.entity.filter((e: any) => e.stop).map((e: any) => e.stop.stopId));
    const tmIds = new Set(tm.entity.map((e: any) => e.id));
    for (const feed of ['trip-updates', 'vehicle-positions', 'alerts', 'trip-modifications']) {
      const m = (await readFeed(f, feed)).message!;
      // E001/E038: a header timestamp, in POSIX seconds, not in the future; gtfs_realtime_version 2.0.
      expect(m.header.gtfsRealtimeVersion).toBe('2.0');
      expect(m.header.timestamp).toBe(NOW);
      // Entity ids unique within the feed (FeedEntity.id).
      expect(new Set(m.entity.map((e: any) => e.id)).size).toBe(m.entity.length);
      for (const e of m.entity as any[]) {
        // E012: no entity timestamp after the header's.
        for (const ts of [e.tripUpdate?.timestamp, e.vehicle?.timestamp]) if (ts !== undefined) expect(ts).toBeLessThanOrEqual(m.header.timestamp);
        const trip = e.tripUpdate?.trip ?? e.vehicle?.trip;
        if (trip) {
          // E003/E004: trip and route ids of the GTFS; a modified trip names its TripModifications entity.
          if (trip.modifiedTrip) {
            expect(trips.has(trip.modifiedTrip.affectedTripId)).toBe(true);
            expect(tmIds.has(trip.modifiedTrip.modificationsId)).toBe(true);
            expect(trip.tripId).toBeUndefined();
          } else {
            expect(trips.has(trip.tripId)).toBe(true);
            expect(routes.has(trip.routeId)).toBe(true);
            expect(trip.startDate).toMatch(/^2026\d{4}$/);
          }
        }
        if (e.tripUpdate) {
          // E002: stop_sequence strictly increasing; E011: stop ids of the GTFS (or declared Stops).
          const seqs = (e.tripUpdate.stopTimeUpdate ?? []).map((u: any) => u.stopSequence).filter((s: any) => s !== undefined);
          expect(seqs).toEqual([...seqs].sort((a: number, b: number) => a - b));
          expect(new Set(seqs).size).toBe(seqs.length);
          for (const u of e.tripUpdate.stopTimeUpdate ?? []) expect(stops.has(u.stopId) || declaredStops.has(u.stopId)).toBe(true);
          // E022/E025: times never decrease along the trip, a departure is never before its arrival.
          const times: number[] = (e.tripUpdate.stopTimeUpdate ?? []).flatMap((u: any) => [u.arrival?.time, u.departure?.time].filter((x) => x !== undefined));
          expect(times).toEqual([...times].sort((a, b) => a - b));
        }
        for (const ie of e.alert?.informedEntity ?? []) {
          if (ie.trip) expect(trips.has(ie.trip.tripId)).toBe(true);
          if (ie.routeId) expect(routes.has(ie.routeId)).toBe(true);
        }
        for (const mod of e.tripModifications?.modifications ?? []) {
          for (const r of mod.replacementStops) expect(stops.has(r.stopId) || declaredStops.has(r.stopId)).toBe(true);
          const times = mod.replacementStops.map((r: any) => r.travelTimeToStop);
          expect(times).toEqual([...times].sort((a: number, b: number) => a - b));
        }
      }
    }
  });
});

describe('the feed cache', () => {
  it('answers 304 to If-None-Match and If-Modified-Since while the content is unchanged, and refreshes after the interval', async () => {
    const first = await readFeed(f, 'alerts');
    const etag = first.headers.etag as string;
    const lastModified = first.headers['last-modified'] as string;
    expect(etag).toMatch(/^W\/"/);
    expect(first.headers['cache-control']).toBe('public, max-age=5');
    expect((await readFeed(f, 'alerts', { 'if-none-match': etag })).status).toBe(304);
    expect((await readFeed(f, 'alerts', { 'if-none-match': `"other", ${etag}` })).status).toBe(304);
    expect((await readFeed(f, 'alerts', { 'if-modified-since': lastModified })).status).toBe(304);
    expect((await readFeed(f, 'alerts', { 'if-modified-since': new Date(Date.parse(lastModified) - 1000).toUTCString() })).status).toBe(200);
    // If-None-Match wins over If-Modified-Since.
    expect((await readFeed(f, 'alerts', { 'if-none-match': '"other"', 'if-modified-since': lastModified })).status).toBe(200);

    // A new message is in the database; the cache serves the snapshot until the refresh interval has passed.
    await putUpdate(f, { update_id: 'msg-R1', kind: 'message', route_id: 'R1', start_date: '2026-03-10', end_date: '2026-03-10', message: { header: 'Crowded', severity: 'info' } });
    f.clock.advance(4_000);
    expect((await readFeed(f, 'alerts', { 'if-none-match': etag })).status).toBe(304);
    f.clock.advance(1_000);
    // Past the interval: the request is answered from the last snapshot at once and starts the rebuild.
    expect((await readFeed(f, 'alerts', { 'if-none-match': etag })).status).toBe(304);
    await settled(f);
    const after = await readFeed(f, 'alerts', { 'if-none-match': etag });
    expect(after.status).toBe(200);
    expect(after.headers.etag).not.toBe(etag);
    expect(after.headers['last-modified']).toBe(new Date('2026-03-10T07:35:05Z').toUTCString());
    expect(after.message!.entity.map((e: any) => e.id)).toEqual(['alert:cancel-T1', 'alert:detour-T2', 'alert:msg-R1']);
    expect(after.message!.entity[2].alert).toMatchObject({ informedEntity: [{ routeId: 'R1' }], severityLevel: 'INFO', effect: 'OTHER_EFFECT' });

    // Another refresh with the same content: a newer header timestamp, the same ETag and Last-Modified.
    f.clock.advance(5_000);
    await settled(f);
    const same = await readFeed(f, 'alerts');
    expect(same.message!.header.timestamp).toBe(secs('2026-03-10T07:35:10Z'));
    expect(same.headers.etag).toBe(after.headers.etag);
    expect(same.headers['last-modified']).toBe(after.headers['last-modified']);

    // Vehicles unseen for more than 300 s drop out as the clock moves: the bus seen at 07:30:00 at 07:35:10.
    const vp = await readFeed(f, 'vehicle-positions');
    expect(vp.message!.entity.map((e: any) => e.id)).toEqual([`vehicle:${bus}`]);
    expect(nearlyStale).toBeDefined();
  });

  it('answers 404 for an unknown group, without a credential', async () => {
    const r = await inject(f.t, { url: '/api/v4/groups/nope/gtfs-rt/trip-updates' });
    expect(r.status).toBe(404);
    expect(r.json.code).toBe('GroupNotFound');
  });
});
