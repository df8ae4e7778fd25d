/**
 * A plain journey of the EstimatedTimetable (no update applies to it) is written straight as text
 * (plainJourneyText): the text must be the one the object model writes (xmlText of journeyNode),
 * whatever the trip holds, and when its predictions change.
 */
import { describe, expect, it } from 'vitest';
import { callsOf, type FeedTrip } from '../../src/domains/feeds/network.js';
import { journeyNode, plainJourneyText, xmlText } from '../../src/domains/feeds/siri/build.js';
import type { ScheduledStopTime, ScheduledTrip } from '../../src/domains/gtfs/service-days.js';
import type { TripPrediction } from '../../src/domains/predictions/service.js';
import { emptyOverlay } from '../../src/domains/updates/overlay.js';

const DAY = Date.parse('2026-03-10T00:00:00Z');
/** A seeded generator (mulberry32): the same trips at every run. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const NAMES = [null, '', 'Gare & Lac <Nord>', 'Café "Zürich"', 'A &amp; B', 'Plain', 'x > y'];

function trip(n: number, rnd: () => number): { ft: FeedTrip; predicted: (shift: number) => FeedTrip } {
  const count = Math.floor(rnd() * 6);
  const stops: ScheduledStopTime[] = Array.from({ length: count }, (_, k) => {
    const at = DAY + 7 * 3600_000 + n * 60_000 + k * 90_000 + Math.floor(rnd() * 1000);
    return {
      stop_id: `S${n}-${k}${k === 1 ? '&' : ''}`, stop_sequence: k * 3 + 1, stop_name: NAMES[Math.floor(rnd() * NAMES.length)]!, stop_lat: null, stop_lon: null,
      arrival: null, departure: null, timepoint: null, shape_dist_traveled: null,
      arrival_at: k === 0 && rnd() < 0.5 ? null : new Date(at), departure_at: k === count - 1 && rnd() < 0.5 ? null : new Date(at + 20_000),
    } as unknown as ScheduledStopTime;
  });
  const scheduled = {
    trip_id: `T${n}`, route_id: `R${n % 5}`, direction_id: n % 3 === 0 ? null : n % 2, headsign: NAMES[n % NAMES.length]!, block_id: null, shape_id: null,
    service_id: 'WK', frequency: n % 4 === 0 ? { headway_secs: 600, exact_times: 0 } : null, start_time: '07:00:00',
    first_departure_at: stops[0]?.departure_at ?? new Date(DAY), last_arrival_at: stops[count - 1]?.arrival_at ?? new Date(DAY),
  } as unknown as ScheduledTrip;
  const made = (shift: number): FeedTrip => {
    const prediction: TripPrediction | null = n % 3 === 2 ? null : {
      trip_id: scheduled.trip_id, service_date: '2026-03-10', block_id: null, from_trip_id: n % 3 === 0 ? null : scheduled.trip_id, vehicle_ids: [],
      stops: stops.slice(1).map((s) => ({
        stop_id: s.stop_id, stop_sequence: s.stop_sequence, uncertainty_seconds: 30,
        arrival_at: s.arrival_at && new Date(s.arrival_at.getTime() + shift * 1000), departure_at: s.departure_at && new Date(s.departure_at.getTime() + shift * 1000),
      })),
    } as unknown as TripPrediction;
    const delay = prediction === null && stops.length > 0 ? { stop_sequence: stops[0]!.stop_sequence, stop_id: stops[0]!.stop_id, delay: shift, at: new Date(DAY) } : null;
    const overlay = emptyOverlay();
    return {
      key: `20260310:${scheduled.trip_id}`, service_date: '2026-03-10', trip: scheduled, gtfs_id: 'g', stops, overlay, delay, prediction, observed_at: null,
      calls: callsOf(stops, overlay, delay, prediction ? { prediction, tracked: undefined } : null), shape: null, signature: null,
    };
  };
  return { ft: made(45), predicted: made };
}

describe('a plain journey of the EstimatedTimetable', () => {
  it('is the text the object model writes, for 300 generated trips (no stop, stops without a name or a time, text to escape, frequency trips, no prediction), in two zones, predictions changed', () => {
    const rnd = random(16);
    const trips = Array.from({ length: 300 }, (_, n) => trip(n, rnd));
    for (const tz of ['Europe/Zurich', 'America/New_York']) {
      for (const shift of [45, 130]) {
        for (const { predicted } of trips) {
          const ft = predicted(shift);
          const expected = xmlText('EstimatedVehicleJourney', journeyNode(ft, tz, new Set()));
          expect(plainJourneyText(ft, tz), ft.trip.trip_id).toBe(expected);
        }
      }
    }
    // Escaped as the object model escapes, an entity given kept.
    const named = trips.map(({ ft }) => plainJourneyText(ft, 'Europe/Zurich')!).join('');
    expect(named).toContain('<StopPointName>Gare &amp; Lac &lt;Nord&gt;</StopPointName>');
    expect(named).toContain('<StopPointName/>');
  });

  it('is left to the object model when an update applies to the trip', () => {
    const { ft } = trip(1, random(3));
    const updated = { ...ft, overlay: { ...ft.overlay, applied: [{ update_id: 'u1' }] } } as unknown as FeedTrip;
    expect(plainJourneyText(updated, 'Europe/Zurich')).toBeNull();
    expect(plainJourneyText({ ...ft, overlay: { ...ft.overlay, cancelled: true } }, 'Europe/Zurich')).toBeNull();
  });
});
