/**
 * The CSV exports of the actual side, streamed over the stored tracking (memory stays flat
 * whatever the period): export/trips (datahub) from a server-side cursor, export/trip-tracking
 * and export/vehicle-exploitation (PCS-CNT layout), millions of stop rows, from COPY text. Statuses are derived per row as trackingOf does:
 * the trip updates in force are read for the period before the stream starts.
 */
import { uncopyText, type Db } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { csvDecimalComma, csvText, type CsvValue } from '../../platform/csv.js';
import { teamParam } from '../../platform/http/teams.js';
import { addDays, isoWithOffset, type Period } from '../../platform/time.js';
import { formatGtfsTime } from '../gtfs/time.js';
import { emptyOverlay, type TripOverlay } from '../updates/overlay.js';
import { overlayKey, overlaysFor } from '../updates/service.js';
import { copyExploitationStops, copyTrackingStops, selectMaxDoors, selectTripKeys, streamTripRows } from './queries/exports.js';
import { refreshDirty, tripOver, tripStatus } from './tracking.js';

// Rows per FETCH: the next batch is fetched while one is written, and smaller batches wait less, so
// fewer rows outlive a young-generation collection (less old-space garbage, a lower RSS peak).
const BATCH = 2000;

/**
 * The overlays of the recorded trips of a period, read before streaming (a query inside the
 * stream would wait for the cursor's connection on PGlite). Only non-empty overlays are kept.
 */
async function overlaysOfPeriod(db: Db, groupId: string, start: string, end: string) {
  const known = new Map<string, TripOverlay>();
  for (let date = start; date <= end; date = addDays(date, 1)) {
    const trips = await selectTripKeys(db, groupId, date);
    const keys = trips.map((t) => ({ trip_id: t.trip_id, route_id: t.route_id ?? '', start_time: t.start_time === null ? null : formatGtfsTime(t.start_time) }));
    for (const [key, o] of await overlaysFor(db, groupId, date, keys)) if (o.applied.length > 0) known.set(`${date} ${key}`, o);
  }
  return (t: { service_date: string; trip_id: string; start_time: number | null }): TripOverlay =>
    known.get(`${t.service_date} ${overlayKey({ trip_id: t.trip_id, start_time: t.start_time === null ? null : formatGtfsTime(t.start_time) })}`) ?? emptyOverlay();
}

/** Columns of export/trips (datahub), in order. */
export const TRIPS_COLUMNS = [
  'service_date', 'trip_id', 'route_id', 'direction_id', 'block_id', 'headsign', 'start_time', 'status', 'scheduled_departure', 'scheduled_arrival',
  'started_at', 'ended_at', 'delay_seconds', 'planned_stops', 'recorded_stops', 'skipped_stops', 'missed_stops', 'tk', 'vk', 'recorded_commercial_km',
  'off_itinerary_km', 'reliable_km', 'unreliable_km', 'percent_km', 'boardings', 'alightings', 'loading', 'vehicle_ids', 'driver_ids', 'device_ids',
] as const;

/** export/trips: one line per recorded trip of the date, ordered by trip_id. */
export async function* exportTrips(db: Db, scope: Pick<GroupScope, 'groupId' | 'teams'>, serviceDate: string, timezone: string, now: Date): AsyncIterable<CsvValue[][]> {
  await refreshDirty(db, { groupId: scope.groupId, dates: [serviceDate] });
  const iso = isoWithOffset(timezone);
  const time = (d: Date | null) => (d ? iso(d) : null);
  const overlayOf = await overlaysOfPeriod(db, scope.groupId, serviceDate, serviceDate);
  for await (const batch of streamTripRows(db, scope.groupId, serviceDate, teamParam(scope), BATCH)) {
    yield batch.map((r) => {
      const o = overlayOf(r);
      const skipped = r.unpassed_stops.filter((s) => o.skipped.has(s)).length;
      const over = tripOver(r, now);
      return [
        r.service_date, r.trip_id, r.route_id, r.direction_id, r.block_id, r.headsign, r.start_time === null ? null : formatGtfsTime(r.start_time),
        tripStatus(r, o, r.scheduled_end_at, now), time(r.scheduled_start_at), time(r.scheduled_end_at), time(r.started_at), over ? time(r.ended_at) : null,
        r.delay_seconds, r.planned_stops, r.recorded_stops, skipped, over ? r.unpassed_stops.length - skipped : 0, r.tk, r.vk, r.recorded_commercial_km,
        r.off_itinerary_km, r.reliable_km, r.unreliable_km, r.percent_km, r.boardings, r.alightings, r.max_load, r.vehicle_ids, r.driver_ids, r.device_ids,
      ];
    });
  }
}

/**
 * The stop rows of the tracking exports, millions a month, come as COPY text (db.copyOut), the
 * cheapest way out of PostgreSQL: columns are split on TAB and written to the CSV as they come
 * where their text is already the CSV's (integers), unescaped and quoted only where needed
 * (texts), converted where they must be (instants as epoch seconds, formatted in the group's
 * time zone; coordinates; door arrays). Rows are ordered by date, trip and stop, so per-trip
 * values are worked out once per trip; records are written as text, a chunk of lines at a time.
 */
