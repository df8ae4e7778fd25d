// Bunching and gaps (issue #19): a pure function, no DOM, unit-tested (test/console/headway.test.ts).
//
// Two vehicles of a route (and direction) follow each other in the order of their trips' scheduled
// departures. The scheduled headway in front of a vehicle is the gap between its trip's scheduled
// departure and the previous scheduled departure of the same route and direction (cancelled trips
// left out by the caller). The actual headway is the gap between the two vehicles' departures
// shifted by their current delays: (departure + delay) of the follower minus that of the vehicle
// ahead, i.e. how long after the vehicle ahead the follower passes the same point if both keep
// their delays. A vehicle is flagged
//   - `bunching` when its actual headway is below a third of the scheduled headway (strictly),
//   - `gap` when it is over twice the scheduled headway (strictly).
// Only vehicles on a trip are compared; the first vehicle of a route and direction has no vehicle
// ahead and is never flagged. An unknown delay (no stop event yet) counts as 0.

export interface ScheduledDeparture {
  route_id: string;
  direction_id: number | null;
  /** Scheduled first departure, seconds (any epoch, the same for every input). */
  departure: number;
}

export interface RunningVehicle extends ScheduledDeparture {
  vehicle_id: string;
  delay_seconds: number | null;
}

export interface HeadwayFlag {
  vehicle_id: string;
  kind: 'bunching' | 'gap';
  ahead_vehicle_id: string;
  actual_headway_seconds: number;
  scheduled_headway_seconds: number;
}

const keyOf = (d: ScheduledDeparture) => `${d.route_id}\u0000${d.direction_id ?? ''}`;

export function headwayFlags(schedule: readonly ScheduledDeparture[], running: readonly RunningVehicle[]): HeadwayFlag[] {
  return flagsOf(departureIndex(schedule), running);
}

/** The scheduled departures by route and direction, sorted: built once per new list of trips. */
export type DepartureIndex = Map<string, number[]>;

export function departureIndex(schedule: readonly ScheduledDeparture[]): DepartureIndex {
  const departures: DepartureIndex = new Map();
  for (const d of schedule) {
    const key = keyOf(d);
    let list = departures.get(key);
    if (!list) departures.set(key, (list = []));
    list.push(d.departure);
  }
  for (const list of departures.values()) list.sort((a, b) => a - b);
  return departures;
}

/** The flags of the vehicles running now against an index of the schedule (cheap: the vehicles only). */
export function flagsOf(departures: DepartureIndex, running: readonly RunningVehicle[]): HeadwayFlag[] {
  const groups = new Map<string, RunningVehicle[]>();
  for (const v of running) {
    const key = keyOf(v);
    let list = groups.get(key);
    if (!list) groups.set(key, (list = []));
    list.push(v);
  }
  const flags: HeadwayFlag[] = [];
  for (const [key, vehicles] of groups) {
    const deps = departures.get(key) ?? [];
    vehicles.sort((a, b) => a.departure - b.departure);
    for (let i = 1; i < vehicles.length; i++) {
      const ahead = vehicles[i - 1]!;
      const v = vehicles[i]!;
      const previous = lastBefore(deps, v.departure);
      if (previous === undefined) continue;
      const scheduled = v.departure - previous;
      if (scheduled <= 0) continue;
      const actual = v.departure + (v.delay_seconds ?? 0) - (ahead.departure + (ahead.delay_seconds ?? 0));
      const kind = actual < scheduled / 3 ? 'bunching' : actual > 2 * scheduled ? 'gap' : null;
      if (kind) flags.push({ vehicle_id: v.vehicle_id, kind, ahead_vehicle_id: ahead.vehicle_id, actual_headway_seconds: actual, scheduled_headway_seconds: scheduled });
    }
  }
  return flags;
}

/** The largest value of the sorted list strictly below x. */
function lastBefore(sorted: readonly number[], x: number): number | undefined {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 ? sorted[lo - 1] : undefined;
}
