/**
 * A large synthetic GTFS feed, written straight into a zip: many routes, calendars with
 * exceptions, shapes, frequencies, and evening trips whose times run past 24:00:00.
 * Deterministic (a seeded generator), so runs compare.
 */
import { ZipFileWriter } from '../src/platform/zip.js';

export interface FeedSize {
  routes: number;
  tripsPerRoute: number;
  stopsPerTrip: number;
  stops: number;
  services: number;
}

/** 400 routes × 250 trips × 20 stops = 2,000,000 stop_times. */
export const DEFAULT_SIZE: FeedSize = { routes: 400, tripsPerRoute: 250, stopsPerTrip: 20, stops: 8000, services: 60 };

function seeded(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const pad = (n: number) => String(n).padStart(2, '0');
const time = (secs: number) => `${pad(Math.floor(secs / 3600))}:${pad(Math.floor(secs / 60) % 60)}:${pad(secs % 60)}`;

function* lines<T>(header: string, items: Iterable<T>, line: (item: T) => string, batch = 5000): Generator<string> {
  let out = `${header}\n`;
  let n = 0;
  for (const item of items) {
    out += `${line(item)}\n`;
    if (++n % batch === 0) {
      yield out;
      out = '';
    }
  }
  if (out) yield out;
}

function* range(n: number) {
  for (let i = 0; i < n; i++) yield i;
}

export async function writeSyntheticFeed(path: string, size: FeedSize = DEFAULT_SIZE): Promise<{ stopTimes: number; trips: number }> {
  const random = seeded(42);
  const zip = new ZipFileWriter(path);
  await zip.add('agency.txt', ['agency_id,agency_name,agency_url,agency_timezone\nSYN,Synthetic Transit,https://synthetic.example,Europe/Paris\n']);
  const stopLat = (i: number) => (48.7 + (i % 100) * 0.004).toFixed(6);
  const stopLon = (i: number) => (2.2 + Math.floor(i / 100) * 0.005).toFixed(6);
  await zip.add('stops.txt', lines('stop_id,stop_code,stop_name,stop_lat,stop_lon,wheelchair_boarding', range(size.stops), (i) => `S${i},${1000 + i},"Stop ${i}, main street",${stopLat(i)},${stopLon(i)},${i % 3}`));
  await zip.add('routes.txt', lines('route_id,agency_id,route_short_name,route_long_name,route_type,route_color,route_text_color', range(size.routes), (r) => `R${r},SYN,${r},Line ${r},3,${(r * 2654435761 % 0xffffff).toString(16).padStart(6, '0')},FFFFFF`));
  const weekdays = ['1,1,1,1,1,0,0', '0,0,0,0,0,1,0', '0,0,0,0,0,0,1', '1,1,1,1,1,1,1', '1,0,1,0,1,0,0'];
  await zip.add('calendar.txt', lines('service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date', range(size.services), (s) => `C${s},${weekdays[s % weekdays.length]},2026${pad(1 + (s % 6))}01,2026${pad(7 + (s % 6))}28`));
  await zip.add('calendar_dates.txt', lines('service_id,date,exception_type', range(size.services * 10), (i) => `C${i % size.services},2026${pad(1 + (i % 12))}${pad(1 + Math.floor(i / size.services))},${i % 2 === 0 ? 2 : 1}`));
  // One shape per route and direction, 200 points each.
  await zip.add('shapes.txt', lines('shape_id,shape_pt_sequence,shape_pt_lat,shape_pt_lon,shape_dist_traveled', range(size.routes * 2 * 200), (i) => {
    const shape = Math.floor(i / 200);
    const k = i % 200;
    return `SH${shape},${k},${(48.7 + (shape % 50) * 0.006 + k * 0.0004).toFixed(6)},${(2.2 + k * 0.0006).toFixed(6)},${(k * 55.3).toFixed(1)}`;
  }));
  const trips = size.routes * size.tripsPerRoute;
  const routeStops = (r: number) => Array.from({ length: size.stopsPerTrip }, (_v, k) => (r * 37 + k * 11) % size.stops);
  await zip.add('trips.txt', lines('route_id,service_id,trip_id,trip_headsign,direction_id,block_id,shape_id', range(trips), (t) => {
    const r = Math.floor(t / size.tripsPerRoute);
    const dir = t % 2;
    return `R${r},C${(r * 7 + t) % size.services},T${t},Terminus ${r}-${dir},${dir},BL${Math.floor(t / 8)},SH${r * 2 + dir}`;
  }));
  // Departures spread from 05:00 to 26:00: the last ones of each route run past midnight.
  const first = Array.from({ length: trips }, (_v, t) => 5 * 3600 + Math.floor(((t % size.tripsPerRoute) / size.tripsPerRoute) * 21 * 3600) + Math.floor(random() * 120));
  await zip.add('stop_times.txt', (function* () {
    let out = 'trip_id,arrival_time,departure_time,stop_id,stop_sequence,pickup_type,drop_off_type,shape_dist_traveled\n';
    for (let t = 0; t < trips; t++) {
      const stops = routeStops(Math.floor(t / size.tripsPerRoute));
      let at = first[t]!;
      for (let k = 0; k < size.stopsPerTrip; k++) {
        const dwell = k === 0 || k === size.stopsPerTrip - 1 ? 0 : 30;
        out += `T${t},${time(at)},${time(at + dwell)},S${stops[k]},${k + 1},0,0,${(k * 550.5).toFixed(1)}\n`;
        at += dwell + 90 + Math.floor(random() * 60);
      }
      if (t % 500 === 499) {
        yield out;
        out = '';
      }
    }
    if (out) yield out;
  })());
  await zip.add('frequencies.txt', lines('trip_id,start_time,end_time,headway_secs,exact_times', range(Math.min(50, size.routes)), (i) => `T${i * size.tripsPerRoute},${time(6 * 3600 + i * 60)},${time(9 * 3600)},600,1`));
  await zip.add('feed_info.txt', ['feed_publisher_name,feed_publisher_url,feed_lang,feed_version\nSynthetic,https://synthetic.example,fr,bench\n']);
  await zip.close();
  return { stopTimes: trips * size.stopsPerTrip, trips };
}
