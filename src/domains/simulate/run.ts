/**
 * A simulated vehicle's service day, from the published schedule and the traffic model's truth:
 * the items its driver application reports, generated on demand for any window of time, so a
 * whole network's day never sits in memory as items.
 *
 * Per duty (one driver; a relief starts a new duty): sign-on 10–16 minutes before the first
 * trip, then per trip: trip_start a minute before leaving (or at the end of the previous trip),
 * `departure` at the first stop, `arrival` and `departure` at each intermediate stop (what a
 * driver application sends where it can tell them apart: docs/device-api.md), `arrival` at the
 * last stop, trip_end 30 s later, a passenger count at the front door of each stop with
 * boardings or alightings; then the sign-off 3–6 minutes after the last trip. Positions every
 * `period` seconds from sign-on to sign-off, each fix off by a Gaussian GPS error (8 m RMS by
 * default): moving evenly along the shape between two stops, still while dwelling and laying over.
 *
 * Every item's id is a UUID derived from (seed, date, vehicle, what, when): the same day sent
 * again (a restart, a retried batch) carries the same ids, and the service answers `duplicates`.
 */
import CheapRuler from 'cheap-ruler';
import { intBetween, poisson, rngOf, stableUuid } from '../../platform/random.js';
import type { ScheduleTrip, ServiceDaySchedule } from '../schedule/schemas.js';
import { gpsError, type TrafficTrip, type TripTruth } from './traffic.js';

type LonLat = [number, number];

export interface Item {
  id: string;
  type: string;
  at: string;
}

/** A trip of the schedule, ready to drive: calls with full times and their distance along its line. */
export interface TripPlan extends TrafficTrip {
  trip: ScheduleTrip;
  frequency: boolean;
  line: LonLat[];
  /** Metres along `line` of each of its points, and of each call. */
  lineDist: number[];
  stopDist: number[];
}

export interface Duty {
  driver_id: string;
  trips: { plan: TripPlan; truth: TripTruth }[];
}

export interface RunOptions {
  seed: number;
  /** Seconds between two positions. */
  period: number;
  /** GPS error, metres RMS. */
  gpsNoise: number;
  /** Passenger counts at each stop (true). */
  passengerCounts: boolean;
}

/** The key of a trip of the schedule: trip_id, and the start time of a frequency instance. */
export const tripKey = (t: ScheduleTrip) => (t.frequency ? `${t.trip_id}@${t.start_time}` : t.trip_id);

/** The trips of a day's schedule (those `keep` accepts) with their geometry. */
export function tripPlans(s: ServiceDaySchedule, keep: (t: ScheduleTrip) => boolean = () => true): TripPlan[] {
  const stops = new Map(s.stops.map((x) => [x.stop_id, x]));
  const shapes = new Map(s.shapes.map((x) => [x.shape_id, x]));
  const rulerLat = s.stops.find((x) => x.lat !== null)?.lat ?? 0;
  const ruler = new CheapRuler(rulerLat, 'meters');
  const lineCache = new Map<string, { line: LonLat[]; dist: number[] }>();
  /** Stop distances by shape and stop pattern: the trips of a pattern share them. */
  const patternCache = new Map<string, number[]>();
  const out: TripPlan[] = [];
  for (const trip of s.trips) {
    if (!keep(trip)) continue;
    const st = trip.stop_times;
    const points: LonLat[] = st.stop_id.map((id) => {
      const p = stops.get(id);
      return [p?.lon ?? 0, p?.lat ?? 0];
    });
    if (points.length < 2) continue;
    const shape = trip.shape_id ? shapes.get(trip.shape_id) : undefined;
    let line: LonLat[];
    let lineDist: number[];
    if (shape && shape.lat.length >= 2) {
      const cached = lineCache.get(shape.shape_id) ?? (() => {
        const l = shape.lon.map((lon, i) => [lon, shape.lat[i]!] as LonLat);
        const d = cumulative(ruler, l);
        const v = { line: l, dist: d };
        lineCache.set(shape.shape_id, v);
        return v;
      })();
      line = cached.line;
      lineDist = cached.dist;
    } else {
      line = points;
      lineDist = cumulative(ruler, line);
    }
    // Each call projected on the line, never behind the previous one (loops, terminals close together).
    const pattern = shape ? `${shape.shape_id}\u0000${st.stop_id.join('\u0000')}` : null;
    let stopDist = pattern ? patternCache.get(pattern) : undefined;
    if (!stopDist) {
      stopDist = [];
      let fromIndex = 0;
      for (const p of points) {
        const { index, t } = pointOnLineFrom(ruler, line, p, fromIndex);
        fromIndex = index;
        const d = lineDist[index]! + t * (lineDist[index + 1]! - lineDist[index]!);
        stopDist.push(Math.max(d, stopDist[stopDist.length - 1] ?? 0));
      }
      if (pattern) patternCache.set(pattern, stopDist);
    }
    const { arrival, departure } = fillTimes(st.arrival, st.departure, stopDist);
    out.push({
      key: tripKey(trip),
      trip_id: trip.trip_id, start_time: trip.frequency ? trip.start_time : null, frequency: trip.frequency !== null,
      arrival, departure, stop_id: st.stop_id, timepoint: st.timepoint.map((x) => x === 1),
      trip, line, lineDist, stopDist,
    });
  }
  return out;
}

