/**
 * The CSV exports of the actual side, streamed from server-side cursors over the stored tracking
 * (memory holds one batch whatever the period): export/trips (datahub), export/trip-tracking and
 * export/vehicle-exploitation (PCS-CNT layout). Statuses are derived per row as trackingOf does:
 * the trip updates in force are read for the period before the stream starts.
 */
import type { Db } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { csvRows, DecimalComma, type CsvValue } from '../../platform/csv.js';
import { teamParam } from '../../platform/http/teams.js';
import { addDays, isoWithOffset, type Period } from '../../platform/time.js';
import { formatGtfsTime } from '../gtfs/time.js';
import { emptyOverlay, type TripOverlay } from '../updates/overlay.js';
import { overlayKey, overlaysFor } from '../updates/service.js';
import { refreshDirty, tripOver, tripStatus, type Kilometres } from './tracking.js';

// Rows per FETCH: the next batch is fetched while one is written, and smaller batches wait less, so
// fewer rows outlive a young-generation collection (less old-space garbage, a lower RSS peak).
const BATCH = 2000;

/** SQL: the trip tracking row aliased `tt` is visible to the teams in $n (null = all). */
export const tripVisibleSql = (n: number) => `($${n}::text[] IS NULL
  OR EXISTS (SELECT 1 FROM vehicles ve WHERE ve.group_id = tt.group_id AND ve.vehicle_id = ANY(tt.vehicle_ids) AND ve.teams && $${n}::text[])
  OR EXISTS (SELECT 1 FROM drivers dr WHERE dr.group_id = tt.group_id AND dr.driver_id = ANY(tt.driver_ids) AND dr.teams && $${n}::text[]))`;

/**
 * The overlays of the recorded trips of a period, read before streaming (a query inside the
 * stream would wait for the cursor's connection on PGlite). Only non-empty overlays are kept.
 */
async function overlaysOfPeriod(db: Db, groupId: string, start: string, end: string) {
  const known = new Map<string, TripOverlay>();
  for (let date = start; date <= end; date = addDays(date, 1)) {
    const trips = await db.query<{ trip_id: string; route_id: string | null; start_time: number | null }>(
      'SELECT trip_id, route_id, start_time FROM trip_tracking WHERE group_id = $1 AND service_date = $2', [groupId, date]);
    const keys = trips.map((t) => ({ trip_id: t.trip_id, route_id: t.route_id ?? '', start_time: t.start_time === null ? null : formatGtfsTime(t.start_time) }));
    for (const [key, o] of await overlaysFor(db, groupId, date, keys)) if (o.applied.length > 0) known.set(`${date} ${key}`, o);
  }
  return (t: { service_date: string; trip_id: string; start_time: number | null }): TripOverlay =>
    known.get(`${t.service_date} ${overlayKey({ trip_id: t.trip_id, start_time: t.start_time === null ? null : formatGtfsTime(t.start_time) })}`) ?? emptyOverlay();
}

