/**
 * Stop passages and kilometres from the positions of a trip, by progress along its itinerary
 * (issue #17, section 1; the method is described in docs/tracking.md). Pure: no database, no clock.
 *
 * - Progress. Each fix is projected onto the itinerary (the GTFS shape, else the line through the
 *   stops), near the previous fix's progress: the candidates are the points of the itinerary within
 *   reach at MAX_SPEED_MS since the previous fix, and among those no more than LOOP_SLACK_M farther
 *   from the fix than the nearest, the one closest in progress to the previous fix wins. So a loop
 *   whose end passes close to its middle, or a terminal whose last stop lies 40 m from the one
 *   before, is told apart by continuity, not by distance alone. A fix farther than OFF_ITINERARY_M
 *   from the itinerary is off itinerary (no progress). The first fix, and a fix after the vehicle
 *   was lost, take the earliest point of the whole itinerary within LOOP_SLACK_M of the nearest.
 *   Each stop gets its progress the same way, in order, never before the previous stop's.
 * - Arrival at a stop: the progress reaches ARRIVAL_BEFORE_M before the stop's (time interpolated
 *   between the two fixes around it), after a fix before that level. For the first stop, also the
 *   first fix within STOP_RADIUS_M of it (a vehicle that starts its trip's reports at the terminal).
 * - Departure from a stop (the last stop has none from positions): the progress passes
 *   DEPARTURE_BEYOND_M beyond the stop's, confirmed by the next fix, or by one fix DEPARTURE_CLEAR_M
 *   beyond; its time is when the progress crossed DEPARTURE_BEYOND_M beyond (interpolated). A
 *   vehicle approaching or dwelling, whatever its noise, never departs; a vehicle laying over at
 *   the first stop departs when it leaves.
 * - A crossing between two fixes more than GPS_GAP_SECONDS apart, or just after a fix off the
 *   itinerary, was not seen: no time from positions (the stop is missed unless an event names it).
 * - Times never go back along the trip: an arrival is no earlier than the previous stop's
 *   departure, a departure no earlier than its arrival.
 * - Kilometres: on itinerary, the progress along the itinerary (the median of five fixes, counted
 *   when it advanced more than KM_DEADBAND_M since the last count, and at the end up to the median
 *   of the last three fixes); off itinerary, the distance
 *   between the medians of five fixes, counted when more than OFF_KM_DEADBAND_M from the last point
 *   counted. GPS noise on a parked or dwelling vehicle adds nothing; a moving vehicle's km follow
 *   the itinerary.
 */
import CheapRuler from 'cheap-ruler';

/** A fix within this distance of the first stop, in metres, is at the first stop (arrival). */
export const STOP_RADIUS_M = 50;
/** A fix farther than this from the itinerary, in metres, is off itinerary. */
export const OFF_ITINERARY_M = 100;
/** Two fixes further apart in time than this, in seconds, are a GPS gap (unreliable km). */
export const GPS_GAP_SECONDS = 120;
/** The vehicle arrives when its progress is this close before the stop's, in metres. */
export const ARRIVAL_BEFORE_M = 15;
/** …confirmed by the next fix, or by the fix itself this far beyond that level, in metres. */
export const ARRIVAL_CLEAR_M = 30;
/** The vehicle departs when its progress is this far beyond the stop's, in metres, on two consecutive fixes. */
export const DEPARTURE_BEYOND_M = 30;
/** …or on one fix this far beyond, in metres. */
export const DEPARTURE_CLEAR_M = 50;
/** Points of the itinerary this much farther from a fix than the nearest, in metres, are still candidates. */
export const LOOP_SLACK_M = 15;
/** The fastest a vehicle is assumed to move along its itinerary, in m/s (bounds the search). */
export const MAX_SPEED_MS = 35;
/** On itinerary, progress counts into the km once it advanced more than this, in metres. */
export const KM_DEADBAND_M = 20;
/** Off itinerary, a move counts into the km once it exceeds this, in metres. */
export const OFF_KM_DEADBAND_M = 30;
/** Fixes in the median that smooths the km (odd). */
const KM_MEDIAN_OF = 5;
/** Reach of the search around the previous progress besides the speed bound, in metres. */
const SEARCH_MARGIN_M = 200;

