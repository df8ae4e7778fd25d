/**
 * The reports devices send, as they send them (device/ingest.ts): trip runs, trip events,
 * positions, passenger counts and vehicle movements, each kind keyed by the device's client id,
 * and the device's latest state.
 */
import type { Queryable } from '../../../platform/db/index.js';
import { objectId } from '../../../platform/ids.js';
import { gtfsSeconds } from '../../gtfs/time.js';
import type { PassengerCount, Position, TripEnd, TripEvent, TripStart, VehicleMovement } from '../schemas.js';

/** Seconds since the start of the service day, from HH:MM:SS (may pass 24:00:00). */
const secondsOf = (hms: string | undefined): number | null => (hms === undefined ? null : gtfsSeconds(hms));
const iso = (d: Date) => d.toISOString();

export interface ReportItems {
  runs: { type: string; at: Date; item: TripStart | TripEnd }[];
  events: { item: TripEvent }[];
  positions: { item: Position }[];
  counts: { item: PassengerCount }[];
  movements: { item: VehicleMovement }[];
}

const LATEST_POSITION = ['position_at', 'lat', 'lon', 'gps_valid', 'speed_kmh', 'bearing', 'trip_id', 'service_date', 'start_time'] as const;
const NEWER_POSITION = 'EXCLUDED.position_at IS NOT NULL AND (l.position_at IS NULL OR l.position_at < EXCLUDED.position_at)';

/**
 * Every report of a batch but sign events and device states, in ONE statement (one round trip,
 * atomic without a transaction around it): each kind is inserted with ON CONFLICT DO NOTHING on its
 * client id (a retried item is not stored twice); the positions actually inserted then move the
 * device's latest state (only forward in event time; last_seen_at always), and the trips of the
 * reports actually inserted are marked for recomputation (`markTrips`).
 * Returns the client ids stored now.
 */
/**
 * The tracking's statement that marks trips for recomputation, given a query of their
 * (service_date, trip_id): trips/queries/tracking.ts writes it (the tracking owns its queue), and
 * ingest passes it on from the app's services, so device does not import trips.
 */
export type MarkTrips = (source: string) => string;

const insertReportsSql = (markTrips: MarkTrips) => `WITH
tr AS (
  INSERT INTO trip_runs (group_id, device_id, client_id, kind, at, trip_id, service_date, start_time, block_id, received_at)
  SELECT $1, $2, u.*, $3 FROM json_to_recordset($4::json)
    AS u(client_id uuid, kind text, at timestamptz, trip_id text, service_date date, start_time int, block_id text)
  ON CONFLICT DO NOTHING RETURNING client_id, at, service_date, trip_id),
te AS (
  INSERT INTO trip_events (group_id, device_id, client_id, at, event, trip_id, service_date, start_time, stop_id, stop_sequence, lat, lon, gps_valid, odometer_km, state, received_at)
  SELECT $1, $2, u.*, $3 FROM json_to_recordset($5::json)
    AS u(client_id uuid, at timestamptz, event text, trip_id text, service_date date, start_time int, stop_id text, stop_sequence int, lat float8, lon float8,
         gps_valid bool, odometer_km float8, state text)
  ON CONFLICT DO NOTHING RETURNING client_id, at, service_date, trip_id),
po AS (
  INSERT INTO positions (group_id, device_id, client_id, at, lat, lon, gps_valid, speed_kmh, bearing, accuracy_m, odometer_km, trip_id, service_date, start_time, received_at)
  SELECT $1, $2, u.*, $3 FROM json_to_recordset($6::json)
    AS u(client_id uuid, at timestamptz, lat float8, lon float8, gps_valid bool, speed_kmh real, bearing real, accuracy_m real, odometer_km float8, trip_id text,
         service_date date, start_time int)
  ON CONFLICT DO NOTHING RETURNING client_id, at, lat, lon, gps_valid, speed_kmh, bearing, trip_id, service_date, start_time),
pc AS (
  INSERT INTO passenger_counts (group_id, device_id, client_id, category, at, trip_id, service_date, start_time, stop_id, stop_sequence, door, boardings, alightings, received_at)
  SELECT $1, $2, u.*, $3 FROM json_to_recordset($7::json)
    AS u(client_id uuid, category text, at timestamptz, trip_id text, service_date date, start_time int, stop_id text, stop_sequence int, door int, boardings int, alightings int)
  ON CONFLICT DO NOTHING RETURNING client_id, at, service_date, trip_id),
vm AS (
  INSERT INTO vehicle_movements (group_id, vehicle_movement_id, device_id, client_id, block_id, service_date, kind, origin, destination, started_at, ended_at, distance_km, received_at)
  SELECT $1, u.movement_id, $2, u.client_id, u.block_id, u.service_date, u.kind, u.origin, u.destination, u.started_at, u.ended_at, u.distance_km, $3
  FROM json_to_recordset($8::json)
    AS u(movement_id text, client_id uuid, block_id text, service_date date, kind text, origin jsonb, destination jsonb, started_at timestamptz, ended_at timestamptz, distance_km float8)
  ON CONFLICT DO NOTHING RETURNING client_id),
latest AS (
  INSERT INTO device_latest AS l (group_id, device_id, last_seen_at, ${LATEST_POSITION.join(', ')})
  SELECT $1, $2, $3, p.at, p.lat, p.lon, p.gps_valid, p.speed_kmh, p.bearing, p.trip_id, p.service_date, p.start_time
  FROM (SELECT 1) AS one LEFT JOIN (SELECT * FROM po ORDER BY at DESC LIMIT 1) AS p ON true
  ON CONFLICT (group_id, device_id) DO UPDATE SET last_seen_at = GREATEST(l.last_seen_at, EXCLUDED.last_seen_at),
  ${LATEST_POSITION.map((c) => `${c} = CASE WHEN ${NEWER_POSITION} THEN EXCLUDED.${c} ELSE l.${c} END`).join(', ')}),
marked AS (
  ${markTrips('SELECT service_date, trip_id, at FROM tr UNION ALL SELECT service_date, trip_id, at FROM te UNION ALL SELECT service_date, trip_id, at FROM po UNION ALL SELECT service_date, trip_id, at FROM pc')})
SELECT client_id FROM tr UNION ALL SELECT client_id FROM te UNION ALL SELECT client_id FROM po
UNION ALL SELECT DISTINCT client_id FROM pc UNION ALL SELECT client_id FROM vm`;

