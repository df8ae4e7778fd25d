/**
 * The computation of a trip's tracking, without a database (tracking/compute.ts): what the round
 * reads is handed to computeTrip, whose answer is checked against hand-computed truth.
 * Distances: 0.001° of latitude = 0.111 km at 48.85°N (S1 → S3 = 2.224 km).
 */
import { describe, expect, it } from 'vitest';
import type { ScheduledStopTime, ScheduledTrip } from '../../src/domains/gtfs/service-days.js';
import { Itinerary } from '../../src/domains/trips/passages.js';
import { computeTrip, pickInstance, type DutyRow, type PositionRow, type Recorded, type TripMemo } from '../../src/domains/trips/tracking/compute.js';
import { scenario } from '../helpers/tracks.js';

const T0 = Date.parse('2026-03-02T07:00:00Z');
const at = (min: number, s = 0) => new Date(T0 + min * 60_000 + s * 1000);
const stop = (k: number, lat: number, arr: number, dep: number): ScheduledStopTime => ({
  stop_id: `S${k}`, stop_sequence: k, stop_name: `Stop ${k}`, stop_lat: lat, stop_lon: 2.35, stop_headsign: null,
  arrival_time: null, departure_time: null, arrival_at: at(arr), departure_at: at(dep), pickup_type: null, drop_off_type: null, timepoint: null, shape_dist_traveled: null,
});
// Scheduled 07:00 at S1, 07:10–07:11 at S2, 07:20 at S3.
const STOPS = [stop(1, 48.85, 0, 0), stop(2, 48.86, 10, 11), stop(3, 48.87, 20, 20)];
const SHAPE = [{ sequence: 1, lat: 48.85, lon: 2.35, dist_traveled: null }, { sequence: 2, lat: 48.87, lon: 2.35, dist_traveled: null }];
const TRIP = { trip_id: 'T1', route_id: 'R1', direction_id: 0, block_id: 'B1', headsign: 'Third', first_departure: 28_800, first_departure_at: at(0), last_arrival_at: at(20) } as ScheduledTrip;
const DUTIES: DutyRow[] = [
  { device_id: 'D1', driver_id: 'drv1', vehicle_id: 'bus1', signed_on_at: at(-30), signed_off_at: at(10, 30) },
  { device_id: 'D1', driver_id: 'drv2', vehicle_id: 'bus2', signed_on_at: at(10, 30), signed_off_at: null },
  { device_id: 'D9', driver_id: 'other', vehicle_id: 'other', signed_on_at: at(-30), signed_off_at: null },
];
const empty: Recorded = { events: [], positions: [], runs: [], counts: [] };