function cumulative(ruler: CheapRuler, line: LonLat[]): number[] {
  const d = [0];
  for (let i = 1; i < line.length; i++) d.push(d[i - 1]! + ruler.distance(line[i - 1]!, line[i]!));
  return d;
}

/** The closest point of the line to p, searching from segment `from` onwards (the earliest of equals). */
function pointOnLineFrom(ruler: CheapRuler, line: LonLat[], p: LonLat, from: number): { index: number; t: number } {
  const r = ruler.pointOnLine(from > 0 ? line.slice(from) : line, p);
  return { index: r.index + from, t: r.t };
}

/** Times at every call: a missing time interpolated by distance between the known ones. */
function fillTimes(arr: readonly (number | null)[], dep: readonly (number | null)[], dist: readonly number[]): { arrival: number[]; departure: number[] } {
  const n = arr.length;
  const known: number[] = [];
  for (let i = 0; i < n; i++) if ((arr[i] ?? dep[i]) !== null && (arr[i] ?? dep[i]) !== undefined) known.push(i);
  const arrival = new Array<number>(n);
  const departure = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const a = arr[i] ?? dep[i] ?? null;
    const d = dep[i] ?? arr[i] ?? null;
    if (a !== null && d !== null) {
      arrival[i] = a;
      departure[i] = d;
      continue;
    }
    const prev = [...known].reverse().find((k) => k < i) ?? known[0]!;
    const next = known.find((k) => k > i) ?? known[known.length - 1]!;
    const t0 = dep[prev] ?? arr[prev]!;
    const t1 = arr[next] ?? dep[next]!;
    const span = dist[next]! - dist[prev]!;
    const x = span > 0 ? (dist[i]! - dist[prev]!) / span : (i - prev) / Math.max(1, next - prev);
    arrival[i] = departure[i] = Math.round(t0 + (t1 - t0) * x);
  }
  return { arrival, departure };
}

/** One vehicle's day: its duties, the truth of its trips, and the items they make, by window. */
export class VehicleRun {
  readonly signOn: number[] = [];
  readonly signOff: number[] = [];
  /** First sign-on and last sign-off (epoch ms). */
  readonly from: number;
  readonly to: number;
  private readonly ruler: CheapRuler;
  private readonly dayStartMs: number;
  private readonly cache = new Map<string, { at: number; item: Item }[]>();

  constructor(
    readonly key: string,
    readonly serviceDate: string,
    dayStart: Date,
    readonly vehicleId: string,
    readonly deviceId: string,
    readonly duties: Duty[],
    private readonly o: RunOptions,
  ) {
    this.dayStartMs = dayStart.getTime();
    const first = duties[0]!.trips[0]!.plan;
    this.ruler = new CheapRuler(first.line[0]![1], 'meters');
    let free = -Infinity;
    duties.forEach((duty, d) => {
      const r = rngOf(o.seed, serviceDate, key, 'duty', d);
      const start = this.ms(duty.trips[0]!.truth.passing[0]!);
      const end = this.ms(last(last(duty.trips).truth.arrival));
      const on = Math.max(free + 60_000, start - intBetween(r, 10, 16) * 60_000);
      const off = Math.max(on + 60_000, end + intBetween(r, 3, 6) * 60_000);
      this.signOn.push(on);
      this.signOff.push(off);
      free = off;
    });
    this.from = this.signOn[0]!;
    this.to = last(this.signOff);
  }