export type LonLat = [number, number];

export interface Fix {
  at: Date;
  lat: number;
  lon: number;
}

export interface KmFix extends Fix {
  device_id: string;
  gps_valid: boolean;
}

export interface Kilometres {
  tk: number | null;
  vk: number;
  recorded_commercial_km: number;
  off_itinerary_km: number;
  reliable_km: number;
  unreliable_km: number;
  percent_km: number | null;
}

interface Candidate {
  along: number;
  dist: number;
}

/** A line in local metres (cheap-ruler's flat approximation around its first point). */
export class Itinerary {
  private readonly x: number[] = [];
  private readonly y: number[] = [];
  /** Metres along the line at each vertex. */
  readonly cum: number[] = [0];
  readonly length: number;
  private readonly kx: number;
  private readonly ky: number;
  private readonly lon0: number;
  private readonly lat0: number;

  constructor(line: readonly LonLat[], latitude = line[0]?.[1] ?? 45) {
    const ruler = new CheapRuler(latitude, 'meters');
    this.kx = ruler.kx;
    this.ky = ruler.ky;
    this.lon0 = line[0]?.[0] ?? 0;
    this.lat0 = line[0]?.[1] ?? latitude;
    for (const [lon, lat] of line) {
      const [x, y] = this.local(lon, lat);
      this.x.push(x);
      this.y.push(y);
    }
    for (let i = 1; i < line.length; i++) this.cum.push(this.cum[i - 1]! + Math.hypot(this.x[i]! - this.x[i - 1]!, this.y[i]! - this.y[i - 1]!));
    this.length = this.cum[this.cum.length - 1]!;
  }

  get usable(): boolean {
    return this.x.length >= 2;
  }

  local(lon: number, lat: number): [number, number] {
    let dlon = lon - this.lon0;
    if (dlon > 180) dlon -= 360;
    else if (dlon < -180) dlon += 360;
    return [dlon * this.kx, (lat - this.lat0) * this.ky];
  }

  /** The best point of the line between `from` and `to` metres for (x, y): see the file's top. */
  nearest(x: number, y: number, from: number, to: number, ref: number): Candidate | null {
    const n = this.x.length;
    if (n < 2) return null;
    // The first segment ending at or after `from`.
    let lo = 0;
    let hi = n - 2;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cum[mid + 1]! < from) lo = mid + 1;
      else hi = mid;
    }
    const cands: Candidate[] = [];
    let min = Infinity;
    for (let i = lo; i < n - 1 && this.cum[i]! <= to; i++) {
      const ax = this.x[i]!;
      const ay = this.y[i]!;
      const dx = this.x[i + 1]! - ax;
      const dy = this.y[i + 1]! - ay;
      const l2 = dx * dx + dy * dy;
      const f = l2 === 0 ? 0 : Math.min(1, Math.max(0, ((x - ax) * dx + (y - ay) * dy) / l2));
      const dist = Math.hypot(ax + f * dx - x, ay + f * dy - y);
      cands.push({ along: this.cum[i]! + f * (this.cum[i + 1]! - this.cum[i]!), dist });
      if (dist < min) min = dist;
    }
    let best: Candidate | null = null;
    for (const c of cands) {
      if (c.dist > min + LOOP_SLACK_M) continue;
      if (!best || Math.abs(c.along - ref) < Math.abs(best.along - ref)) best = c;
    }
    return best;
  }
}

export interface Progress {
  /** Metres along the itinerary; null when the fix is off itinerary. */
  along: number | null;
  /** Distance from the itinerary, metres. */
  dist: number;
  x: number;
  y: number;
}

/**
 * What progressOf computed for a track on one itinerary, kept between two computations of the
 * same trip (tracking rounds): a track grows by its new fixes, and the progress of a fix depends
 * only on the fixes before it, so only the fixes after the part already seen are projected.
 */
