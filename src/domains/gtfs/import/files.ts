/**
 * One rule per GTFS file behind one small interface: the columns it reads, the check of one
 * row (which reports problems and returns the values to load), and the table it loads. Files
 * are listed in the order they are read, each after the files it refers to, so every
 * reference is checked in memory against the ids already read (ids only: a few MB even for a
 * large network, never a whole file).
 */
import { gtfsDate, gtfsSeconds } from '../time.js';
import type { RowProblems } from './problems.js';

/** What the files read so far tell about the feed. */
export interface FeedState {
  /** id → line of its first appearance (duplicate errors name it). */
  agencies: Map<string, number>;
  stops: Map<string, number>;
  routes: Map<string, number>;
  calendars: Map<string, number>;
  /** service_ids of calendar.txt and calendar_dates.txt. */
  services: Set<string>;
  shapes: Set<string>;
  trips: Map<string, TripSummary>;
  frequencies: Set<string>;
  agencyTimezones: Set<string>;
  feedInfo: Record<string, string> | null;
  transferCount: number;
}

/** What stop_times tell about a trip, stored with it (first and last stop, times, count). */
export interface TripSummary {
  line: number;
  count: number;
  firstSequence: number;
  firstStop: string;
  firstDeparture: number | null;
  firstLine: number;
  lastSequence: number;
  lastStop: string;
  lastArrival: number | null;
  lastLine: number;
}

export const newFeedState = (): FeedState => ({
  agencies: new Map(),
  stops: new Map(),
  routes: new Map(),
  calendars: new Map(),
  services: new Set(),
  shapes: new Set(),
  trips: new Map(),
  frequencies: new Set(),
  agencyTimezones: new Set(),
  feedInfo: null,
  transferCount: 0,
});

export interface Field {
  name: string;
  /** The column must be in the header (missing_column otherwise). */
  required?: boolean;
}

export interface GtfsFile {
  name: string;
  /** Key of the file in the import counts (the file name without .txt). */
  key: string;
  /** The table the rows go to; null for a file kept in the version record (feed_info). */
  table: string | null;
  required: boolean;
  fields: readonly Field[];
  /** Columns of `table` after group_id and gtfs_id, in the order `row` returns them. */
  columns: readonly string[];
  /** Checks one row, `f` holding the values of `fields` in order ('' when absent); null skips it. */
  row(f: readonly string[], p: RowProblems, s: FeedState): unknown[] | null;
  /**
   * For the large files whose key is not kept in memory: the deferred primary key finds the
   * duplicates after the load; `key` rebuilds a row's key to find their lines again.
   */
  deferredKey?: { constraint: string; columns: readonly string[]; key(f: readonly string[]): string };
}

const UINT = /^\d+$/;
const HEX_COLOR = /^[0-9A-Fa-f]{6}$/;

function requireValue(p: RowProblems, v: string, field: string): string | null {
  if (v !== '') return v;
  return p.error(field, 'missing_value', `${field} is required`);
}

/** A whole number in [min, max]; '' → null. An invalid value is an error, or (optional) a warning and null. */
function intValue(p: RowProblems, v: string, field: string, min: number, max: number, optional = false): number | null {
  if (v === '') return null;
  if (UINT.test(v) || (min < 0 && /^-\d+$/.test(v))) {
    const n = Number(v);
    if (n >= min && n <= max) return n;
  }
  const msg = `${field} must be a whole number from ${min} to ${max}`;
  return optional ? p.warning(field, 'ignored_value', `${msg}; dropped`, v) : p.error(field, 'bad_value', msg, v);
}

function numberValue(p: RowProblems, v: string, field: string, min: number, max: number, optional = false): number | null {
  if (v === '') return null;
  const n = Number(v);
  if (Number.isFinite(n) && n >= min && n <= max) return n;
  const msg = `${field} must be a number from ${min} to ${max}`;
  return optional ? p.warning(field, 'ignored_value', `${msg}; dropped`, v) : p.error(field, 'bad_value', msg, v);
}

function dateValue(p: RowProblems, v: string, field: string): string | null {
  if (v === '') return p.error(field, 'missing_value', `${field} is required`);
  return gtfsDate(v) ?? p.error(field, 'bad_date', `${field} must be a real date written YYYYMMDD`, v);
}

