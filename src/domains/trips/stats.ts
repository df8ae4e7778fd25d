/**
 * GET stats/trip-tracking: punctuality, delays, completion and kilometres over a period of service
 * dates, in total and grouped by day, by route and (on request) by team.
 *
 * - Punctuality is counted over stop passages (every stop passed with a scheduled time): early
 *   when the delay is below EARLY_BEFORE_SECONDS, late when above LATE_AFTER_SECONDS, on time
 *   between both (inclusive).
 * - Delay average and percentiles (nearest rank) are over the same passages, in seconds.
 * - Trips: the scheduled trips of each date (GTFS in force), plus trips recorded without being
 *   scheduled; counted by status (trips/tracking.ts). `missing_trips` = not_done.
 * - tk is summed over scheduled trips not cancelled; vk and the other km over recorded trips;
 *   percent_km = recorded_commercial_km / tk × 100.
 * A caller limited to teams gets the recorded trips of their teams only (scheduled trips with
 * nothing recorded belong to no team).
 */
import type { Db } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { addDays, type Period } from '../../platform/time.js';
import { tripsOnServiceDate } from '../gtfs/service-days.js';
import { shapeLengths } from '../gtfs/shape-lengths.js';
import { emptyOverlay } from '../updates/overlay.js';
import { overlayKey, overlaysFor } from '../updates/service.js';
import { trackingOf, tripStatus, type TripStatus, type TripTracking } from './tracking.js';
import { teamsOfDrivers } from '../fleet/drivers.js';
import { teamsOfVehicles } from '../fleet/vehicles.js';

export const EARLY_BEFORE_SECONDS = -60;
export const LATE_AFTER_SECONDS = 180;

class Agg {
  trips: Record<TripStatus, number> = { scheduled: 0, in_progress: 0, completed: 0, partial: 0, not_done: 0, cancelled: 0 };
  delays: number[] = [];
  tk = 0;
  vk = 0;
  commercial = 0;
  off = 0;
  reliable = 0;
  unreliable = 0;

  add(status: TripStatus, tk: number | null, t: TripTracking | null) {
    this.trips[status]++;
    if (tk !== null && status !== 'cancelled') this.tk += tk;
    if (!t) return;
    for (const s of t.stops) if (s.status === 'passed' && s.delay_seconds !== null) this.delays.push(s.delay_seconds);
    this.vk += t.km.vk;
    this.commercial += t.km.recorded_commercial_km;
    this.off += t.km.off_itinerary_km;
    this.reliable += t.km.reliable_km;
    this.unreliable += t.km.unreliable_km;
  }

  result() {
    const d = [...this.delays].sort((a, b) => a - b);
    const pct = (p: number) => (d.length === 0 ? null : d[Math.max(0, Math.ceil((p / 100) * d.length) - 1)]!);
    const early = d.filter((x) => x < EARLY_BEFORE_SECONDS).length;
    const late = d.filter((x) => x > LATE_AFTER_SECONDS).length;
    const r3 = (x: number) => Math.round(x * 1000) / 1000;
    const total = Object.values(this.trips).reduce((a, b) => a + b, 0);
    return {
      trips: total,
      ...(Object.fromEntries(Object.entries(this.trips).map(([k, v]) => [`${k}_trips`, v])) as Record<`${TripStatus}_trips`, number>),
      missing_trips: this.trips.not_done,
      stop_passages: d.length,
      early: early,
      on_time: d.length - early - late,
      late,
      punctuality_percent: d.length === 0 ? null : Math.round(((d.length - early - late) / d.length) * 1000) / 10,
      average_delay_seconds: d.length === 0 ? null : Math.round(d.reduce((a, b) => a + b, 0) / d.length),
      p50_delay_seconds: pct(50),
      p90_delay_seconds: pct(90),
      p95_delay_seconds: pct(95),
      max_delay_seconds: d.length === 0 ? null : d[d.length - 1]!,
      tk: r3(this.tk),
      vk: r3(this.vk),
      recorded_commercial_km: r3(this.commercial),
      off_itinerary_km: r3(this.off),
      reliable_km: r3(this.reliable),
      unreliable_km: r3(this.unreliable),
      percent_km: this.tk > 0 ? Math.round((this.commercial / this.tk) * 1000) / 10 : null,
    };
  }
}

