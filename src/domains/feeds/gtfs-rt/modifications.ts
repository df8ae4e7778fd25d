/**
 * How a trip's overlay becomes GTFS-Realtime trip modifications (experimental TripModifications):
 * each run of consecutive calls that the overlay replaces (stops left out by the detour in force,
 * a moved stop) or adds becomes one Modification: the replaced stops (start and end selectors,
 * inclusive) and the stops served instead (replacement stops). Stops added between two served
 * stops are an insertion: a start selector on the next stop and no end selector. A stop added
 * after the last stop cannot be expressed and is left out (SIRI carries it as an extra call).
 * Stops skipped without a replacement (skip_stop) stay SKIPPED stop time updates.
 */
import CheapRuler from 'cheap-ruler';
import type { Call, FeedTrip } from '../network.js';

export interface TripModification {
  start_sequence: number;
  /** Null for an insertion (no stop replaced). */
  end_sequence: number | null;
  replaced: number[];
  replacements: { call: Call; travel_time_to_stop: number }[];
  update_ids: string[];
}

/** Calls the overlay replaces: left out by the detour in force, or moved. */
function replacedBy(ft: FeedTrip, c: Call): boolean {
  if (c.status !== 'skipped' || c.stop_sequence === null) return false;
  return ft.overlay.moved.has(c.stop_sequence) || (ft.overlay.detour !== null && ft.overlay.skipped.get(c.stop_sequence) === ft.overlay.detour.update_id);
}

export function modificationsOf(ft: FeedTrip): TripModification[] {
  const out: TripModification[] = [];
  const { calls, stops } = ft;
  let i = 0;
  while (i < calls.length) {
    if (!(calls[i]!.status === 'added' || replacedBy(ft, calls[i]!))) {
      i++;
      continue;
    }
    const run: Call[] = [];
    while (i < calls.length && (calls[i]!.status === 'added' || replacedBy(ft, calls[i]!))) run.push(calls[i++]!);
    const replaced = run.filter((c) => c.stop_sequence !== null).map((c) => c.stop_sequence!);
    const start = replaced[0] ?? calls.slice(i).find((c) => c.stop_sequence !== null)?.stop_sequence;
    if (start === undefined || start === null) continue;
    const startIndex = stops.findIndex((s) => s.stop_sequence === start);
    const reference = stops[Math.max(0, startIndex - 1)]!;
    const referenceAt = reference.arrival_at ?? reference.departure_at;
    const replacements = run
      .filter((c) => c.status === 'added')
      .map((call) => ({ call, travel_time_to_stop: referenceAt && call.arrival_at ? Math.round((call.arrival_at.getTime() - referenceAt.getTime()) / 1000) : 0 }));
    out.push({
      start_sequence: start,
      end_sequence: replaced.length > 0 ? replaced[replaced.length - 1]! : null,
      replaced,
      replacements,
      update_ids: [...new Set(run.map((c) => c.update_id).filter((u): u is string => u !== null))],
    });
  }
  return out;
}

/**
 * The full path of a trip on a detour: its GTFS shape (or, without one, the line through its
 * stops) up to the last stop served before the detour, the detour's path, then the shape again
 * from the stop where the trip rejoins its route.
 */
export function detourPath(ft: FeedTrip, m: TripModification): [number, number][] {
  const detour = ft.overlay.detour!;
  const stops = ft.stops.filter((s) => s.stop_lat !== null && s.stop_lon !== null);
  const line: [number, number][] = ft.shape && ft.shape.length >= 2 ? ft.shape.map((p) => [p.lon, p.lat]) : stops.map((s) => [s.stop_lon!, s.stop_lat!]);
  if (line.length < 2) return detour.shape;
  const ruler = new CheapRuler(line[0]![1], 'meters');
  const before = stops.filter((s) => s.stop_sequence < m.start_sequence).at(-1);
  const after = stops.find((s) => s.stop_sequence > (m.end_sequence ?? m.start_sequence - 1));
  const head = before ? ruler.lineSlice(line[0]!, [before.stop_lon!, before.stop_lat!], line) : [];
  const tail = after ? ruler.lineSlice([after.stop_lon!, after.stop_lat!], line[line.length - 1]!, line) : [];
  return [...head, ...detour.shape, ...tail] as [number, number][];
}

/** Google's encoded polyline (precision 5) of [lon, lat] points. */
export function encodePolyline(points: readonly [number, number][]): string {
  let out = '';
  let lastLat = 0;
  let lastLon = 0;
  const encode = (v: number) => {
    let n = v < 0 ? ~(v << 1) : v << 1;
    while (n >= 0x20) {
      out += String.fromCharCode((0x20 | (n & 0x1f)) + 63);
      n >>= 5;
    }
    out += String.fromCharCode(n + 63);
  };
  for (const [lon, lat] of points) {
    const la = Math.round(lat * 1e5);
    const lo = Math.round(lon * 1e5);
    encode(la - lastLat);
    encode(lo - lastLon);
    lastLat = la;
    lastLon = lo;
  }
  return out;
}
