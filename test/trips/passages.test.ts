/**
 * Stop passages and kilometres by progress along the itinerary (issue #17, section 1), as a pure
 * function, against generated tracks whose truth is known (test/helpers/tracks.ts): a layover at
 * the first stop, dwells, fixes every 5 to 15 s with 8 m of independent noise on every fix. The
 * real-time view is every prefix of the fixes: what tracking would publish after each fix.
 */
import { describe, expect, it } from 'vitest';
import { Itinerary, kilometres, stopTimes, type StopTimes } from '../../src/domains/trips/passages.js';
import { generateTrack, scenario, type Track } from '../helpers/tracks.js';

const SEEDS = Array.from({ length: 10 }, (_, i) => i + 1);
const line = (tr: Track) => tr.shape.map((p) => [p.lon, p.lat] as [number, number]);
const stopsOf = (tr: Track) => tr.stops.map((s) => ({ stop_lat: s.lat, stop_lon: s.lon }));
const fixesOf = (tr: Track, o: { device_id?: string } = {}) => tr.fixes.map((f) => ({ at: f.at, lat: f.lat, lon: f.lon, gps_valid: true, device_id: o.device_id ?? 'd' }));
const seconds = (a: Date, b: Date) => (a.getTime() - b.getTime()) / 1000;

function final(tr: Track): StopTimes[] {
  return stopTimes(new Itinerary(line(tr)), stopsOf(tr), fixesOf(tr));
}

/** For every prefix of the fixes: the stops published as passed (departure; arrival for the last stop). */
function realTime(tr: Track, check: (fixIndex: number, times: StopTimes[]) => void) {
  const it = new Itinerary(line(tr));
  const fixes = fixesOf(tr);
  for (let n = 1; n <= fixes.length; n++) check(n - 1, stopTimes(it, stopsOf(tr), fixes.slice(0, n)));
}

describe('passages by progress along the itinerary', () => {
  it('publishes no passage while approaching or dwelling (every prefix of 10 noisy tracks): the stop 40 m ahead is not passed', () => {
    let checkedApproaching = 0;
    for (const seed of SEEDS) {
      for (const tr of [scenario('line', seed), scenario('terminalLoop', seed)]) {
        const last = tr.stops.length - 1;
        realTime(tr, (i, times) => {
          const fix = tr.fixes[i]!;
          times.forEach((st, k) => {
            const passed = k === last ? st.arrival : st.departure;
            // Published only once the vehicle truly left (arrived, for the last stop).
            const truth = k === last ? tr.arrivals[k]! : tr.departures[k]!;
            if (passed) expect(fix.at.getTime(), `seed ${seed} stop ${k} published at fix ${i}`).toBeGreaterThanOrEqual(truth.getTime());
            // A stop 40 m ahead (or less, still approaching): not arrived, not departed.
            const ahead = tr.stops[k]!.along - fix.along;
            if (ahead >= 40) {
              checkedApproaching++;
              expect(st.arrival, `seed ${seed} stop ${k} arrival ${ahead.toFixed(0)} m ahead`).toBeNull();
              expect(st.departure).toBeNull();
            }
          });
        });
      }
    }
    expect(checkedApproaching).toBeGreaterThan(1000);
  });

  it('departure from the first stop is when the bus leaves after its layover (±15 s), never during it', () => {
    for (const seed of SEEDS) {
      const tr = scenario('line', seed, { layoverS: 1800 });
      const [first] = final(tr);
      expect(Math.abs(seconds(first!.departure!.at, tr.departures[0]!)), `seed ${seed}`).toBeLessThanOrEqual(15);
      // The arrival at the first stop is the start of the layover (its first fix).
      expect(Math.abs(seconds(first!.arrival!.at, tr.arrivals[0]!)), `seed ${seed}`).toBeLessThanOrEqual(15);
      realTime(tr, (i, times) => {
        if (tr.fixes[i]!.at < tr.departures[0]!) expect(times[0]!.departure, `seed ${seed} fix ${i} during the layover`).toBeNull();
      });
    }
  });

  it('arrival and departure at a dwelled stop within ±15 s of the truth, dwell within ±20 s', () => {
    for (const seed of SEEDS) {
      const tr = scenario('line', seed);
      const times = final(tr);
      for (let k = 1; k < tr.stops.length - 1; k++) {
        const st = times[k]!;
        expect(Math.abs(seconds(st.arrival!.at, tr.arrivals[k]!)), `seed ${seed} stop ${k} arrival`).toBeLessThanOrEqual(15);
        expect(Math.abs(seconds(st.departure!.at, tr.departures[k]!)), `seed ${seed} stop ${k} departure`).toBeLessThanOrEqual(15);
        const dwell = seconds(st.departure!.at, st.arrival!.at);
        expect(Math.abs(dwell - seconds(tr.departures[k]!, tr.arrivals[k]!)), `seed ${seed} stop ${k} dwell`).toBeLessThanOrEqual(20);
      }
      const last = tr.stops.length - 1;
      expect(Math.abs(seconds(times[last]!.arrival!.at, tr.arrivals[last]!))).toBeLessThanOrEqual(15);
      expect(times[last]!.departure).toBeNull();
    }
  });

  it('terminal loop: the last stop 40 m from the one before is not passed early (arrival ±15 s)', () => {
    for (const seed of SEEDS) {
      const tr = scenario('terminalLoop', seed);
      const times = final(tr);
      const last = tr.stops.length - 1;
      expect(Math.abs(seconds(times[last]!.arrival!.at, tr.arrivals[last]!)), `seed ${seed}`).toBeLessThanOrEqual(15);
      expect(Math.abs(seconds(times[last - 1]!.departure!.at, tr.departures[last - 1]!)), `seed ${seed}`).toBeLessThanOrEqual(15);
    }
  });

  it('a bus that reports its next trip while still driving back towards its first stop (backwards along the shape) passes nothing before it leaves (±15 s)', () => {
    for (const seed of SEEDS) {
      const trip = scenario('line', seed);
      // The previous trip: the same street the other way, from 2,000 m along this trip's shape to its first stop (210 s at 10 m/s).
      const reversed = [...trip.shapeLocal].reverse();
      const back = generateTrack({
        seed: seed + 100, shape: reversed, stopsAlong: [trip.shapeM - 2000, trip.shapeM], layoverFrom: new Date(trip.arrivals[0]!.getTime() - 210_000), layoverS: 0, dwellS: 0, afterS: 0,
      });
      const fixes = [...back.fixes.filter((f) => f.at < trip.fixes[0]!.at), ...trip.fixes];
      const it = new Itinerary(line(trip));
      const all = fixes.map((f) => ({ at: f.at, lat: f.lat, lon: f.lon }));
      for (let n = 1; n <= all.length; n++) {
        const now = all[n - 1]!.at.getTime();
        stopTimes(it, stopsOf(trip), all.slice(0, n)).forEach((st, k) => {
          if (st.departure) expect(now, `seed ${seed} stop ${k} departed at fix ${n - 1}`).toBeGreaterThanOrEqual(trip.departures[k]!.getTime());
          if (k > 0 && st.arrival) expect(now, `seed ${seed} stop ${k} arrived at fix ${n - 1}`).toBeGreaterThanOrEqual(trip.arrivals[k]!.getTime());
        });
      }
      const [first] = stopTimes(it, stopsOf(trip), all);
      expect(Math.abs(seconds(first!.departure!.at, trip.departures[0]!)), `seed ${seed}`).toBeLessThanOrEqual(15);
    }
  });

  it('a stop crossed during a GPS gap (> 120 s between fixes) or off itinerary has no time from positions', () => {
    const tr = scenario('line', 1);
    const it = new Itinerary(line(tr));
    // Drop the fixes from 45 s before the arrival at the third stop to 60 s after its departure (a gap of more than 120 s).
    const from = tr.arrivals[2]!.getTime() - 45_000;
    const to = tr.departures[2]!.getTime() + 60_000;
    const fixes = fixesOf(tr).filter((f) => f.at.getTime() < from || f.at.getTime() > to);
    let times = stopTimes(it, stopsOf(tr), fixes);
    expect([times[2]!.arrival, times[2]!.departure]).toEqual([null, null]);
    expect(times[1]!.departure).not.toBeNull();
    expect(times[3]!.arrival).not.toBeNull();
    // Off itinerary: the same fixes moved 290 m east and 330 m south, away from the shape (a detour around the stop).
    const detour = fixesOf(tr).map((f) => (f.at.getTime() >= from && f.at.getTime() <= to ? { ...f, lon: f.lon + 0.004, lat: f.lat - 0.003 } : f));
    times = stopTimes(it, stopsOf(tr), detour);
    expect([times[2]!.arrival, times[2]!.departure]).toEqual([null, null]);
    expect(times[3]!.arrival).not.toBeNull();
  });
});

