import GtfsRealtimeBindings from 'gtfs-realtime-bindings';
import { describe, expect, it } from 'vitest';
import { scanFeed } from '../../bench/gtfs-rt-scan.mjs';

const { FeedMessage } = GtfsRealtimeBindings.transit_realtime;

/**
 * A feed with every kind of field the scan must skip around: stop time updates, positions
 * (fixed32 floats), alerts with translations, entities deleted or without the field read, a
 * timestamp past 2^32 and a vehicle position with none.
 */
function feed(): Uint8Array {
  const stu = (seq: number, time: number) => ({ stopSequence: seq, stopId: `S${seq}`, arrival: { time, delay: 30, uncertainty: 20 }, departure: { time: time + 10 } });
  return FeedMessage.encode(FeedMessage.fromObject({
    header: { gtfsRealtimeVersion: '2.0', incrementality: 0, timestamp: 4_300_000_123 },
    entity: [
      { id: 'tu-1', tripUpdate: { trip: { tripId: 'T1', startDate: '20261207', routeId: 'R1' }, vehicle: { id: 'V1' }, stopTimeUpdate: [stu(1, 1_800_000_000), stu(2, 1_800_000_060)], timestamp: 1_800_000_000, delay: 30 } },
      { id: 'tu-2', tripUpdate: { trip: { routeId: 'R2', startTime: '08:00:00', startDate: '20261207', tripId: 'T2 ünïcode' }, stopTimeUpdate: [stu(7, 1_800_000_500)] } },
      { id: 'tu-3', tripUpdate: { trip: { routeId: 'R3' } } },
      { id: 'gone', isDeleted: true },
      { id: 'al-1', alert: { headerText: { translation: [{ text: 'Detour', language: 'en' }] }, informedEntity: [{ routeId: 'R1' }] } },
      { id: 'vp-1', vehicle: { trip: { tripId: 'T1' }, vehicle: { id: 'V1', label: 'bus 1' }, position: { latitude: 40.7, longitude: -73.9, bearing: 90, speed: 8.5 }, currentStopSequence: 2, timestamp: 1_800_000_042 } },
      { id: 'vp-2', vehicle: { position: { latitude: 40.8, longitude: -73.8 }, timestamp: 1_800_000_043 } },
      { id: 'vp-3', vehicle: { vehicle: { id: 'V3' }, position: { latitude: 40.9, longitude: -73.7 } } },
    ],
  })).finish();
}

/** What the consumer read of a feed decoded whole with gtfs-realtime-bindings (as it did before the scan). */
function decoded(body: Uint8Array) {
  const msg = FeedMessage.decode(body);
  const header = Number(msg.header.timestamp) * 1000;
  const vehicles: [string, number][] = [];
  for (const e of msg.entity) if (e.vehicle?.vehicle?.id) vehicles.push([e.vehicle.vehicle.id, Number(e.vehicle.timestamp) * 1000]);
  const trips = msg.entity.map((e) => e.tripUpdate?.trip?.tripId).filter((x): x is string => !!x);
  return { header, vehicles, trips };
}

describe("bench:network's consumer scan of a GTFS-Realtime feed", () => {
  it('reads the trips of trip-updates as decoding the feed whole does', () => {
    const whole = decoded(feed());
    expect(scanFeed('trip-updates', feed())).toEqual({ header: whole.header, trips: whole.trips });
    expect(whole.trips).toEqual(['T1', 'T2 ünïcode']);
    expect(whole.header).toBe(4_300_000_123_000);
  });

  it('reads the vehicles of vehicle-positions, with their position times, as decoding the feed whole does', () => {
    const whole = decoded(feed());
    expect(scanFeed('vehicle-positions', feed())).toEqual({ header: whole.header, vehicles: whole.vehicles });
    expect(whole.vehicles).toEqual([['V1', 1_800_000_042_000], ['V3', 0]]);
  });

  it('reads an empty feed as one with no entity', () => {
    const empty = FeedMessage.encode(FeedMessage.fromObject({ header: { gtfsRealtimeVersion: '2.0', timestamp: 1_800_000_000 } })).finish();
    expect(scanFeed('trip-updates', empty)).toEqual({ header: 1_800_000_000_000, trips: [] });
  });
});