/** Seconds since the start of the service day; '' → null. */
function timeValue(p: RowProblems, v: string, field: string): number | null {
  if (v === '') return null;
  const s = gtfsSeconds(v);
  return s >= 0 ? s : p.error(field, 'bad_time', `${field} must be a time H:MM:SS (hours may pass 24)`, v);
}

function colorValue(p: RowProblems, v: string, field: string): string | null {
  if (v === '') return null;
  return HEX_COLOR.test(v) ? v.toUpperCase() : p.warning(field, 'ignored_value', `${field} must be 6 hexadecimal digits; dropped`, v);
}

/** Registers an id of a file's own key; a second appearance is a duplicate_key error. */
function ownId(p: RowProblems, ids: Map<string, number>, v: string, field: string): string | null {
  const id = requireValue(p, v, field);
  if (id === null) return null;
  const first = ids.get(id);
  if (first !== undefined) return p.error(field, 'duplicate_key', `${field} ${JSON.stringify(id)} appears more than once (first on line ${first})`, id);
  ids.set(id, p.line);
  return id;
}

function reference(p: RowProblems, known: { has(id: string): boolean }, v: string, field: string, file: string): string | null {
  const id = requireValue(p, v, field);
  if (id === null) return null;
  return known.has(id) ? id : p.error(field, 'unknown_reference', `${field} ${JSON.stringify(id)} is not in ${file}`, id);
}

const orNull = (v: string) => (v === '' ? null : v);

const agency: GtfsFile = {
  name: 'agency.txt',
  key: 'agency',
  table: 'gtfs_agencies',
  required: true,
  fields: [{ name: 'agency_id' }, { name: 'agency_name', required: true }, { name: 'agency_url' }, { name: 'agency_timezone', required: true }, { name: 'agency_lang' }, { name: 'agency_phone' }],
  columns: ['agency_id', 'agency_name', 'agency_url', 'agency_timezone', 'agency_lang', 'agency_phone'],
  row([id, name, url, tz, lang, phone], p, s) {
    // agency_id may be empty when the feed has a single agency: it is then stored as ''.
    const first = s.agencies.get(id!);
    if (first !== undefined) return p.error('agency_id', 'duplicate_key', `agency_id ${JSON.stringify(id)} appears more than once (first on line ${first})`, id);
    s.agencies.set(id!, p.line);
    if (s.agencies.size > 1 && s.agencies.has('')) return p.error('agency_id', 'missing_value', 'agency_id is required when the feed has several agencies');
    const agencyName = requireValue(p, name!, 'agency_name');
    const timezone = requireValue(p, tz!, 'agency_timezone');
    if (timezone) s.agencyTimezones.add(timezone);
    return agencyName === null || timezone === null ? null : [id, agencyName, orNull(url!), timezone, orNull(lang!), orNull(phone!)];
  },
};

const stops: GtfsFile = {
  name: 'stops.txt',
  key: 'stops',
  table: 'gtfs_stops',
  required: true,
  fields: [
    { name: 'stop_id', required: true }, { name: 'stop_code' }, { name: 'stop_name' }, { name: 'stop_desc' }, { name: 'stop_lat' }, { name: 'stop_lon' },
    { name: 'zone_id' }, { name: 'location_type' }, { name: 'parent_station' }, { name: 'wheelchair_boarding' }, { name: 'platform_code' },
  ],
  columns: ['stop_id', 'stop_code', 'stop_name', 'stop_desc', 'stop_lat', 'stop_lon', 'zone_id', 'location_type', 'parent_station', 'wheelchair_boarding', 'platform_code'],
  row([id, code, name, desc, lat, lon, zone, type, parent, wheelchair, platform], p, s) {
    const stopId = ownId(p, s.stops, id!, 'stop_id');
    const locationType = intValue(p, type!, 'location_type', 0, 4, true);
    // Coordinates are required for stops, stations and entrances (location_type 0, 1, 2).
    const located = locationType === null || locationType <= 2;
    const latitude = located ? (requireValue(p, lat!, 'stop_lat') === null ? null : numberValue(p, lat!, 'stop_lat', -90, 90)) : numberValue(p, lat!, 'stop_lat', -90, 90, true);
    const longitude = located ? (requireValue(p, lon!, 'stop_lon') === null ? null : numberValue(p, lon!, 'stop_lon', -180, 180)) : numberValue(p, lon!, 'stop_lon', -180, 180, true);
    if (p.failed || stopId === null) return null;
    return [stopId, orNull(code!), orNull(name!), orNull(desc!), latitude, longitude, orNull(zone!), locationType, orNull(parent!), intValue(p, wheelchair!, 'wheelchair_boarding', 0, 2, true), orNull(platform!)];
  },
};