  private ms(s: number): number {
    return this.dayStartMs + s * 1000;
  }

  /** The items whose time lies in (from, to] (epoch ms), by time. */
  items(from: number, to: number): { at: number; item: Item }[] {
    if (to <= this.from - 1 || from >= this.to) return [];
    const out: { at: number; item: Item }[] = [];
    const push = (list: { at: number; item: Item }[]) => {
      for (const x of list) if (x.at > from && x.at <= to) out.push(x);
    };
    this.duties.forEach((duty, d) => {
      const on = this.signOn[d]!;
      const off = this.signOff[d]!;
      if (off < from || on > to) return;
      const id = (...what: (string | number)[]) => stableUuid(this.o.seed, this.serviceDate, this.key, ...what);
      push([
        { at: on, item: { id: id('sign_on', d), type: 'sign_on', at: iso(on), driver_id: duty.driver_id, vehicle_id: this.vehicleId, info: { simulator: true } } as Item },
        { at: off, item: { id: id('sign_off', d), type: 'sign_off', at: iso(off), info: { remarks: d === this.duties.length - 1 ? 'end of service' : 'relief' } } as Item },
      ]);
      duty.trips.forEach((t, k) => {
        const prevEnd = k > 0 ? this.ms(last(duty.trips[k - 1]!.truth.arrival)) + 30_000 : on;
        const start = Math.max(prevEnd + 1000, this.ms(t.truth.passing[0]!) - 60_000);
        const end = this.ms(last(t.truth.arrival)) + 30_000;
        if (end < from || start > to) return;
        push(this.tripItems(t.plan, t.truth, start));
      });
    });
    push(this.positions(Math.max(from, this.from - 1), Math.min(to, this.to)));
    return out.sort((a, b) => a.at - b.at);
  }

  /** The events and counts of one trip (cached: a trip is asked for at each send while it runs). */
  private tripItems(p: TripPlan, truth: TripTruth, startAt: number): { at: number; item: Item }[] {
    const cached = this.cache.get(p.key);
    if (cached) return cached;
    if (this.cache.size > 8) this.cache.clear();
    const r = rngOf(this.o.seed, this.serviceDate, this.key, 'trip', p.key);
    const id = (...what: (string | number)[]) => stableUuid(this.o.seed, this.serviceDate, this.key, p.key, ...what);
    const ref = { trip_id: p.trip_id, service_date: this.serviceDate, ...(p.frequency ? { start_time: p.trip.start_time } : {}) };
    const out: { at: number; item: Item }[] = [];
    const add = (at: number, what: string, type: string, fields: Record<string, unknown>) => out.push({ at, item: { id: id(what), type, at: iso(at), ...fields } });
    const n = p.stop_id.length;
    add(startAt, 'trip_start', 'trip_start', { ...ref, ...(p.trip.block_id ? { block_id: p.trip.block_id } : {}) });
    const event = (i: number, event: string, s: number) => {
      const at = this.ms(s);
      add(at, `${event}|${i}`, 'trip_event', { ...ref, event, stop_id: p.stop_id[i], stop_sequence: p.trip.stop_times.stop_sequence[i], ...this.place(p, p.stopDist[i]!, r), gps_valid: true });
    };
    let load = 0;
    for (let i = 0; i < n; i++) {
      if (i > 0) event(i, 'arrival', truth.arrival[i]!);
      if (i < n - 1) event(i, 'departure', truth.passing[i]!);
      if (this.o.passengerCounts) {
        const alight = i === n - 1 ? load : Math.min(load, poisson(r, load * 0.18));
        const board = i === n - 1 ? 0 : poisson(r, 3);
        load += board - alight;
        if (board + alight > 0) {
          add(this.ms(truth.arrival[i]!) + 1000, `count|${i}`, 'passenger_count', {
            ...ref, stop_id: p.stop_id[i], stop_sequence: p.trip.stop_times.stop_sequence[i], door: 1, counts: [{ category: 'adults', boardings: board, alightings: alight }],
          });
        }
      }
    }
    add(this.ms(last(truth.arrival)) + 30_000, 'trip_end', 'trip_end', ref);
    this.cache.set(p.key, out);
    return out;
  }