export interface ProgressMemo {
  at: number[];
  lat: number[];
  lon: number[];
  progress: Progress[];
}

export const emptyProgressMemo = (): ProgressMemo => ({ at: [], lat: [], lon: [], progress: [] });

/**
 * The progress of each fix (in time order) along the itinerary. With `memo` (of this itinerary):
 * the fixes it holds at the start of `fixes` keep their progress, the others are projected, and
 * the memo then holds `fixes`. The answer is the same as without (a fix arrived late, in the
 * middle of the track, means projecting again from there).
 */
export function progressOf(it: Itinerary, fixes: readonly Fix[], memo?: ProgressMemo): Progress[] {
  let known = 0;
  if (memo) {
    const max = Math.min(memo.progress.length, fixes.length);
    while (known < max && memo.at[known] === fixes[known]!.at.getTime() && memo.lat[known] === fixes[known]!.lat && memo.lon[known] === fixes[known]!.lon) known++;
  }
  const out: Progress[] = memo ? memo.progress.slice(0, known) : [];
  let prev: { along: number; t: number } | null = null;
  for (let j = known - 1; j >= 0; j--) {
    const a = out[j]!.along;
    if (a !== null) {
      prev = { along: a, t: memo!.at[j]! };
      break;
    }
  }
  for (let i = known; i < fixes.length; i++) {
    const f = fixes[i]!;
    const [x, y] = it.local(f.lon, f.lat);
    const t = f.at.getTime();
    let best: Candidate | null = null;
    if (prev) {
      const reach = SEARCH_MARGIN_M + (MAX_SPEED_MS * Math.max(0, t - prev.t)) / 1000;
      best = it.nearest(x, y, prev.along - reach, prev.along + reach, prev.along);
    }
    if (!best || best.dist > OFF_ITINERARY_M) best = it.nearest(x, y, 0, it.length, prev?.along ?? 0);
    const on = best !== null && best.dist <= OFF_ITINERARY_M;
    out.push({ along: on ? best!.along : null, dist: best?.dist ?? Infinity, x, y });
    if (on) prev = { along: best!.along, t };
  }
  if (memo) {
    memo.at.length = memo.lat.length = memo.lon.length = known;
    for (let i = known; i < fixes.length; i++) {
      memo.at.push(fixes[i]!.at.getTime());
      memo.lat.push(fixes[i]!.lat);
      memo.lon.push(fixes[i]!.lon);
    }
    memo.progress = out;
  }
  return out;
}

/** The progress of each stop (null: no coordinates, or farther than OFF_ITINERARY_M from the itinerary). */
export function stopProgress(it: Itinerary, stops: readonly { stop_lat: number | null; stop_lon: number | null }[]): (number | null)[] {
  let from = 0;
  return stops.map((s) => {
    if (s.stop_lat === null || s.stop_lon === null) return null;
    const [x, y] = it.local(s.stop_lon, s.stop_lat);
    const best = it.nearest(x, y, from, it.length, from);
    if (!best || best.dist > OFF_ITINERARY_M) return null;
    from = Math.max(from, best.along);
    return from;
  });
}

export interface Crossing {
  at: Date;
  /** The fix that established it. */
  index: number;
}

export interface StopTimes {
  arrival: Crossing | null;
  departure: Crossing | null;
}

/**
 * The first time the progress crosses `level` upwards: a fix at or beyond it after a fix below
 * it, confirmed (when `confirm`) by the next fix also at or beyond it or by the fix itself being
 * `clear` metres beyond. The time is interpolated between the fixes around the crossing.
 */