const routes: GtfsFile = {
  name: 'routes.txt',
  key: 'routes',
  table: 'gtfs_routes',
  required: true,
  fields: [
    { name: 'route_id', required: true }, { name: 'agency_id' }, { name: 'route_short_name' }, { name: 'route_long_name' }, { name: 'route_desc' },
    { name: 'route_type', required: true }, { name: 'route_color' }, { name: 'route_text_color' }, { name: 'route_sort_order' },
  ],
  columns: ['route_id', 'agency_id', 'route_short_name', 'route_long_name', 'route_desc', 'route_type', 'route_color', 'route_text_color', 'route_sort_order'],
  row([id, agencyId, short, long, desc, type, color, textColor, sort], p, s) {
    const routeId = ownId(p, s.routes, id!, 'route_id');
    let agencyRef: string | null = null;
    if (agencyId !== '') agencyRef = reference(p, s.agencies, agencyId!, 'agency_id', 'agency.txt');
    else if (s.agencies.size > 1) p.warning('agency_id', 'ignored_value', 'agency_id should be given when the feed has several agencies');
    const routeType = requireValue(p, type!, 'route_type') === null ? null : intValue(p, type!, 'route_type', 0, 9999);
    if (short === '' && long === '') p.warning('route_short_name', 'ignored_value', 'a route should have route_short_name or route_long_name');
    if (p.failed || routeId === null) return null;
    return [routeId, agencyRef, orNull(short!), orNull(long!), orNull(desc!), routeType, colorValue(p, color!, 'route_color'), colorValue(p, textColor!, 'route_text_color'), intValue(p, sort!, 'route_sort_order', 0, 2 ** 31 - 1, true)];
  },
};

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

const calendar: GtfsFile = {
  name: 'calendar.txt',
  key: 'calendar',
  table: 'gtfs_calendars',
  required: false,
  fields: [{ name: 'service_id', required: true }, ...WEEKDAYS.map((name) => ({ name, required: true })), { name: 'start_date', required: true }, { name: 'end_date', required: true }],
  columns: ['service_id', ...WEEKDAYS, 'start_date', 'end_date'],
  row(f, p, s) {
    const serviceId = ownId(p, s.calendars, f[0]!, 'service_id');
    if (serviceId !== null) s.services.add(serviceId);
    const days = WEEKDAYS.map((day, i) => {
      const v = f[i + 1]!;
      return v === '1' ? true : v === '0' ? false : p.error(day, 'bad_value', `${day} must be 0 or 1`, v);
    });
    const start = dateValue(p, f[8]!, 'start_date');
    const end = dateValue(p, f[9]!, 'end_date');
    if (start && end && end < start) p.error('end_date', 'bad_date', `end_date ${f[9]} is before start_date ${f[8]}`, f[9]);
    return p.failed ? null : [serviceId, ...days, start, end];
  },
};

const calendarDates: GtfsFile = {
  name: 'calendar_dates.txt',
  key: 'calendar_dates',
  table: 'gtfs_calendar_dates',
  required: false,
  fields: [{ name: 'service_id', required: true }, { name: 'date', required: true }, { name: 'exception_type', required: true }],
  columns: ['service_id', 'date', 'exception_type'],
  row([id, date, type], p, s) {
    const serviceId = requireValue(p, id!, 'service_id');
    if (serviceId !== null) s.services.add(serviceId);
    const day = dateValue(p, date!, 'date');
    if (type !== '1' && type !== '2') p.error('exception_type', 'bad_value', 'exception_type must be 1 (service added) or 2 (service removed)', type);
    return p.failed ? null : [serviceId, day, Number(type)];
  },
  deferredKey: { constraint: 'gtfs_calendar_dates_pkey', columns: ['service_id', 'date'], key: ([id, date]) => `${id}\u0000${gtfsDate(date!)}` },
};