/** COPY text's NULL. */
const NULL = '\\N';
/** A text column as its CSV cell. */
const textCell = (v: string) => (v === NULL ? '' : csvText(uncopyText(v)));
/** An integer column as its CSV cell: COPY writes integers as JavaScript does. */
const intCell = (v: string) => (v === NULL ? '' : v);
const numberOf = (v: string) => (v === NULL ? null : Number(v));
/** The columns of a COPY line, by position. */
type Columns<N extends number, T extends string[] = []> = T['length'] extends N ? T : Columns<N, [...T, string]>;
/** The date of a service_date column written as days since 1970-01-01. */
const dateOf = (days: string) => new Date(Number(days) * 86_400_000).toISOString().slice(0, 10);
/** The sum of an integer array column ({1,0,3}), NULL elements counting as 0, read without splitting it. */
function arraySum(v: string): number {
  let t = 0;
  let n = 0;
  let sign = 1;
  for (let i = 1; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c >= 48 && c <= 57) n = n * 10 + c - 48;
    else if (c === 45) sign = -1;
    else if (c === 44 || c === 125) {
      t += sign * n;
      n = 0;
      sign = 1;
    }
  }
  return t;
}

/** The door cells of PCS-CNT (validity, in, out for each door) from the two integer array columns. */
function doorCells(doorsIn: string, doorsOut: string, doors: number): string {
  let cells = '';
  // Positions of the next item in each array text, past `{`; an empty array (`{}`) has none.
  let i = doorsIn.length > 2 ? 1 : doorsIn.length;
  let o = doorsOut.length > 2 ? 1 : doorsOut.length;
  for (let d = 0; d < doors; d++) {
    if (i >= doorsIn.length) {
      cells += ';0;0;0';
      continue;
    }
    const inEnd = itemEnd(doorsIn, i);
    const outEnd = o < doorsOut.length ? itemEnd(doorsOut, o) : o;
    cells += `;1;${item(doorsIn, i, inEnd)};${o < doorsOut.length ? item(doorsOut, o, outEnd) : ''}`;
    i = inEnd + 1;
    o = outEnd + 1;
  }
  return cells;
}

const itemEnd = (v: string, from: number) => {
  const comma = v.indexOf(',', from);
  return comma < 0 ? v.length - 1 : comma;
};
const item = (v: string, from: number, end: number) => {
  const x = v.slice(from, end);
  return x === 'NULL' ? '' : x;
};

/**
 * The CSV text of a COPY text stream, a piece per chunk (chunks hold whole lines): `line` turns
 * one row's columns (split on TAB, still COPY-escaped) into its CSV line.
 */
async function* csvOfCopy(chunks: AsyncIterable<string>, line: (columns: string[]) => string): AsyncIterable<string> {
  for await (const chunk of chunks) {
    let text = '';
    for (let at = 0, end = chunk.indexOf('\n'); end >= 0; at = end + 1, end = chunk.indexOf('\n', at)) text += line(chunk.slice(at, end).split('\t'));
    yield text;
  }
}

/** Columns of export/trip-tracking, in order. */
export const TRIP_TRACKING_COLUMNS = [
  'service_date', 'trip_id', 'route_id', 'start_time', 'stop_sequence', 'stop_id', 'stop_name', 'scheduled_arrival', 'scheduled_departure', 'actual_time',
  'delay_seconds', 'source', 'status', 'vehicle_id', 'driver_id', 'boardings', 'alightings',
] as const;

/** export/trip-tracking: one line per recorded trip and scheduled stop over the period. */
export async function* exportTripTracking(db: Db, scope: Pick<GroupScope, 'groupId' | 'teams'>, p: Period, timezone: string, now: Date): AsyncIterable<string> {
  await refreshDirty(db, { groupId: scope.groupId, from: p.start, to: p.end });
  const iso = isoWithOffset(timezone);
  const time = (v: string) => (v === NULL ? '' : iso(Number(v) * 1000));
  const overlayOf = await overlaysOfPeriod(db, scope.groupId, p.start, p.end);
  // The values of the current trip (rows come trip by trip), the first cells written once.
  let days = '';
  let trip = '';
  let overlay = emptyOverlay();
  let over = false;
  let lastPassed: number | null = null;
  let tripCells = '';
  yield* csvOfCopy(copyTrackingStops(db, scope.groupId, p.start, p.end, teamParam(scope)), (row) => {
    const c = row as Columns<20>;
    const tripId = c[1];
    const actual = c[13];
    if (tripId !== trip || c[0] !== days) {
      trip = tripId;
      days = c[0];
      const serviceDate = dateOf(days);
      const id = uncopyText(trip);
      const startTime = numberOf(c[3]);
      overlay = overlayOf({ service_date: serviceDate, trip_id: id, start_time: startTime });
      lastPassed = numberOf(c[6]);
      over = tripOver({ end_reported: c[4] === 't', scheduled_end_at: c[5] === NULL ? null : new Date(Number(c[5]) * 1000), last_passed_sequence: lastPassed,
        last_sequence: numberOf(c[7]), planned_stops: 0 }, now);
      tripCells = `${serviceDate};${csvText(id)};${textCell(c[2])};${startTime === null ? '' : csvText(formatGtfsTime(startTime))};`;
    }
    // As trackingOf derives a stop's status: passed, else skipped by an update, else missed once passed over or the trip is over.
    let status = 'passed';
    if (actual === NULL) {
      const n = Number(c[8]);
      status = overlay.skipped.has(n) ? 'skipped' : (lastPassed !== null && n < lastPassed) || over ? 'missed' : overlay.cancelled ? 'cancelled' : 'pending';
    }
    // stop_sequence … alightings
    return `${tripCells}${c[8]};${textCell(c[9])};${textCell(c[10])};${time(c[11])};${time(c[12])};${time(actual)};${intCell(c[14])};${textCell(c[15])};${status};` +
      `${textCell(c[16])};${textCell(c[17])};${arraySum(c[18])};${arraySum(c[19])}\r\n`;
  });
}