function crossing(a: readonly (number | null)[], t: readonly number[], level: number, confirm: boolean, clear: number): Crossing | null {
  let below = false;
  for (let j = 0; j < a.length; j++) {
    const v = a[j];
    if (v === null || v === undefined) continue;
    if (v < level) {
      below = true;
      continue;
    }
    if (!below) continue;
    if (confirm && v < level + clear && !((a[j + 1] ?? -Infinity) >= level)) continue;
    // The run of fixes at or beyond the level that j ends: the crossing is just before its first.
    let i = j;
    while (i > 0 && a[i - 1] !== null && a[i - 1]! >= level) i--;
    const p = i > 0 ? a[i - 1] : null;
    // Crossed off itinerary, or across a GPS gap: not seen, no time from positions.
    if (p === null || p === undefined || t[i]! - t[i - 1]! > GPS_GAP_SECONDS * 1000) return null;
    const at = t[i - 1]! + ((t[i]! - t[i - 1]!) * (level - p)) / (a[i]! - p);
    // To the second, like the device's own times.
    return { at: new Date(Math.round(at / 1000) * 1000), index: j };
  }
  return null;
}

/**
 * Arrival and departure at each stop from the fixes (valid, in time order) of a trip: see the
 * top of the file. Stops without progress get nothing.
 */
