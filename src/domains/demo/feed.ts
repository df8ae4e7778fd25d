/** The demo network written as a GTFS feed (a zip in memory), for the ordinary GTFS import. */
import { DateTime } from 'luxon';
import { zipBuffer } from '../../platform/zip.js';
import { formatGtfsTime } from '../gtfs/time.js';
import { holidays, type DemoNetwork } from './network.js';

const csv = (header: string[], rows: (string | number | null)[][]) =>
  [header.join(','), ...rows.map((r) => r.map((v) => (v === null ? '' : /[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v))).join(','))].join('\n') + '\n';

const compact = (date: string) => date.replaceAll('-', '');

/** The feed's files; calendars run from `from` to `to` (YYYY-MM-DD), holidays moved to the Sunday service. */
export function demoFeedFiles(n: DemoNetwork, from: string, to: string): Record<string, string> {
  const holidayRows: (string | number)[][] = [];
  for (let year = Number(from.slice(0, 4)); year <= Number(to.slice(0, 4)); year++) {
    for (const day of holidays(year)) {
      if (day < from || day > to) continue;
      const weekday = DateTime.fromISO(day).weekday;
      if (weekday === 7) continue;
      holidayRows.push([weekday === 6 ? 'SA' : 'WK', compact(day), 2], ['SU', compact(day), 1]);
    }
  }
  return {
    'agency.txt': csv(['agency_id', 'agency_name', 'agency_url', 'agency_timezone', 'agency_lang'], [['TCL', 'Transports de Lumière (demo)', 'https://transit-ops.example/demo', n.timezone, 'fr']]),
    'feed_info.txt': csv(['feed_publisher_name', 'feed_publisher_url', 'feed_lang', 'feed_start_date', 'feed_end_date', 'feed_version'], [
      ['transit-ops demo generator', 'https://transit-ops.example/demo', 'fr', compact(from), compact(to), `demo seed ${n.seed}`],
    ]),
    'stops.txt': csv(['stop_id', 'stop_name', 'stop_lat', 'stop_lon', 'wheelchair_boarding'], n.stops.map((s) => [s.stop_id, s.name, s.lat, s.lon, 1])),
    'routes.txt': csv(['route_id', 'agency_id', 'route_short_name', 'route_long_name', 'route_type', 'route_color', 'route_text_color', 'route_sort_order'],
      n.routes.map((r, i) => [r.route_id, 'TCL', r.short_name, r.long_name, 3, r.color, r.text_color, i + 1])),
    'calendar.txt': csv(['service_id', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'start_date', 'end_date'], [
      ['WK', 1, 1, 1, 1, 1, 0, 0, compact(from), compact(to)],
      ['SA', 0, 0, 0, 0, 0, 1, 0, compact(from), compact(to)],
      ['SU', 0, 0, 0, 0, 0, 0, 1, compact(from), compact(to)],
    ]),
    'calendar_dates.txt': csv(['service_id', 'date', 'exception_type'], holidayRows),
    'shapes.txt': csv(['shape_id', 'shape_pt_lat', 'shape_pt_lon', 'shape_pt_sequence', 'shape_dist_traveled'],
      n.shapes.flatMap((s) => s.points.map((p, i) => [s.shape_id, p[1], p[0], i + 1, s.dists[i]!]))),
    'trips.txt': csv(['route_id', 'service_id', 'trip_id', 'trip_headsign', 'direction_id', 'block_id', 'shape_id', 'wheelchair_accessible'],
      n.trips.map((t) => [t.route_id, t.service_id, t.trip_id, t.headsign, t.direction_id, t.block_id, t.shape_id, 1])),
    'stop_times.txt': csv(['trip_id', 'arrival_time', 'departure_time', 'stop_id', 'stop_sequence', 'timepoint', 'shape_dist_traveled'],
      n.trips.flatMap((t) => t.stop_times.map((st) => [t.trip_id, formatGtfsTime(st.arrival), formatGtfsTime(st.departure), st.stop_id, st.stop_sequence, st.timepoint ? 1 : 0, st.dist]))),
    'frequencies.txt': csv(['trip_id', 'start_time', 'end_time', 'headway_secs', 'exact_times'],
      n.trips.flatMap((t) => (t.frequency ? [[t.trip_id, formatGtfsTime(t.frequency.start), formatGtfsTime(t.frequency.end), t.frequency.headway_secs, 1]] : []))),
  };
}

export function demoFeedZip(n: DemoNetwork, from: string, to: string): Buffer {
  return zipBuffer(Object.entries(demoFeedFiles(n, from, to)).map(([name, data]) => ({ name, data })));
}