describe('kilometres under GPS noise', () => {
  it('vk of a 10 km track with 8 m noise within 2 % of the truth (on the itinerary; and off it, no shape)', () => {
    for (const seed of SEEDS) {
      const tr = scenario('long', seed);
      const km = kilometres(line(tr), fixesOf(tr));
      expect(Math.abs(km.vk * 1000 - tr.drivenM) / tr.drivenM, `seed ${seed}: vk ${km.vk} km, truth ${tr.drivenM} m`).toBeLessThanOrEqual(0.02);
      expect(km).toMatchObject({ off_itinerary_km: 0, tk: 10, unreliable_km: 0 });
      expect(km.recorded_commercial_km).toBe(km.vk);
      // Without an itinerary, every km is off itinerary, filtered the same way.
      const off = kilometres([], fixesOf(tr));
      expect(Math.abs(off.vk * 1000 - tr.drivenM) / tr.drivenM, `seed ${seed}: off-itinerary vk ${off.vk} km`).toBeLessThanOrEqual(0.02);
      expect(off.off_itinerary_km).toBe(off.vk);
    }
  });

  it('a parked vehicle with 8 m noise adds 0 km (±20 m), on the itinerary or off it', () => {
    for (const seed of SEEDS) {
      const tr = scenario('line', seed, { layoverS: 3600, fixEveryS: [5, 10] });
      const parked = fixesOf(tr).filter((f) => f.at < tr.departures[0]!);
      expect(parked.length).toBeGreaterThan(300);
      expect(kilometres(line(tr), parked).vk * 1000, `seed ${seed}`).toBeLessThanOrEqual(20);
      expect(kilometres([], parked).vk * 1000, `seed ${seed}`).toBeLessThanOrEqual(20);
    }
  });

  it('dwells and the layover add nothing: vk of a whole trip with a layover within 2 % of the distance driven', () => {
    for (const seed of SEEDS) {
      for (const tr of [scenario('line', seed), scenario('terminalLoop', seed)]) {
        const km = kilometres(line(tr), fixesOf(tr));
        expect(Math.abs(km.vk * 1000 - tr.drivenM) / tr.drivenM, `seed ${seed}: vk ${km.vk} km, truth ${tr.drivenM} m`).toBeLessThanOrEqual(0.02);
      }
    }
  });
});