/** The PCS-CNT columns before the door columns (spec: Resources, Vehicle exploitation row). */
export const PCS_CNT_COLUMNS = [
  'fileId', 'unitId', 'drivingMode', 'stopId', 'arrivalTime', 'departureTime', 'SAEvalidity', 'journey', 'journeyType', 'line', 'trip', 'tripDirection',
  'vehicleService', 'stationOrigin', 'stationDestination', 'station', 'stationCode', 'stationIndex', 'stationType', 'GPSvalidity', 'latitude', 'longitude',
] as const;

const two = (n: number) => String(n).padStart(2, '0');
export const doorColumns = (doors: number) => Array.from({ length: doors }, (_, i) => [`PORTE_${two(i + 1)}_validity`, `PORTE_${two(i + 1)}_adults_in`, `PORTE_${two(i + 1)}_adults_out`]).flat();

/** The number of door columns of the period: the most doors counted on one trip, at least one. */
export async function doorsOfPeriod(db: Db, groupId: string, p: Period): Promise<number> {
  await refreshDirty(db, { groupId, from: p.start, to: p.end });
  return Math.max(1, (await selectMaxDoors(db, groupId, p.start, p.end)) ?? 0);
}

/**
 * A float column with a decimal comma. PostgreSQL and JavaScript write a number's digits alike
 * (both from the text PostgreSQL sent); they differ in exponent form and -0, taken through Number
 * as JavaScript writes them (and NaN, Infinity: empty cells).
 */
function decimalCommaCell(v: string): string {
  if (v === NULL) return '';
  const last = v.charCodeAt(v.length - 1);
  return last >= 48 && last <= 57 && v.indexOf('e') < 0 && v !== '-0' ? v.replace('.', ',') : csvDecimalComma(Number(v));
}

/**
 * export/vehicle-exploitation: one PCS-CNT line per recorded trip and scheduled stop over the
 * period (see the OpenAPI description for the meaning of each column).
 */
export async function* exportVehicleExploitation(db: Db, scope: Pick<GroupScope, 'groupId' | 'teams'>, p: Period, timezone: string, doors: number): AsyncIterable<string> {
  const iso = isoWithOffset(timezone);
  // The values of the current trip (rows come trip by trip).
  let days = '';
  let trip = '';
  let day = '';
  let tripCells = '';
  yield* csvOfCopy(copyExploitationStops(db, scope.groupId, p.start, p.end, teamParam(scope)), (row) => {
    const c = row as Columns<18>;
    const tripId = c[1];
    if (tripId !== trip || c[0] !== days) {
      trip = tripId;
      days = c[0];
      day = dateOf(days).replaceAll('-', '');
      const id = uncopyText(trip);
      // journey … vehicleService, stationOrigin, stationDestination
      tripCells = `${csvText(`${day}_${id}`)};commercial;${textCell(c[2])};${csvText(id)};${intCell(c[3])};${textCell(c[4])};${textCell(c[5])};${textCell(c[6])};`;
    }
    const vehicle = c[8] === NULL ? null : uncopyText(c[8]);
    const actual = c[12];
    const passed = actual === NULL ? '' : iso(Number(actual) * 1000);
    const stopId = c[10];
    const stop = textCell(stopId);
    const stationType = c[9] === c[7] ? 'last' : stopId === c[5] ? 'first' : 'intermediate';
    return `${csvText(`${vehicle ?? ''}_${day}`)};${csvText(vehicle)};commercial;${stop};${passed};${passed};${actual === NULL ? 0 : 1};${tripCells}` +
      `${textCell(c[11])};${stop};${c[9]};${stationType};${c[15] === 't' ? 1 : 0};${decimalCommaCell(c[13])};${decimalCommaCell(c[14])}${doorCells(c[16], c[17], doors)}\r\n`;
  });
}