const shapes: GtfsFile = {
  name: 'shapes.txt',
  key: 'shapes',
  table: 'gtfs_shapes',
  required: false,
  fields: [{ name: 'shape_id', required: true }, { name: 'shape_pt_sequence', required: true }, { name: 'shape_pt_lat', required: true }, { name: 'shape_pt_lon', required: true }, { name: 'shape_dist_traveled' }],
  columns: ['shape_id', 'shape_pt_sequence', 'shape_pt_lat', 'shape_pt_lon', 'shape_dist_traveled'],
  row([id, seq, lat, lon, dist], p, s) {
    const shapeId = requireValue(p, id!, 'shape_id');
    if (shapeId !== null) s.shapes.add(shapeId);
    const sequence = requireValue(p, seq!, 'shape_pt_sequence') === null ? null : intValue(p, seq!, 'shape_pt_sequence', 0, 2 ** 31 - 1);
    const latitude = requireValue(p, lat!, 'shape_pt_lat') === null ? null : numberValue(p, lat!, 'shape_pt_lat', -90, 90);
    const longitude = requireValue(p, lon!, 'shape_pt_lon') === null ? null : numberValue(p, lon!, 'shape_pt_lon', -180, 180);
    if (p.failed) return null;
    return [shapeId, sequence, latitude, longitude, numberValue(p, dist!, 'shape_dist_traveled', 0, Number.MAX_VALUE, true)];
  },
  deferredKey: { constraint: 'gtfs_shapes_pkey', columns: ['shape_id', 'shape_pt_sequence'], key: ([id, seq]) => `${id}\u0000${Number(seq)}` },
};

const TRIP_FIELDS: readonly Field[] = [
  { name: 'route_id', required: true }, { name: 'service_id', required: true }, { name: 'trip_id', required: true }, { name: 'trip_headsign' }, { name: 'trip_short_name' },
  { name: 'direction_id' }, { name: 'block_id' }, { name: 'shape_id' }, { name: 'wheelchair_accessible' }, { name: 'bikes_allowed' },
];

/**
 * trips.txt is read twice: first to check it and learn the trip ids (stop_times refers to them),
 * then, after stop_times, to load each trip with what its stop times told (first and last stop
 * and time, count). Reading the small file twice keeps memory to ids and counters.
 */
const trips: GtfsFile = {
  name: 'trips.txt',
  key: 'trips',
  table: null,
  required: true,
  fields: TRIP_FIELDS,
  columns: [],
  row([routeId, serviceId, id], p, s) {
    requireValue(p, id!, 'trip_id');
    const first = s.trips.get(id!);
    if (first !== undefined) p.error('trip_id', 'duplicate_key', `trip_id ${JSON.stringify(id)} appears more than once (first on line ${first.line})`, id);
    else if (id !== '') s.trips.set(id!, { line: p.line, count: 0, firstSequence: Infinity, firstStop: '', firstDeparture: null, firstLine: 0, lastSequence: -1, lastStop: '', lastArrival: null, lastLine: 0 });
    reference(p, s.routes, routeId!, 'route_id', 'routes.txt');
    reference(p, s.services, serviceId!, 'service_id', 'calendar.txt or calendar_dates.txt');
    return null;
  },
};

export const tripsLoad: GtfsFile = {
  name: 'trips.txt',
  key: 'trips',
  table: 'gtfs_trips',
  required: true,
  fields: TRIP_FIELDS,
  columns: [
    'trip_id', 'route_id', 'service_id', 'trip_headsign', 'trip_short_name', 'direction_id', 'block_id', 'shape_id', 'wheelchair_accessible', 'bikes_allowed',
    'first_stop_id', 'first_stop_sequence', 'first_departure', 'last_stop_id', 'last_stop_sequence', 'last_arrival', 'stop_count',
  ],
  row([routeId, serviceId, id, headsign, shortName, direction, block, shape, wheelchair, bikes], p, s) {
    const t = s.trips.get(id!);
    // Rows refused by the first reading were reported there.
    if (!t || t.line !== p.line) return null;
    let shapeId: string | null = orNull(shape!);
    if (shapeId !== null && !s.shapes.has(shapeId)) shapeId = p.warning('shape_id', 'ignored_value', `shape_id ${JSON.stringify(shape)} is not in shapes.txt; dropped`, shape);
    if (t.count === 0) p.warning('trip_id', 'trip_without_stop_times', `trip ${JSON.stringify(id)} has no stop times: it is kept but never runs`, id);
    const stopsOf = t.count > 0;
    return [
      id, routeId, serviceId, orNull(headsign!), orNull(shortName!), intValue(p, direction!, 'direction_id', 0, 1, true), orNull(block!), shapeId,
      intValue(p, wheelchair!, 'wheelchair_accessible', 0, 2, true), intValue(p, bikes!, 'bikes_allowed', 0, 2, true),
      stopsOf ? t.firstStop : null, stopsOf ? t.firstSequence : null, t.firstDeparture, stopsOf ? t.lastStop : null, stopsOf ? t.lastSequence : null, t.lastArrival, t.count,
    ];
  },
};

