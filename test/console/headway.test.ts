import { describe, expect, it } from 'vitest';
import { headwayFlags, type RunningVehicle, type ScheduledDeparture } from '../../console/src/headway.js';

// A route A, direction 0, every 10 minutes from 08:00 (seconds of the day); direction 1 at the same
// times; route B every 20 minutes.
const at = (h: number, m: number) => h * 3600 + m * 60;
const schedule: ScheduledDeparture[] = [
  ...[0, 10, 20, 30, 40, 50].map((m) => ({ route_id: 'A', direction_id: 0, departure: at(8, m) })),
  ...[0, 10, 20, 30].map((m) => ({ route_id: 'A', direction_id: 1, departure: at(8, m) })),
  ...[0, 20, 40].map((m) => ({ route_id: 'B', direction_id: 0, departure: at(8, m) })),
];
const v = (vehicle_id: string, route_id: string, direction_id: number, departure: number, delay_seconds: number | null): RunningVehicle => ({ vehicle_id, route_id, direction_id, departure, delay_seconds });

describe('headwayFlags (bunching under a third of the scheduled headway, gap over twice it)', () => {
  it('flags the follower of a vehicle 8 min late on a 10-min headway (2 min apart) as bunching, and no vehicle keeping its headway', () => {
    const flags = headwayFlags(schedule, [v('a1', 'A', 0, at(8, 0), 480), v('a2', 'A', 0, at(8, 10), 0), v('a3', 'A', 0, at(8, 20), 60)]);
    expect(flags).toEqual([{ vehicle_id: 'a2', kind: 'bunching', ahead_vehicle_id: 'a1', actual_headway_seconds: 120, scheduled_headway_seconds: 600 }]);
  });

  it('flags a vehicle 21 min behind the one ahead (the trip between them not running) as a gap, and not one exactly 20 min behind', () => {
    const flags = headwayFlags(schedule, [v('a1', 'A', 0, at(8, 0), 0), v('a3', 'A', 0, at(8, 20), 60), v('a4', 'A', 0, at(8, 30), 0), v('a6', 'A', 0, at(8, 50), 0)]);
    expect(flags).toEqual([{ vehicle_id: 'a3', kind: 'gap', ahead_vehicle_id: 'a1', actual_headway_seconds: 1260, scheduled_headway_seconds: 600 }]);
  });

  it('does not flag exactly a third of the headway (closer than means strictly)', () => {
    expect(headwayFlags(schedule, [v('a1', 'A', 0, at(8, 0), 400), v('a2', 'A', 0, at(8, 10), 0)])).toEqual([]);
    expect(headwayFlags(schedule, [v('a1', 'A', 0, at(8, 0), 401), v('a2', 'A', 0, at(8, 10), 0)]).map((f) => f.kind)).toEqual(['bunching']);
  });

  it('compares vehicles of the same route and direction only, with the headway of their own schedule', () => {
    // a1 (A/0) and a2 (A/1) run at the same time in opposite directions: no flag. On B (20-min headway)
    // a vehicle 6 min behind the one ahead is bunched (6 < 20/3), which would be no bunching on A.
    const flags = headwayFlags(schedule, [v('a1', 'A', 0, at(8, 10), 0), v('a2', 'A', 1, at(8, 10), 0), v('b1', 'B', 0, at(8, 0), 840), v('b2', 'B', 0, at(8, 20), 0)]);
    expect(flags).toEqual([{ vehicle_id: 'b2', kind: 'bunching', ahead_vehicle_id: 'b1', actual_headway_seconds: 360, scheduled_headway_seconds: 1200 }]);
  });

  it('counts an unknown delay as 0 and never flags the first vehicle of a route', () => {
    expect(headwayFlags(schedule, [v('a1', 'A', 0, at(8, 0), null)])).toEqual([]);
    expect(headwayFlags(schedule, [v('a1', 'A', 0, at(8, 0), null), v('a2', 'A', 0, at(8, 10), -500)]).map((f) => [f.vehicle_id, f.actual_headway_seconds])).toEqual([['a2', 100]]);
  });
});
