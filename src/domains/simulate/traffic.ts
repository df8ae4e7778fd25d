/**
 * The realistic traffic model (issue #17 §3, issue #16 §1): how the buses of any network actually
 * run against their timetable, as a pure function of a seed, so the truth of a simulated day is
 * known to whoever drives it (the simulator, the benchmarks, the tests).
 *
 * - Recurring congestion by segment (a stop pair) and hour band: about a third of the segments
 *   are "hot" (1.25–1.7× the scheduled running time in the 7–9 h peak), the others barely slower
 *   (1.0–1.12×); shoulders (6:30–7, 9–9:30) and the evening peak (16:30–19) halfway; off-peak a
 *   little faster than scheduled (0.9–1.0×). On Saturdays the midday (11–14 h) runs at the
 *   shoulder level and there is no morning peak; Sundays and holidays run off-peak all day.
 * - A factor for the whole day (weather, events): normal around 1, sd 4 %, within 0.9–1.15.
 * - Dwell by stop and hour: a typical dwell of 12–35 s per stop, 2.5× at busy stops (hubs), 1.6×
 *   in the weekday morning peak (1.2× at Saturday midday), each call ×N(1, 0.3) within 0.3–3.
 * - Per trip: a start about 40 s late (sd 50 s, never more than 20 s early), 5 % of trips 5–15
 *   minutes late (a late driver, a breakdown); running noise per segment ×N(1, 0.08) within
 *   0.8–1.5; 1 % of segments hold an incident of 2–8 minutes.
 * - Holding at timepoints when early; the next trip of a vehicle starts no earlier than its arrival
 *   at the end of the previous one plus a layover (3 min).
 *
 * What it is not: no bunching between vehicles of a route (each vehicle runs on its own), no
 * detours or cancellations, no link between passenger loads and dwell, no weather beyond the day
 * factor. Each draw comes from a generator seeded by (seed, purpose, ids), so adding a trip or a
 * vehicle never changes another's day.
 */
import { between, normal, rngOf } from '../../platform/random.js';

export type DayType = 'weekday' | 'saturday' | 'sunday';

/** A trip as the model needs it: its calls with scheduled times (seconds of the service day). */
export interface TrafficTrip {
  /** Identifies the trip (instance) in the answer: trip_id, or trip_id and start_time for a frequency instance. */
  key: string;
  trip_id: string;
  /** Set for a frequency instance (HH:MM:SS): the draws of an instance depend on it. */
  start_time?: string | null;
  /** Scheduled arrival and departure at each call, seconds of the service day (no gaps: interpolate before). */
  arrival: readonly number[];
  departure: readonly number[];
  stop_id: readonly string[];
  timepoint: readonly boolean[];
}

/** The simulated truth of a trip: when the bus reached (arrival) and left (passing) each call, seconds of the service day. */
export interface TripTruth {
  arrival: number[];
  /** Departure from each call; at the last call, its arrival. */
  passing: number[];
}

export interface TrafficOptions {
  seed: number;
  /** Stops where dwell is 2.5× longer (hubs, interchanges). */
  busyStops?: ReadonlySet<string>;
  /** Minimum layover between two trips of a vehicle, seconds (180). */
  layoverSeconds?: number;
}

export class TrafficModel {
  readonly seed: number;
  private readonly busy: ReadonlySet<string>;
  private readonly layover: number;
  private readonly segments = new Map<string, { hot: boolean; peak: number; offPeak: number }>();
  private readonly dwells = new Map<string, number>();

  constructor(o: TrafficOptions) {
    this.seed = o.seed;
    this.busy = o.busyStops ?? new Set();
    this.layover = o.layoverSeconds ?? 180;
  }

  /** The congestion multiplier of the running time of the segment from → to, left at `s` seconds of the day. */
  congestion(from: string, to: string, s: number, dayType: DayType = 'weekday'): number {
    const key = `${from}\u0000${to}`;
    let seg = this.segments.get(key);
    if (!seg) {
      const r = rngOf(this.seed, 'segment', from, to);
      const hot = r() < 0.35;
      seg = { hot, peak: hot ? between(r, 1.25, 1.7) : between(r, 1.0, 1.12), offPeak: between(r, 0.9, 1.0) };
      this.segments.set(key, seg);
    }
    const h = s / 3600;
    const shoulder = (seg.peak + seg.offPeak) / 2;
    if (dayType === 'sunday') return seg.offPeak;
    if (dayType === 'saturday') return h >= 11 && h < 14 ? shoulder : seg.offPeak;
    if (h >= 7 && h < 9) return seg.peak;
    if ((h >= 6.5 && h < 7) || (h >= 9 && h < 9.5)) return shoulder;
    if (h >= 16.5 && h < 19) return shoulder;
    return seg.offPeak;
  }