const stopTimes: GtfsFile = {
  name: 'stop_times.txt',
  key: 'stop_times',
  table: 'gtfs_stop_times',
  required: true,
  fields: [
    { name: 'trip_id', required: true }, { name: 'arrival_time' }, { name: 'departure_time' }, { name: 'stop_id', required: true }, { name: 'stop_sequence', required: true },
    { name: 'stop_headsign' }, { name: 'pickup_type' }, { name: 'drop_off_type' }, { name: 'timepoint' }, { name: 'shape_dist_traveled' },
  ],
  columns: ['trip_id', 'stop_sequence', 'stop_id', 'arrival_time', 'departure_time', 'stop_headsign', 'pickup_type', 'drop_off_type', 'timepoint', 'shape_dist_traveled'],
  row([tripId, arr, dep, stopId, seq, headsign, pickup, dropOff, timepoint, dist], p, s) {
    const trip = s.trips.get(tripId!);
    if (!trip) p.error('trip_id', tripId === '' ? 'missing_value' : 'unknown_reference', tripId === '' ? 'trip_id is required' : `trip_id ${JSON.stringify(tripId)} is not in trips.txt`, tripId);
    reference(p, s.stops, stopId!, 'stop_id', 'stops.txt');
    const sequence = seq === '' ? p.error('stop_sequence', 'missing_value', 'stop_sequence is required') : intValue(p, seq!, 'stop_sequence', 0, 2 ** 31 - 1);
    // One time given stands for both (GTFS: they are equal when the vehicle does not wait).
    let arrival = timeValue(p, arr!, 'arrival_time');
    let departure = timeValue(p, dep!, 'departure_time');
    if (arrival === null) arrival = departure;
    if (departure === null) departure = arrival;
    if (arrival !== null && departure !== null && departure < arrival) p.error('departure_time', 'bad_time', `departure_time ${dep} is before arrival_time ${arr}`, dep);
    if (p.failed || !trip || sequence === null) return null;
    trip.count++;
    if (sequence < trip.firstSequence) {
      trip.firstSequence = sequence;
      trip.firstStop = stopId!;
      trip.firstDeparture = departure;
      trip.firstLine = p.line;
    }
    if (sequence > trip.lastSequence) {
      trip.lastSequence = sequence;
      trip.lastStop = stopId!;
      trip.lastArrival = arrival;
      trip.lastLine = p.line;
    }
    return [
      tripId, sequence, stopId, arrival, departure, orNull(headsign!), intValue(p, pickup!, 'pickup_type', 0, 3, true), intValue(p, dropOff!, 'drop_off_type', 0, 3, true),
      intValue(p, timepoint!, 'timepoint', 0, 1, true), numberValue(p, dist!, 'shape_dist_traveled', 0, Number.MAX_VALUE, true),
    ];
  },
  deferredKey: { constraint: 'gtfs_stop_times_pkey', columns: ['trip_id', 'stop_sequence'], key: ([tripId, , , , seq]) => `${tripId}\u0000${Number(seq)}` },
};