export function stopTimes(
  it: Itinerary, stops: readonly { stop_lat: number | null; stop_lon: number | null }[], fixes: readonly Fix[], progress = progressOf(it, fixes), along = stopProgress(it, stops),
): StopTimes[] {
  const a = progress.map((p) => p.along);
  const t = fixes.map((f) => f.at.getTime());
  const out: StopTimes[] = [];
  let floor = -Infinity;
  const clamp = (c: Crossing | null): Crossing | null => {
    if (!c) return null;
    const at = c.at.getTime() < floor ? new Date(floor) : c.at;
    floor = at.getTime();
    return { at, index: c.index };
  };
  for (let k = 0; k < stops.length; k++) {
    const s = along[k];
    if (s === null || s === undefined) {
      out.push({ arrival: null, departure: null });
      continue;
    }
    let arrival = crossing(a, t, s - ARRIVAL_BEFORE_M, true, ARRIVAL_CLEAR_M);
    if (k === 0) {
      const [sx, sy] = it.local(stops[0]!.stop_lon!, stops[0]!.stop_lat!);
      const i = progress.findIndex((p) => Math.hypot(p.x - sx, p.y - sy) <= STOP_RADIUS_M);
      if (i >= 0 && (!arrival || t[i]! < arrival.at.getTime())) arrival = { at: fixes[i]!.at, index: i };
    }
    const departure = k === stops.length - 1 ? null : crossing(a, t, s + DEPARTURE_BEYOND_M, true, DEPARTURE_CLEAR_M - DEPARTURE_BEYOND_M);
    out.push({ arrival: clamp(arrival), departure: clamp(departure) });
  }
  return out;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** The median of `of(p)` over a few items (insertion sort: the windows hold at most five). */
function median(items: readonly Progress[], of: (p: Progress) => number): number {
  const s: number[] = [];
  for (const p of items) {
    const v = of(p);
    let j = s.length;
    while (j > 0 && s[j - 1]! > v) j--;
    s.splice(j, 0, v);
  }
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
const X = (p: Progress) => p.x;
const Y = (p: Progress) => p.y;
const ALONG = (p: Progress) => p.along!;

/**
 * The kilometres of a trip from its positions (in time order; consecutive per device) and its
 * itinerary (see the top of the file; the fields are defined in tracking.ts).
 */
export function kilometres(line: readonly LonLat[], positions: readonly KmFix[], o: { itinerary?: Itinerary; memo?: Map<string, ProgressMemo> } = {}): Kilometres {
  // `o.itinerary`: the one of `line` already made (a line of fewer than two points has none: its
  // local metres are taken around the first position).
  const it = o.itinerary && line.length >= 2 ? o.itinerary : new Itinerary(line, line[0]?.[1] ?? positions[0]?.lat ?? 45);
  const tk = it.usable ? it.length : null;
  let vk = 0;
  let reliable = 0;
  let off = 0;
  let commercial = 0;
  const byDevice = new Map<string, KmFix[]>();
  for (const p of positions) (byDevice.get(p.device_id) ?? byDevice.set(p.device_id, []).get(p.device_id)!).push(p);
  for (const [device, track] of byDevice) {
    const memo = o.memo && it.usable ? (o.memo.get(device) ?? o.memo.set(device, emptyProgressMemo()).get(device)!) : undefined;
    const prog: Progress[] = it.usable ? progressOf(it, track, memo) : track.map((f) => ({ along: null, dist: Infinity, ...xy(it, f) }));
    const half = KM_MEDIAN_OF >> 1;
    let anchorProgress: number | null = null;
    let anchor: [number, number] | null = null;
    let isReliable = false;
    const same = (j: number, on: boolean) => j >= 0 && j < track.length && (prog[j]!.along !== null) === on;
    const add = (d: number) => {
      vk += d;
      if (isReliable) reliable += d;
    };
    for (let i = 0; i < track.length; i++) {
      // On the itinerary, a centred window of fixes all on it, narrower near the ends of the
      // stretch, so its first and last fixes count where they are. Off it, the window is shifted
      // inside the track at its ends instead (a parked vehicle's single noisy fix counts nothing),
      // and narrowed at the changes.
      const on = prog[i]!.along !== null;
      let w = 0;
      while (w < half && same(i - w - 1, on) && same(i + w + 1, on)) w++;
      let from = i - w;
      let to = i + w;
      if (!on && w < half && (i - w === 0) !== (i + w === track.length - 1)) {
        if (i - w === 0) while (to < 2 * half && same(to + 1, on)) to++;
        else while (from > track.length - 1 - 2 * half && same(from - 1, on)) from--;
      }
      const win = prog.slice(from, to + 1);
      const point: [number, number] = [median(win, X), median(win, Y)];
      const prev = track[i - 1];
      const cur = track[i]!;
      isReliable = prev !== undefined && prev.gps_valid && cur.gps_valid && cur.at.getTime() - prev.at.getTime() <= GPS_GAP_SECONDS * 1000;
      if (on) {
        const m = median(win, ALONG);
        if (anchorProgress === null) {
          // Back on the itinerary (or the first fix): the way from the last point counted is off itinerary.
          if (anchor) {
            const d = Math.hypot(point[0] - anchor[0], point[1] - anchor[1]);
            off += d;
            add(d);
          }
          anchorProgress = m;
          anchor = point;
        } else if (m - anchorProgress > KM_DEADBAND_M) {
          commercial += m - anchorProgress;
          add(m - anchorProgress);
          anchorProgress = m;
          anchor = point;
        }
      } else {
        if (anchor) {
          const d = Math.hypot(point[0] - anchor[0], point[1] - anchor[1]);
          if (d > OFF_KM_DEADBAND_M || anchorProgress !== null) {
            off += d;
            add(d);
            anchor = point;
          }
        } else anchor = point;
        anchorProgress = null;
      }
    }
    // The way not counted yet at the end (less than the deadband, the vehicle at rest at its
    // terminal): up to the median of the last three fixes on the itinerary.
    if (anchorProgress !== null) {
      const tail = prog.slice(-3);
      if (tail.every((p) => p.along !== null)) {
        const rest = median(tail, ALONG) - anchorProgress;
        if (rest > 0) {
          commercial += rest;
          add(rest);
        }
      }
    }
  }
  commercial /= 1000;
  if (tk !== null) commercial = Math.min(commercial, tk / 1000);
  return {
    tk: tk === null ? null : round3(tk / 1000),
    vk: round3(vk / 1000),
    recorded_commercial_km: round3(commercial),
    off_itinerary_km: round3(off / 1000),
    reliable_km: round3(reliable / 1000),
    unreliable_km: round3((vk - reliable) / 1000),
    percent_km: tk ? Math.round(((commercial * 1000) / tk) * 1000) / 10 : null,
  };
}

function xy(it: Itinerary, f: Fix): { x: number; y: number } {
  const [x, y] = it.local(f.lon, f.lat);
  return { x, y };
}