  /** The typical dwell (seconds) at a stop reached at `s` seconds of the day. */
  dwell(stopId: string, s: number, dayType: DayType = 'weekday'): number {
    let base = this.dwells.get(stopId);
    if (base === undefined) {
      const r = rngOf(this.seed, 'dwell', stopId);
      base = between(r, 12, 35) * (this.busy.has(stopId) ? 2.5 : 1);
      this.dwells.set(stopId, base);
    }
    const h = s / 3600;
    if (dayType === 'weekday' && h >= 7 && h < 9) return base * 1.6;
    if (dayType === 'saturday' && h >= 11 && h < 14) return base * 1.2;
    return base;
  }

  /** The factor of a whole service day (YYYY-MM-DD). */
  dayFactor(date: string): number {
    return Math.min(1.15, Math.max(0.9, normal(rngOf(this.seed, 'day', date), 1, 0.04)));
  }

  /**
   * The truth of a service day's trips. Trips with the same chain (a vehicle: block_id, or the
   * planning's vehicle) run one after the other, in order of scheduled departure: the next one
   * starts no earlier than the previous arrival plus the layover. `chainOf` null: a lone trip.
   */
  day(date: string, dayType: DayType, trips: readonly TrafficTrip[], chainOf: (t: TrafficTrip) => string | null): Map<string, TripTruth> {
    const dayFactor = this.dayFactor(date);
    const out = new Map<string, TripTruth>();
    const chainEnd = new Map<string, number>();
    const sorted = [...trips].sort((a, b) => a.departure[0]! - b.departure[0]!);
    for (const trip of sorted) {
      const chain = chainOf(trip);
      const { truth, end } = this.run(date, dayType, dayFactor, trip, chain === null ? undefined : chainEnd.get(chain));
      if (chain !== null) chainEnd.set(chain, end);
      out.set(trip.key, truth);
    }
    return out;
  }

  /** One trip's truth; `readyAt`: when its vehicle ended its previous trip (seconds of the day). */
  trip(date: string, dayType: DayType, dayFactor: number, trip: TrafficTrip, readyAt?: number): TripTruth {
    return this.run(date, dayType, dayFactor, trip, readyAt).truth;
  }

  /** The truth, and the unrounded end the next trip of the vehicle counts from. */
  private run(date: string, dayType: DayType, dayFactor: number, trip: TrafficTrip, readyAt?: number): { truth: TripTruth; end: number } {
    const r = trip.start_time ? rngOf(this.seed, 'trip', date, trip.trip_id, trip.start_time) : rngOf(this.seed, 'trip', date, trip.trip_id);
    const n = trip.stop_id.length;
    const lateStart = r() < 0.05 ? between(r, 300, 900) : 0;
    let start = trip.departure[0]! + Math.max(-20, normal(r, 40, 50)) + lateStart;
    if (readyAt !== undefined) start = Math.max(start, readyAt + this.layover);
    const arrival = [start];
    const passing = [start];
    for (let i = 1; i < n; i++) {
      const scheduled = Math.max(30, trip.arrival[i]! - trip.departure[i - 1]!);
      const noise = Math.min(1.5, Math.max(0.8, normal(r, 1, 0.08)));
      const incident = r() < 0.01 ? between(r, 120, 480) : 0;
      const arrive = passing[i - 1]! + scheduled * this.congestion(trip.stop_id[i - 1]!, trip.stop_id[i]!, passing[i - 1]!, dayType) * dayFactor * noise + incident;
      arrival.push(arrive);
      if (i === n - 1) passing.push(arrive);
      else {
        let depart = arrive + this.dwell(trip.stop_id[i]!, arrive, dayType) * Math.min(3, Math.max(0.3, normal(r, 1, 0.3)));
        if (trip.timepoint[i]) depart = Math.max(depart, trip.departure[i]!);
        passing.push(depart);
      }
    }
    return { truth: { arrival: arrival.map(Math.round), passing: passing.map(Math.round) }, end: passing[passing.length - 1]! };
  }
}

/** A Gaussian GPS error: an offset in metres (east, north) of `rms` metres root mean square. */
export function gpsError(r: () => number, rms: number): [number, number] {
  const g = () => Math.sqrt(-2 * Math.log(Math.max(r(), 1e-12))) * Math.cos(2 * Math.PI * r());
  return [(g() * rms) / Math.SQRT2, (g() * rms) / Math.SQRT2];
}

/** The stops served by at least `minRoutes` routes: the busy stops of a network (hubs, interchanges). */
export function busyStopsOf(trips: readonly { route_id: string; stop_times: { stop_id: readonly string[] } }[], minRoutes = 3): Set<string> {
  const routes = new Map<string, Set<string>>();
  for (const t of trips) for (const s of t.stop_times.stop_id) (routes.get(s) ?? routes.set(s, new Set()).get(s)!).add(t.route_id);
  return new Set([...routes].filter(([, r]) => r.size >= minRoutes).map(([s]) => s));
}
