/** What SIRI reads beyond the snapshot: the visits of one stop, and the discovery lists. */
import type { Queryable } from '../../../platform/db/index.js';
import { addDays, localDate } from '../../../platform/time.js';
import { publishedGtfsId } from '../../gtfs/service.js';
import { linesByStop, routesOf, stopCalls, stopsOf, tripsOnServiceDate, versionInForce, type RouteInfo, type StopInfo } from '../../gtfs/service-days.js';
import { atSeconds } from '../../gtfs/time.js';
import { instanceKey, monitored, type Call, type NetworkNow } from '../network.js';
import type { StopVisit } from './build.js';

/**
 * The visits of a stop from now to now + previewSeconds (by expected, else aimed, departure), at
 * most `max`, from the schedule of the current and previous service dates with what the snapshot
 * knows (cancellations, skipped stops, the predicted times of the trips in progress and of the
 * next trips of their blocks, delays) and the stops updates add there.
 */
export async function stopVisits(db: Queryable, net: NetworkNow, stopId: string, o: { lineRef?: string | undefined; previewSeconds: number; max: number }): Promise<StopVisit[]> {
  const visits: StopVisit[] = [];
  const from = net.now.getTime();
  const until = from + o.previewSeconds * 1000;
  const today = localDate(net.now, net.timezone);
  for (const date of [addDays(today, -1), today]) {
    const gtfsId = await versionInForce(db, net.groupId, date);
    if (!gtfsId) continue;
    const rows = await stopCalls(db, net.groupId, gtfsId, stopId, o.lineRef ?? null);

    if (rows.length === 0) continue;
    const day = await tripsOnServiceDate(db, net.groupId, date, { gtfsId, tripIds: [...new Set(rows.map((r) => r.trip_id))] });
    for (const trip of day.trips) {
      const snapshot = net.trips.find((ft) => ft.service_date === date && instanceKey(ft.trip.trip_id, ft.trip.start_time) === instanceKey(trip.trip_id, trip.start_time));
      for (const r of rows.filter((x) => x.trip_id === trip.trip_id)) {
        const shift = trip.first_departure - r.first_departure;
        const known = snapshot?.calls.find((c) => c.stop_sequence === r.stop_sequence);
        const call: Call = known ?? {
          stop_id: stopId, stop_sequence: r.stop_sequence, name: r.stop_name, lat: null, lon: null, status: 'scheduled', temporary: false, update_id: null,
          arrival_at: atSeconds(day.dayStart, r.arrival_time === null ? null : r.arrival_time + shift),
          departure_at: atSeconds(day.dayStart, r.departure_time === null ? null : r.departure_time + shift),
          expected_arrival_at: null, expected_departure_at: null, uncertainty_seconds: null, passed: false,
        };
        visits.push({ trip, service_date: date, call, order: (snapshot?.calls.indexOf(call) ?? -1) + 1 || r.stop_sequence, cancelled: snapshot?.overlay.cancelled ?? false, monitored: snapshot ? monitored(snapshot) : false });
      }
    }
  }
  // Stops the updates add at this stop.
  for (const ft of net.trips) {
    if (o.lineRef !== undefined && ft.trip.route_id !== o.lineRef) continue;
    ft.calls.forEach((c, i) => {
      if (c.status === 'added' && c.stop_id === stopId) visits.push({ trip: ft.trip, service_date: ft.service_date, call: c, order: i + 1, cancelled: ft.overlay.cancelled, monitored: monitored(ft) });
    });
  }
  const when = (v: StopVisit) => (v.call.expected_departure_at ?? v.call.departure_at ?? v.call.expected_arrival_at ?? v.call.arrival_at)?.getTime() ?? 0;
  return visits.filter((v) => when(v) >= from && when(v) <= until).sort((a, b) => when(a) - when(b)).slice(0, o.max);
}

/** Lines and stop points of the GTFS published now (with the lines calling at each stop). */
export async function discovery(db: Queryable, groupId: string): Promise<{ gtfsId: string | null; routes: RouteInfo[]; stops: (StopInfo & { lines: string[] })[] }> {
  const gtfsId = await publishedGtfsId(db, groupId);
  if (!gtfsId) return { gtfsId, routes: [], stops: [] };
  const routes = await routesOf(db, groupId, gtfsId);
  const lines = await linesByStop(db, groupId, gtfsId);
  const byStop = new Map(lines.map((l) => [l.stop_id, l.lines]));
  const stops = (await stopsOf(db, groupId, gtfsId)).filter((s) => (s.location_type ?? 0) === 0).map((s) => ({ ...s, lines: byStop.get(s.stop_id) ?? [] }));
  return { gtfsId, routes, stops };
}