const frequencies: GtfsFile = {
  name: 'frequencies.txt',
  key: 'frequencies',
  table: 'gtfs_frequencies',
  required: false,
  fields: [{ name: 'trip_id', required: true }, { name: 'start_time', required: true }, { name: 'end_time', required: true }, { name: 'headway_secs', required: true }, { name: 'exact_times' }],
  columns: ['trip_id', 'start_time', 'end_time', 'headway_secs', 'exact_times'],
  row([tripId, start, end, headway, exact], p, s) {
    const trip = reference(p, s.trips, tripId!, 'trip_id', 'trips.txt');
    const from = start === '' ? p.error('start_time', 'missing_value', 'start_time is required') : timeValue(p, start!, 'start_time');
    const to = end === '' ? p.error('end_time', 'missing_value', 'end_time is required') : timeValue(p, end!, 'end_time');
    if (from !== null && to !== null && to <= from) p.error('end_time', 'bad_time', `end_time ${end} is not after start_time ${start}`, end);
    const secs = headway === '' ? p.error('headway_secs', 'missing_value', 'headway_secs is required') : intValue(p, headway!, 'headway_secs', 1, 86_400);
    const key = `${tripId}\u0000${from}`;
    if (trip !== null && from !== null && s.frequencies.has(key)) p.error('start_time', 'duplicate_key', `trip ${JSON.stringify(tripId)} has two frequencies starting at ${start}`, start);
    if (p.failed) return null;
    s.frequencies.add(key);
    return [trip, from, to, secs, intValue(p, exact!, 'exact_times', 0, 1, true) ?? 0];
  },
};

const transfers: GtfsFile = {
  name: 'transfers.txt',
  key: 'transfers',
  table: 'gtfs_transfers',
  required: false,
  fields: [{ name: 'from_stop_id' }, { name: 'to_stop_id' }, { name: 'from_route_id' }, { name: 'to_route_id' }, { name: 'from_trip_id' }, { name: 'to_trip_id' }, { name: 'transfer_type', required: true }, { name: 'min_transfer_time' }],
  columns: ['transfer_index', 'from_stop_id', 'to_stop_id', 'from_route_id', 'to_route_id', 'from_trip_id', 'to_trip_id', 'transfer_type', 'min_transfer_time'],
  row(f, p, s) {
    // Transfers only inform passengers: a bad row is skipped with a warning, never fatal.
    const refs: [string, { has(id: string): boolean }, string][] = [
      ['from_stop_id', s.stops, 'stops.txt'], ['to_stop_id', s.stops, 'stops.txt'], ['from_route_id', s.routes, 'routes.txt'],
      ['to_route_id', s.routes, 'routes.txt'], ['from_trip_id', s.trips, 'trips.txt'], ['to_trip_id', s.trips, 'trips.txt'],
    ];
    for (const [i, [field, known, file]] of refs.entries()) {
      if (f[i] !== '' && !known.has(f[i]!)) return p.warning(field, 'skipped_row', `${field} ${JSON.stringify(f[i])} is not in ${file}; the transfer is not imported`, f[i]);
    }
    const type = f[6] === '' ? 0 : UINT.test(f[6]!) && Number(f[6]) <= 5 ? Number(f[6]) : null;
    if (type === null) return p.warning('transfer_type', 'skipped_row', 'transfer_type must be 0 to 5; the transfer is not imported', f[6]);
    return [++s.transferCount, ...f.slice(0, 6).map(orNull), type, intValue(p, f[7]!, 'min_transfer_time', 0, 2 ** 31 - 1, true)];
  },
};

const FEED_INFO_FIELDS = ['feed_publisher_name', 'feed_publisher_url', 'feed_lang', 'default_lang', 'feed_start_date', 'feed_end_date', 'feed_version', 'feed_contact_email', 'feed_contact_url'];

const feedInfo: GtfsFile = {
  name: 'feed_info.txt',
  key: 'feed_info',
  table: null,
  required: false,
  fields: FEED_INFO_FIELDS.map((name) => ({ name })),
  columns: [],
  row(f, p, s) {
    if (s.feedInfo !== null) return p.warning(null, 'skipped_row', 'feed_info.txt has more than one row; only the first is kept');
    s.feedInfo = Object.fromEntries(FEED_INFO_FIELDS.map((name, i) => [name, f[i]!]).filter(([, v]) => v !== ''));
    return null;
  },
};

/** In reading order: each file after the files it refers to. */
export const GTFS_FILES: readonly GtfsFile[] = [agency, stops, routes, calendar, calendarDates, shapes, trips, stopTimes, tripsLoad, frequencies, transfers, feedInfo];

/** The file names read from an archive; any other entry is reported as ignored. */
export const GTFS_FILE_NAMES: ReadonlySet<string> = new Set(GTFS_FILES.map((f) => f.name));
