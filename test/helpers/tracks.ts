/**
 * Generated vehicle tracks whose truth is known: a shape (a polyline in metres east and north of
 * an origin), stops at known distances along it, a vehicle that lays over at the first stop, drives
 * with a known speed profile (constant acceleration up to a cruise speed, constant deceleration
 * into each stop), dwells at each stop, and stays at the last one; fixes at random intervals with
 * independent Gaussian noise on every fix, from a seeded PRNG. The generator knows the true
 * arrival and departure at each stop and the true distance driven.
 *
 * Coordinates go through cheap-ruler's offset, so the app's own distances (cheap-ruler) between
 * noise-free points equal the generated metres exactly.
 */
import CheapRuler from 'cheap-ruler';
import { rng } from '../../src/platform/random.js';

export interface TrackSpec {
  seed: number;
  /** The origin of the local frame. */
  origin?: { lat: number; lon: number };
  /** Shape vertices in metres [east, north] from the origin. */
  shape: [number, number][];
  /** Distance along the shape of each stop, in metres, increasing. */
  stopsAlong: number[];
  /** When the vehicle arrives at the first stop (the start of its layover). */
  layoverFrom: Date;
  /** Seconds of layover at the first stop before it leaves. */
  layoverS: number;
  /** Seconds dwelled at each intermediate stop (one number for all, or one per stop; the first and last are ignored). */
  dwellS: number | number[];
  /** Seconds the vehicle stays at the last stop, still reporting. */
  afterS?: number;
  cruiseMs?: number;
  accelMs2?: number;
  /** Fix interval, uniform in [min, max] seconds. */
  fixEveryS?: [number, number];
  /** Radial RMS noise of a fix, metres (each axis gets noiseM / √2). */
  noiseM?: number;
}

export interface Fix {
  at: Date;
  lat: number;
  lon: number;
  /** Where the vehicle truly was: metres along the shape. */
  along: number;
}

export interface Track {
  shape: { lat: number; lon: number }[];
  stops: { lat: number; lon: number; along: number }[];
  fixes: Fix[];
  /** True arrival and departure at each stop (the first stop's arrival is the start of the layover; the last stop has no departure). */
  arrivals: Date[];
  departures: (Date | null)[];
  /** The distance truly driven between the first and the last fix, metres. */
  drivenM: number;
  /** Length of the shape, metres; its vertices in the local frame (metres east and north of the origin). */
  shapeM: number;
  shapeLocal: [number, number][];
}

/** The demo's seeded PRNG (mulberry32). */
export const prng = rng;