export async function tripTrackingStats(db: Db, scope: Pick<GroupScope, 'groupId' | 'teams'>, p: Period, o: { byTeam: boolean; now: Date }) {
  const groupId = scope.groupId;
  const total = new Agg();
  const byDay = new Map<string, Agg>();
  const byRoute = new Map<string, Agg>();
  const byTeam = new Map<string, Agg>();
  const shapes = new Map<string, Map<string, number>>();
  const teamsOf = new Map<string, string[]>();
  for (const [id, teams] of await teamsOfVehicles(db, groupId)) teamsOf.set(`v ${id}`, teams);
  for (const [id, teams] of await teamsOfDrivers(db, groupId)) teamsOf.set(`d ${id}`, teams);
  const tripTeams = (t: TripTracking) => [...new Set([...t.vehicle_ids.flatMap((v) => teamsOf.get(`v ${v}`) ?? []), ...t.driver_ids.flatMap((d) => teamsOf.get(`d ${d}`) ?? [])])];
  const get = (m: Map<string, Agg>, k: string) => m.get(k) ?? m.set(k, new Agg()).get(k)!;

  for (let date = p.start; date <= p.end; date = addDays(date, 1)) {
    const day = await tripsOnServiceDate(db, groupId, date);
    const recorded = new Map((await trackingOf(db, groupId, date, undefined, { now: o.now })).map((t) => [t.trip_id, t]));
    if (day.gtfsId && !shapes.has(day.gtfsId)) shapes.set(day.gtfsId, await shapeLengths(db, groupId, day.gtfsId));
    const lengths = day.gtfsId ? shapes.get(day.gtfsId)! : new Map<string, number>();
    const unrecorded = scope.teams === null ? day.trips.filter((t) => !recorded.has(t.trip_id)) : [];
    const overlays = await overlaysFor(db, groupId, date, unrecorded);
    const seen = new Set<string>();
    const add = (routeId: string, status: TripStatus, tk: number | null, t: TripTracking | null) => {
      const teams = t ? tripTeams(t) : [];
      if (scope.teams !== null && !teams.some((x) => scope.teams!.includes(x))) return;
      for (const a of [total, get(byDay, date), get(byRoute, routeId)]) a.add(status, tk, t);
      if (o.byTeam) for (const team of teams) get(byTeam, team).add(status, tk, t);
    };
    for (const s of day.trips) {
      if (seen.has(s.trip_id)) continue;
      seen.add(s.trip_id);
      const length = s.shape_id ? lengths.get(s.shape_id) : undefined;
      const tk = length === undefined ? null : Math.round(length * 1000) / 1000;
      const t = recorded.get(s.trip_id);
      if (t) add(s.route_id, t.status, t.km.tk ?? tk, t);
      else if (scope.teams === null) add(s.route_id, tripStatus(null, overlays.get(overlayKey(s)) ?? emptyOverlay(), s.last_arrival_at, o.now), tk, null);
    }
    for (const t of recorded.values()) if (!seen.has(t.trip_id)) add(t.route_id ?? '', t.status, t.km.tk, t);
  }
  return {
    start_date: p.start,
    end_date: p.end,
    windows: { early_before_seconds: EARLY_BEFORE_SECONDS, late_after_seconds: LATE_AFTER_SECONDS },
    total: total.result(),
    by_day: [...byDay].sort(([a], [b]) => (a < b ? -1 : 1)).map(([service_date, a]) => ({ service_date, ...a.result() })),
    by_route: [...byRoute].sort(([a], [b]) => (a < b ? -1 : 1)).map(([route_id, a]) => ({ route_id, ...a.result() })),
    ...(o.byTeam ? { by_team: [...byTeam].sort(([a], [b]) => (a < b ? -1 : 1)).map(([team_id, a]) => ({ team_id, ...a.result() })) } : {}),
  };
}