interface TripRow extends Kilometres {
  service_date: string;
  trip_id: string;
  route_id: string | null;
  direction_id: number | null;
  block_id: string | null;
  headsign: string | null;
  start_time: number | null;
  scheduled_start_at: Date | null;
  scheduled_end_at: Date | null;
  started_at: Date;
  ended_at: Date;
  end_reported: boolean;
  delay_seconds: number | null;
  planned_stops: number;
  recorded_stops: number;
  unpassed_stops: number[];
  last_passed_sequence: number | null;
  last_sequence: number | null;
  boardings: number;
  alightings: number;
  max_load: number;
  vehicle_ids: string[];
  driver_ids: string[];
  device_ids: string[];
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
  const text = `SELECT to_char(tt.service_date, 'YYYY-MM-DD') AS service_date, tt.trip_id, tt.route_id, tt.direction_id, tt.block_id, tt.headsign, tt.start_time,
      tt.scheduled_start_at, tt.scheduled_end_at, tt.started_at, tt.ended_at, tt.end_reported, tt.delay_seconds, tt.planned_stops, tt.recorded_stops,
      tt.unpassed_stops, tt.last_passed_sequence, tt.last_sequence, tt.tk, tt.vk, tt.recorded_commercial_km, tt.off_itinerary_km, tt.reliable_km, tt.unreliable_km,
      tt.percent_km, tt.boardings, tt.alightings, tt.max_load, tt.vehicle_ids, tt.driver_ids, tt.device_ids
    FROM trip_tracking tt WHERE tt.group_id = $1 AND tt.service_date = $2 AND ${tripVisibleSql(3)} ORDER BY tt.trip_id`;
  for await (const batch of db.stream<TripRow>(text, [scope.groupId, serviceDate, teamParam(scope)], BATCH)) {
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
 * The stop rows of the tracking exports, millions a month: each row comes as one JSON array
 * (json_build_array) naming only the columns its export writes, parsed by JSON.parse; a column
 * each would cost Node about three times as much to decode (pg's per-field parsing). Instants
 * come as epoch milliseconds, arrays as arrays. Rows are ordered by date, trip and stop, so
 * per-trip values are worked out once per trip.
 */
const epochMs = (column: string) => `date_part('epoch', ${column}) * 1000`;

function stopExportQuery(columns: string, scopeTeams: number) {
  return `SELECT json_build_array(s.service_date, s.trip_id, ${columns})::text AS row
    FROM trip_tracking tt
    JOIN trip_tracking_stops s ON s.group_id = tt.group_id AND s.service_date = tt.service_date AND s.trip_id = tt.trip_id
    WHERE tt.group_id = $1 AND tt.service_date BETWEEN $2 AND $3 AND s.service_date BETWEEN $2 AND $3 AND ${tripVisibleSql(scopeTeams)}
    ORDER BY s.service_date, s.trip_id, s.stop_sequence`;
}

type TrackingStop = [
  service_date: string, trip_id: string, route_id: string | null, start_time: number | null, end_reported: boolean, scheduled_end_at: number | null,
  last_passed_sequence: number | null, last_sequence: number | null, stop_sequence: number, stop_id: string, stop_name: string | null,
  scheduled_arrival_at: number | null, scheduled_departure_at: number | null, actual_at: number | null, delay_seconds: number | null, source: string | null,
  vehicle_id: string | null, driver_id: string | null, doors_in: number[], doors_out: number[],
];

const TRACKING_STOP_COLUMNS = `tt.route_id, tt.start_time, tt.end_reported, ${epochMs('tt.scheduled_end_at')}, tt.last_passed_sequence, tt.last_sequence,
  s.stop_sequence, s.stop_id, s.stop_name, ${epochMs('s.scheduled_arrival_at')}, ${epochMs('s.scheduled_departure_at')}, ${epochMs('s.actual_at')},
  s.delay_seconds, s.source, s.vehicle_id, s.driver_id, s.doors_in, s.doors_out`;

/** Columns of export/trip-tracking, in order. */
export const TRIP_TRACKING_COLUMNS = [
  'service_date', 'trip_id', 'route_id', 'start_time', 'stop_sequence', 'stop_id', 'stop_name', 'scheduled_arrival', 'scheduled_departure', 'actual_time',
  'delay_seconds', 'source', 'status', 'vehicle_id', 'driver_id', 'boardings', 'alightings',
] as const;

const sum = (xs: readonly number[]) => {
  let t = 0;
  for (const x of xs) t += x;
  return t;
};

/** export/trip-tracking: one line per recorded trip and scheduled stop over the period. */
export async function* exportTripTracking(db: Db, scope: Pick<GroupScope, 'groupId' | 'teams'>, p: Period, timezone: string, now: Date): AsyncIterable<Iterable<CsvValue[]>> {
  await refreshDirty(db, { groupId: scope.groupId, from: p.start, to: p.end });
  const iso = isoWithOffset(timezone);
  const time = (ms: number | null) => (ms === null ? null : iso(ms));
  const overlayOf = await overlaysOfPeriod(db, scope.groupId, p.start, p.end);
  // The values of the current trip (rows come trip by trip).
  let trip = '';
  let date = '';
  let overlay = emptyOverlay();
  let over = false;
  let startTime: string | null = null;
  for await (const batch of db.stream<{ row: string }>(stopExportQuery(TRACKING_STOP_COLUMNS, 4), [scope.groupId, p.start, p.end, teamParam(scope)], BATCH)) {
    yield csvRows(batch, ({ row }): CsvValue[] => {
      const [serviceDate, tripId, routeId, start, endReported, scheduledEnd, lastPassed, lastSequence, sequence, stopId, stopName, arrival, departure, actual, delay, source,
        vehicleId, driverId, doorsIn, doorsOut] = JSON.parse(row) as TrackingStop;
      if (tripId !== trip || serviceDate !== date) {
        trip = tripId;
        date = serviceDate;
        overlay = overlayOf({ service_date: serviceDate, trip_id: tripId, start_time: start });
        const scheduledEndAt = scheduledEnd === null ? null : new Date(scheduledEnd);
        over = tripOver({ end_reported: endReported, scheduled_end_at: scheduledEndAt, last_passed_sequence: lastPassed, last_sequence: lastSequence, planned_stops: 0 }, now);
        startTime = start === null ? null : formatGtfsTime(start);
      }
      // As trackingOf derives a stop's status: passed, else skipped by an update, else missed once passed over or the trip is over.
      const status = actual !== null ? 'passed'
        : overlay.skipped.has(sequence) ? 'skipped'
        : (lastPassed !== null && sequence < lastPassed) || over ? 'missed'
        : overlay.cancelled ? 'cancelled' : 'pending';
      return [
        serviceDate, tripId, routeId, startTime, sequence, stopId, stopName, time(arrival), time(departure), time(actual), delay, source, status, vehicleId, driverId,
        sum(doorsIn), sum(doorsOut),
      ];
    });
  }
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
  const [r] = await db.query<{ doors: number | null }>('SELECT max(doors) AS doors FROM trip_tracking WHERE group_id = $1 AND service_date BETWEEN $2 AND $3', [groupId, p.start, p.end]);
  return Math.max(1, r?.doors ?? 0);
}

type ExploitationStop = [
  service_date: string, trip_id: string, route_id: string | null, direction_id: number | null, block_id: string | null, first_stop_id: string | null,
  last_stop_id: string | null, last_sequence: number | null, vehicle: string | null, stop_sequence: number, stop_id: string, stop_name: string | null,
  actual_at: number | null, lat: number | null, lon: number | null, gps_valid: boolean | null, doors_in: number[], doors_out: number[],
];

// The vehicle of a stop is the one that passed it, else the trip's first; the position is the one recorded, else the stop's.
const EXPLOITATION_STOP_COLUMNS = `tt.route_id, tt.direction_id, tt.block_id, tt.first_stop_id, tt.last_stop_id, tt.last_sequence,
  COALESCE(s.vehicle_id, tt.vehicle_ids[1]), s.stop_sequence, s.stop_id, s.stop_name, ${epochMs('s.actual_at')},
  COALESCE(s.lat, s.stop_lat), COALESCE(s.lon, s.stop_lon), s.gps_valid, s.doors_in, s.doors_out`;

/**
 * export/vehicle-exploitation: one PCS-CNT line per recorded trip and scheduled stop over the
 * period (see the OpenAPI description for the meaning of each column).
 */
export async function* exportVehicleExploitation(db: Db, scope: Pick<GroupScope, 'groupId' | 'teams'>, p: Period, timezone: string, doors: number): AsyncIterable<Iterable<CsvValue[]>> {
  const iso = isoWithOffset(timezone);
  // The values of the current trip (rows come trip by trip).
  let trip = '';
  let date = '';
  let day = '';
  let journey = '';
  for await (const batch of db.stream<{ row: string }>(stopExportQuery(EXPLOITATION_STOP_COLUMNS, 4), [scope.groupId, p.start, p.end, teamParam(scope)], BATCH)) {
    yield csvRows(batch, ({ row }): CsvValue[] => {
      const [serviceDate, tripId, routeId, directionId, blockId, firstStopId, lastStopId, lastSequence, vehicle, sequence, stopId, stopName, actual, lat, lon, gpsValid,
        doorsIn, doorsOut] = JSON.parse(row) as ExploitationStop;
      if (tripId !== trip || serviceDate !== date) {
        trip = tripId;
        date = serviceDate;
        day = serviceDate.replaceAll('-', '');
        journey = `${day}_${tripId}`;
      }
      const passed = actual === null ? null : iso(actual);
      const cells: CsvValue[] = [
        `${vehicle ?? ''}_${day}`, vehicle, 'commercial', stopId, passed, passed, actual === null ? 0 : 1, journey, 'commercial', routeId, tripId, directionId, blockId,
        firstStopId, lastStopId, stopName, stopId, sequence, sequence === lastSequence ? 'last' : stopId === firstStopId ? 'first' : 'intermediate',
        gpsValid ? 1 : 0, lat === null ? null : new DecimalComma(lat), lon === null ? null : new DecimalComma(lon),
      ];
      for (let d = 0; d < doors; d++) {
        const counted = d < doorsIn.length;
        cells.push(counted ? 1 : 0, counted ? doorsIn[d]! : 0, counted ? doorsOut[d]! : 0);
      }
      return cells;
    });
  }
}