export async function insertReports(q: Queryable, markTrips: MarkTrips, g: string, d: string, r: ReportItems, receivedAt: Date): Promise<string[]> {
  // Each kind travels as one JSON array (json_to_recordset): PostgreSQL parses it in C, where
  // dozens of typed arrays cost the driver's escaping of every element.
  const json = (rows: object[]) => JSON.stringify(rows);
  const rows = await q.query<{ client_id: string }>(insertReportsSql(markTrips), [
    g, d, receivedAt,
    json(r.runs.map(({ type, at, item }) => ({
      client_id: item.id, kind: type === 'trip_start' ? 'start' : 'end', at: iso(at), trip_id: item.trip_id, service_date: item.service_date,
      start_time: secondsOf(item.start_time), block_id: (item as TripStart).block_id,
    }))),
    json(r.events.map(({ item: x }) => ({
      client_id: x.id, at: x.at, event: x.event, trip_id: x.trip_id, service_date: x.service_date, start_time: secondsOf(x.start_time), stop_id: x.stop_id,
      stop_sequence: x.stop_sequence, lat: x.lat, lon: x.lon, gps_valid: x.gps_valid, odometer_km: x.odometer_km, state: x.state,
    }))),
    json(r.positions.map(({ item: x }) => ({
      client_id: x.id, at: x.at, lat: x.lat, lon: x.lon, gps_valid: x.gps_valid, speed_kmh: x.speed_kmh, bearing: x.bearing, accuracy_m: x.accuracy_m,
      odometer_km: x.odometer_km, trip_id: x.trip_id, service_date: x.service_date, start_time: secondsOf(x.start_time),
    }))),
    // one row per passenger category
    json(r.counts.flatMap(({ item: x }) => x.counts.map((k) => ({
      client_id: x.id, category: k.category, at: x.at, trip_id: x.trip_id, service_date: x.service_date, start_time: secondsOf(x.start_time), stop_id: x.stop_id,
      stop_sequence: x.stop_sequence, door: x.door, boardings: k.boardings, alightings: k.alightings,
    })))),
    json(r.movements.map(({ item: x }) => ({
      movement_id: objectId(Date.parse(x.started_at)), client_id: x.id, block_id: x.block_id, service_date: x.service_date, kind: x.kind, origin: x.origin,
      destination: x.destination, started_at: x.started_at, ended_at: x.ended_at, distance_km: x.distance_km,
    }))),
  ]);
  return rows.map((x) => x.client_id);
}
