/**
 * The index of a service day's trips (service-days.ts dayIndex, tripsOverlapping): what the feeds'
 * snapshot and predictTrips take from it is what a walk of the day's every trip gives.
 */
import { describe, expect, it } from 'vitest';
import { dayIndex, tripsOverlapping, type ScheduledTrip, type ServiceDay } from '../../src/domains/gtfs/service-days.js';

/** A day of `n` trips from a seeded generator: runs of 5 minutes to 4 hours, a few frequency instances, departures in the day's order. */
function generatedDay(n: number, seed: number): ServiceDay {
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const dayStart = new Date('2026-11-30T05:00:00Z');
  const trips: ScheduledTrip[] = [];
  for (let i = 0; i < n; i++) {
    const first = Math.floor(4 * 3600 + rnd() * 20 * 3600);
    // Mostly short runs, one in fifty very long: the window must reach back far enough for them.
    const run = rnd() < 0.02 ? 3 * 3600 + Math.floor(rnd() * 3600) : 300 + Math.floor(rnd() * 5400);
    const frequency = rnd() < 0.05 ? { headway_secs: 600, exact_times: 0 } : null;
    const id = frequency ? `f${i % 7}` : `t${i}`;
    trips.push({
      trip_id: id, route_id: `r${i % 13}`, service_id: 'wk', block_id: `b${i % 97}`, shape_id: null, direction_id: 0, headsign: null, short_name: null,
      wheelchair_accessible: null, bikes_allowed: null, first_stop_id: 's1', first_stop_sequence: 1, last_stop_id: 's2', last_stop_sequence: 2, stop_count: 2,
      first_departure: first, last_arrival: first + run, start_time: String(first), frequency,
      first_departure_at: new Date(dayStart.getTime() + first * 1000), last_arrival_at: new Date(dayStart.getTime() + (first + run) * 1000),
    });
  }
  trips.sort((a, b) => a.first_departure - b.first_departure || (a.trip_id < b.trip_id ? -1 : 1));
  return { groupId: 'g', serviceDate: '2026-11-30', gtfsId: 'v1', timezone: 'America/New_York', dayStart, trips };
}

describe('dayIndex', () => {
  it("tripsOverlapping gives the timetable trips whose run overlaps the window, in the day's order, as a walk of every trip does", () => {
    for (const seed of [1, 2, 3]) {
      const day = generatedDay(3000, seed);
      const index = dayIndex(day);
      for (let from = 3 * 3600; from <= 26 * 3600; from += 1777) {
        for (const horizon of [0, 600, 3600]) {
          const walked = day.trips.filter((t) => !t.frequency && t.last_arrival >= from && t.first_departure <= from + horizon);
          const found = tripsOverlapping(index, from, from + horizon);
          expect(found.map((t) => t.trip_id)).toEqual(walked.map((t) => t.trip_id));
        }
      }
      // The long runs are in the windows they overlap even though they departed hours before.
      const long = day.trips.find((t) => !t.frequency && t.last_arrival - t.first_departure > 3 * 3600)!;
      expect(tripsOverlapping(index, long.last_arrival - 60, long.last_arrival - 60)).toContain(long);
    }
  });

  it("indexes every instance by trip_id (a frequency trip's together), the timetable trips by id and by block, once per day", () => {
    const day = generatedDay(2000, 7);
    const index = dayIndex(day);
    expect(dayIndex(day)).toBe(index);
    for (const [id, instances] of index.instances) expect(instances).toEqual(day.trips.filter((t) => t.trip_id === id));
    expect([...index.instances.values()].flat()).toHaveLength(day.trips.length);
    expect([...index.byId.values()]).toEqual(day.trips.filter((t) => !t.frequency));
    for (const [block, trips] of index.blocks) expect(trips).toEqual(day.trips.filter((t) => !t.frequency && t.block_id === block));
  });
});