/** A standard normal deviate (Box–Muller). */
export function gaussian(rand: () => number): number {
  const u = Math.max(rand(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

/** Seconds to drive `d` metres from stop to stop (trapezoidal, or triangular when short), and the distance covered after `t` seconds. */
function leg(d: number, v: number, a: number) {
  const accelD = (v * v) / (2 * a);
  if (2 * accelD >= d) {
    const half = Math.sqrt(d / a);
    return { duration: 2 * half, at: (t: number) => (t <= half ? 0.5 * a * t * t : d - 0.5 * a * (2 * half - t) ** 2) };
  }
  const tA = v / a;
  const cruise = (d - 2 * accelD) / v;
  return {
    duration: 2 * tA + cruise,
    at: (t: number) => (t <= tA ? 0.5 * a * t * t : t <= tA + cruise ? accelD + v * (t - tA) : d - 0.5 * a * (2 * tA + cruise - t) ** 2),
  };
}

export function generateTrack(spec: TrackSpec): Track {
  const origin = spec.origin ?? { lat: 48.85, lon: 2.35 };
  const ruler = new CheapRuler(origin.lat, 'meters');
  const toLonLat = (x: number, y: number) => ruler.offset([origin.lon, origin.lat], x, y);
  const cum = [0];
  for (let i = 1; i < spec.shape.length; i++) cum.push(cum[i - 1]! + Math.hypot(spec.shape[i]![0] - spec.shape[i - 1]![0], spec.shape[i]![1] - spec.shape[i - 1]![1]));
  const pointAt = (s: number): [number, number] => {
    let i = 1;
    while (i < cum.length - 1 && cum[i]! < s) i++;
    const f = cum[i]! === cum[i - 1]! ? 0 : Math.min(1, Math.max(0, (s - cum[i - 1]!) / (cum[i]! - cum[i - 1]!)));
    const [x0, y0] = spec.shape[i - 1]!;
    const [x1, y1] = spec.shape[i]!;
    return [x0 + f * (x1 - x0), y0 + f * (y1 - y0)];
  };

  const v = spec.cruiseMs ?? 10;
  const a = spec.accelMs2 ?? 1;
  const n = spec.stopsAlong.length;
  const dwell = (k: number) => (Array.isArray(spec.dwellS) ? spec.dwellS[k] ?? 0 : spec.dwellS);
  // The timeline: pieces [from, to) with the distance along the shape as a function of time.
  const pieces: { from: number; to: number; along: (t: number) => number }[] = [];
  const arrivals: number[] = [];
  const departures: (number | null)[] = [];
  let t = spec.layoverFrom.getTime() / 1000;
  for (let k = 0; k < n; k++) {
    const s = spec.stopsAlong[k]!;
    arrivals.push(t);
    const stay = k === 0 ? spec.layoverS : k === n - 1 ? (spec.afterS ?? 60) : dwell(k);
    pieces.push({ from: t, to: t + stay, along: () => s });
    t += stay;
    if (k === n - 1) {
      departures.push(null);
      break;
    }
    departures.push(t);
    const l = leg(spec.stopsAlong[k + 1]! - s, v, a);
    const t0 = t;
    pieces.push({ from: t0, to: t0 + l.duration, along: (x) => s + l.at(x - t0) });
    t += l.duration;
  }
  const end = t;
  const alongAt = (x: number) => (pieces.find((p) => x >= p.from && x < p.to) ?? pieces[pieces.length - 1]!).along(Math.min(x, end));

  const rand = prng(spec.seed);
  const [minEvery, maxEvery] = spec.fixEveryS ?? [5, 15];
  const sigma = (spec.noiseM ?? 8) / Math.SQRT2;
  const fixes: Fix[] = [];
  for (let x = arrivals[0]! + rand() * minEvery; x < end; x += minEvery + rand() * (maxEvery - minEvery)) {
    const along = alongAt(x);
    const [px, py] = pointAt(along);
    const [lon, lat] = toLonLat(px + sigma * gaussian(rand), py + sigma * gaussian(rand));
    fixes.push({ at: new Date(Math.round(x * 1000)), lat, lon, along });
  }
  const date = (x: number) => new Date(Math.round(x * 1000));
  const shape = spec.shape.map(([x, y]) => toLonLat(x, y)).map(([lon, lat]) => ({ lat, lon }));
  const stops = spec.stopsAlong.map((s) => {
    const [lon, lat] = toLonLat(...pointAt(s));
    return { lat, lon, along: s };
  });
  return {
    shape,
    stops,
    fixes,
    arrivals: arrivals.map(date),
    departures: departures.map((d) => (d === null ? null : date(d))),
    drivenM: fixes.length > 1 ? fixes[fixes.length - 1]!.along - fixes[0]!.along : 0,
    shapeM: cum[cum.length - 1]!,
    shapeLocal: spec.shape,
  };
}

/**
 * The scenarios the tests and the measurements share (all with a layover at the first stop):
 * - `line`: 3.3 km with three right-angle turns, 5 stops, dwells of 20 to 40 s;
 * - `terminalLoop`: the last stop 40 m (straight line) from the one before, 240 m around the loop;
 * - `long`: 10 km zigzag, 11 stops (vk under noise).
 */
export function scenario(name: 'line' | 'terminalLoop' | 'long', seed: number, o: Partial<TrackSpec> = {}): Track {
  const layoverFrom = new Date('2026-03-02T06:50:00Z');
  if (name === 'line') {
    return generateTrack({
      seed, layoverFrom, layoverS: 600, dwellS: [0, 30, 20, 40, 0],
      shape: [[0, 0], [0, 1000], [800, 1000], [800, 2000], [1300, 2000]], stopsAlong: [0, 600, 1400, 2300, 3300], ...o,
    });
  }
  if (name === 'terminalLoop') {
    // North 1 km to S3 at (0, 1000), then the loop: north 100 m, east 40 m, south 100 m to S4 at (40, 1000).
    return generateTrack({
      seed, layoverFrom, layoverS: 300, dwellS: [0, 25, 30, 0],
      shape: [[0, 0], [0, 1100], [40, 1100], [40, 1000]], stopsAlong: [0, 500, 1000, 1240], ...o,
    });
  }
  const shape: [number, number][] = [[0, 0]];
  for (let i = 1; i <= 10; i++) shape.push([i % 2 === 1 ? 600 : 0, 800 * i]); // ten legs of 1000 m
  return generateTrack({ seed, layoverFrom, layoverS: 300, dwellS: 25, shape, stopsAlong: Array.from({ length: 11 }, (_, i) => i * 1000), ...o });
}