describe('computeTrip (pure)', () => {
  it('nothing recorded: no tracking (the stored one is deleted)', () => {
    expect(computeTrip(empty, { gtfsId: 'v1', trip: TRIP, stops: STOPS, shape: SHAPE }, DUTIES)).toBeNull();
  });

  it('passages from an event and from positions, delays, who operated it, passengers and km against hand-computed truth', () => {
    // Departure event at S1 at 07:01 (60 s late); a fix a minute from 07:01, 0.001° north each:
    // S2 departed 30 m beyond it at 07:11:16 (16 s late); S3 reached at 07:21 and still there at 07:22 (which
    // confirms the arrival): arrived 15 m before it, at 07:20:52 (52 s late; the last stop is passed at its arrival).
    const rec: Recorded = {
      runs: [{ device_id: 'D1', kind: 'start', at: at(-2), start_time: null }],
      events: [{ device_id: 'D1', at: at(1), event: 'departure', stop_id: 'S1', stop_sequence: 1, start_time: null, lat: 48.85, lon: 2.35, gps_valid: true }],
      positions: Array.from({ length: 22 }, (_, k) => ({ device_id: 'D1', at: at(1 + k), lat: 48.85 + 0.001 * Math.min(k, 20), lon: 2.35, gps_valid: true, start_time: null })),
      // 5 board at S1 (two doors), 2 alight and 1 boards at S2: the load peaks at 5.
      counts: [
        { device_id: 'D1', at: at(1), stop_id: 'S1', stop_sequence: 1, door: 1, boardings: 3, alightings: 0 },
        { device_id: 'D1', at: at(1), stop_id: 'S1', stop_sequence: 1, door: 2, boardings: 2, alightings: 0 },
        { device_id: 'D1', at: at(11), stop_id: 'S2', stop_sequence: null, door: 1, boardings: 1, alightings: 2 },
      ],
    };
    const r = computeTrip(rec, { gtfsId: 'v1', trip: TRIP, stops: STOPS, shape: SHAPE }, DUTIES)!;
    expect(r.stops.map((s) => [s.s.stop_id, s.p?.source ?? null, s.p?.at.toISOString() ?? null, s.delay, s.vehicle, s.in, s.out])).toEqual([
      ['S1', 'event', at(1).toISOString(), 60, 'bus1', [3, 2], [0, 0]],
      ['S2', 'position', at(11, 16).toISOString(), 16, 'bus2', [1], [2]],
      ['S3', 'position', at(20, 52).toISOString(), 52, 'bus2', [], []],
    ]);
    expect(r).toMatchObject({
      route_id: 'R1', start_time: 28_800, gtfs_id: 'v1', started_at: at(-2), ended_at: at(22), end_reported: false, delay_seconds: 52, delay_stop_sequence: 3,
      planned_stops: 3, recorded_stops: 3, unpassed_stops: [], last_passed_sequence: 3, positions: 22, invalid_positions: 0,
      boardings: 6, alightings: 2, max_load: 5, doors: 2, device_ids: ['D1'], vehicle_ids: ['bus1', 'bus2'], driver_ids: ['drv1', 'drv2'],
    });
    expect(r.km).toEqual({ tk: 2.224, vk: 2.224, recorded_commercial_km: 2.224, off_itinerary_km: 0, reliable_km: 2.224, unreliable_km: 0, percent_km: 100 });
  });

  it('the instance the reports name by start time, else the first of the day', () => {
    const a = { ...TRIP, first_departure: 100 };
    const b = { ...TRIP, first_departure: 200 };
    expect(pickInstance([a, b], 200)).toBe(b);
    expect(pickInstance([a, b], 300)).toBe(a);
    expect(pickInstance([a, b], null)).toBe(a);
    expect(pickInstance([], 200)).toBeUndefined();
  });

  it('incremental: a trip computed after each new report with its memo gives what a computation from nothing gives, also when a late fix lands in the middle', () => {
    for (const seed of [1, 2, 3]) {
      for (const name of ['line', 'terminalLoop'] as const) {
        const tr = scenario(name, seed);
        const stops = tr.stops.map((st, k) => ({ ...stop(k + 1, st.lat, k * 5, k * 5), stop_lon: st.lon }));
        const shape = tr.shape.map((p, i) => ({ sequence: i + 1, lat: p.lat, lon: p.lon, dist_traveled: null }));
        const itinerary = new Itinerary(shape.map((p) => [p.lon, p.lat] as [number, number]), shape[0]!.lat);
        // Every 7th fix invalid; a second device joins for the last fixes (kilometres per device).
        const all: PositionRow[] = tr.fixes.map((f, i) => ({ device_id: i > tr.fixes.length - 6 ? 'D2' : 'D1', at: f.at, lat: f.lat, lon: f.lon, gps_valid: i % 7 !== 3, start_time: null }));
        // Fix 10 arrives late: it is missing from the rounds until the one after fix 20.
        const late = all[10]!;
        const memo: TripMemo = {};
        for (let n = 1; n <= all.length; n++) {
          const positions = all.slice(0, n).filter((p) => p !== late || n > 20);
          const rec: Recorded = { ...empty, positions };
          const sched = { gtfsId: 'v1', trip: TRIP, stops, shape };
          const incremental = computeTrip(rec, { ...sched, itinerary }, DUTIES, memo);
          const fromNothing = computeTrip(rec, sched, DUTIES);
          expect(incremental, `${name} seed ${seed} after ${n} fixes`).toEqual(fromNothing);
        }
        expect(memo.valid!.progress.length).toBe(all.filter((p) => p.gps_valid).length);
      }
    }
  });
});
