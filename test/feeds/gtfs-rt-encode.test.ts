/**
 * The GTFS-Realtime feeds are encoded in slices (a city's trip-updates is megabytes): the bytes must
 * be those FeedMessage.encode writes in one piece, which every consumer's decoder reads.
 */
import GtfsRealtimeBindings from 'gtfs-realtime-bindings';
import { describe, expect, it } from 'vitest';
import { encodeFeedMessage } from '../../src/domains/feeds/gtfs-rt/feeds.js';

const rt = GtfsRealtimeBindings.transit_realtime;

/** A trip-updates message of n trips, 40 stops each, with long ids (entity lengths over 127 bytes: two-byte varints). */
function message(n: number): GtfsRealtimeBindings.transit_realtime.IFeedMessage {
  return {
    header: { gtfsRealtimeVersion: '2.0', incrementality: rt.FeedHeader.Incrementality.FULL_DATASET, timestamp: 1_790_000_000 },
    entity: Array.from({ length: n }, (_, i) => ({
      id: `trip:20261127:QV_O6-Weekday-0${43000 + i}_MISC_${i}`,
      tripUpdate: {
        trip: { tripId: `QV_O6-Weekday-0${43000 + i}_MISC_${i}`, routeId: `Q${i % 90}`, startDate: '20261127', startTime: '08:10:00' },
        stopTimeUpdate: Array.from({ length: 40 }, (_, s) => ({
          stopSequence: s + 1, stopId: `${500_000 + s}`, arrival: { time: 1_790_000_000 + 60 * s + i, uncertainty: 30 }, departure: { time: 1_790_000_030 + 60 * s + i },
        })),
        timestamp: 1_789_999_990,
      },
    })),
  };
}

describe('GTFS-Realtime encoding in slices', () => {
  it('writes the bytes FeedMessage.encode writes in one piece, a turn of the event loop after every entity, and they decode to the same message', async () => {
    for (const n of [0, 1, 300]) {
      const msg = message(n);
      const whole = Buffer.from(rt.FeedMessage.encode(msg).finish());
      const sliced = await encodeFeedMessage(msg, 0);
      expect(sliced.equals(whole), `${n} entities`).toBe(true);
      const decoded = rt.FeedMessage.decode(sliced);
      expect(decoded.entity.map((e) => e.id)).toEqual(msg.entity!.map((e) => e.id));
    }
  });

  it('gives the event loop back while it encodes a big feed', async () => {
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    try {
      await encodeFeedMessage(message(2000), 0);
    } finally {
      clearInterval(ticking);
    }
    expect(turns).toBeGreaterThan(0);
  });
});
