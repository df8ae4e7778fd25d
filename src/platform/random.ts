/**
 * Seeded randomness for the demo network and the simulator: the same seed gives the same
 * network, and the same (seed, date, vehicle) gives the same day of reports, so a restarted
 * simulator sends the same item ids again and the service acknowledges them as duplicates.
 */
import { createHash } from 'node:crypto';

export type Rng = () => number;

/** mulberry32: a small, fast generator of floats in [0, 1). */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A generator seeded from any text (a seed and the names of what it draws for). */
export function rngOf(...parts: (string | number)[]): Rng {
  return rng(createHash('sha256').update(parts.join('|')).digest().readUInt32LE(0));
}

export const between = (r: Rng, min: number, max: number) => min + (max - min) * r();
export const intBetween = (r: Rng, min: number, max: number) => Math.floor(between(r, min, max + 1));
export const pick = <T>(r: Rng, list: readonly T[]): T => list[Math.floor(r() * list.length)]!;

/** A normally distributed draw (Box-Muller). */
export function normal(r: Rng, mean: number, sd: number): number {
  const u = Math.max(r(), 1e-12);
  return mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
}

/** A Poisson draw (Knuth; the demo's means are small). */
export function poisson(r: Rng, mean: number): number {
  const limit = Math.exp(-mean);
  let k = 0;
  let p = r();
  while (p > limit) {
    k++;
    p *= r();
  }
  return k;
}

/** A UUID (version 5 layout) derived from text: a stable client id for a simulated report item. */
export function stableUuid(...parts: (string | number)[]): string {
  const h = createHash('sha1').update(parts.join('|')).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