  /** A fix at `dist` metres along the trip's line, off by the GPS error. */
  private place(p: TripPlan, dist: number, r: () => number): { lat: number; lon: number } {
    const pt = alongLine(p, dist);
    const [dx, dy] = gpsError(r, this.o.gpsNoise);
    const [lon, lat] = this.ruler.offset(pt, dx, dy);
    return { lat: Math.round(lat * 1e6) / 1e6, lon: Math.round(lon * 1e6) / 1e6 };
  }

  /** Positions on the grid of `period` seconds in (from, to]. */
  private positions(from: number, to: number): { at: number; item: Item }[] {
    const step = this.o.period * 1000;
    const out: { at: number; item: Item }[] = [];
    const trips = this.duties.flatMap((d) => d.trips);
    let k = 0;
    for (let t = Math.floor(from / step) * step + step; t <= to; t += step) {
      if (t < this.from) continue;
      const s = (t - this.dayStartMs) / 1000;
      // The trip running at s, or the one the vehicle waits for (or ended last).
      while (k < trips.length - 1 && s > last(trips[k]!.truth.arrival) + 30) k++;
      const { plan, truth } = trips[k]!;
      let dist: number;
      let speed = 0;
      let onTrip = s >= truth.passing[0]! - 60 && s <= last(truth.arrival) + 30;
      if (s <= truth.passing[0]!) dist = 0;
      else if (s >= last(truth.arrival)) dist = last(plan.stopDist);
      else {
        let i = 1;
        while (truth.arrival[i]! < s && i < truth.arrival.length - 1 && truth.passing[i]! < s) i++;
        if (s >= truth.arrival[i]!) dist = plan.stopDist[i]!;
        else {
          const t0 = truth.passing[i - 1]!;
          const t1 = truth.arrival[i]!;
          const d0 = plan.stopDist[i - 1]!;
          const d1 = plan.stopDist[i]!;
          dist = d0 + ((d1 - d0) * (s - t0)) / Math.max(1, t1 - t0);
          speed = ((d1 - d0) / Math.max(1, t1 - t0)) * 3.6;
        }
      }
      if (s < truth.passing[0]! - 60) onTrip = false;
      const r = rngOf(this.o.seed, this.serviceDate, this.key, 'gps', t);
      const fix = this.place(plan, dist, r);
      const ahead = alongLine(plan, Math.min(dist + 15, last(plan.lineDist)));
      const here = alongLine(plan, dist);
      const bearing = (this.ruler.bearing(here, ahead) + 360) % 360;
      const ref = onTrip ? { trip_id: plan.trip_id, service_date: this.serviceDate, ...(plan.frequency ? { start_time: plan.trip.start_time } : {}) } : {};
      out.push({
        at: t,
        item: {
          id: stableUuid(this.o.seed, this.serviceDate, this.key, 'position', t), type: 'position', at: iso(t), ...fix, gps_valid: true,
          speed_kmh: Math.min(400, Math.round(speed * 10) / 10), bearing: Math.round(bearing) % 360, accuracy_m: this.o.gpsNoise, ...ref,
        } as Item,
      });
    }
    return out;
  }
}

function alongLine(p: TripPlan, dist: number): LonLat {
  const d = p.lineDist;
  if (dist <= 0) return p.line[0]!;
  if (dist >= last(d)) return last(p.line);
  let lo = 0;
  let hi = d.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (d[mid]! <= dist) lo = mid;
    else hi = mid;
  }
  const t = (dist - d[lo]!) / Math.max(1e-9, d[hi]! - d[lo]!);
  const a = p.line[lo]!;
  const b = p.line[hi]!;
  return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t];
}

const last = <T>(xs: readonly T[]): T => xs[xs.length - 1]!;
const iso = (ms: number) => new Date(ms).toISOString();

