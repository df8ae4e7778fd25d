import type { Migration } from '../migrate.js';

/**
 * Trip tracking (issue #7): what happened to each trip on each service date, computed from the
 * trip events and positions the devices report, stored, and kept current as reports arrive.
 *
 * - trip_tracking_stops: one row per scheduled stop of a recorded trip (group, date, trip,
 *   stop_sequence), with the scheduled time, the time the vehicle passed (from a trip event, or
 *   from a position matched to the stop), the delay, and the per-door passenger counts.
 * - trip_tracking: one row per recorded trip and date, the summary (kilometres, delay, stops,
 *   vehicles, drivers, devices).
 * - trip_tracking_dirty: the queue of trips to recompute. Device ingest marks a trip there in its
 *   own transaction; the trip is recomputed right after commit, by the worker loop, or by the
 *   first read that covers it, whichever comes first, so no read ever sees a stale trip.
 *
 * Statuses that depend on the clock or on trip updates (missed or skipped, scheduled or not
 * done, cancelled) are derived at read time: stored rows hold facts only.
 */
export const m0006: Migration = {
  version: 6,
  name: 'trip tracking',
  sql: `
CREATE TABLE trip_tracking (
  group_id text NOT NULL,
  service_date date NOT NULL,
  trip_id text NOT NULL,
  route_id text,
  direction_id smallint,
  block_id text,
  headsign text,
  start_time integer,
  gtfs_id text,
  first_stop_id text,
  last_stop_id text,
  last_sequence integer,
  scheduled_start_at timestamptz,
  scheduled_end_at timestamptz,
  started_at timestamptz,
  ended_at timestamptz,
  end_reported boolean NOT NULL,
  last_report_at timestamptz,
  delay_seconds integer,
  delay_stop_sequence integer,
  planned_stops integer NOT NULL,
  recorded_stops integer NOT NULL,
  unpassed_stops integer[] NOT NULL,
  last_passed_sequence integer,
  tk double precision,
  vk double precision NOT NULL,
  recorded_commercial_km double precision NOT NULL,
  off_itinerary_km double precision NOT NULL,
  reliable_km double precision NOT NULL,
  unreliable_km double precision NOT NULL,
  percent_km double precision,
  positions integer NOT NULL,
  invalid_positions integer NOT NULL,
  boardings integer NOT NULL,
  alightings integer NOT NULL,
  max_load integer NOT NULL,
  doors integer NOT NULL,
  device_ids text[] NOT NULL,
  vehicle_ids text[] NOT NULL,
  driver_ids text[] NOT NULL,
  computed_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, service_date, trip_id)
);

CREATE TABLE trip_tracking_stops (
  group_id text NOT NULL,
  service_date date NOT NULL,
  trip_id text NOT NULL,
  stop_sequence integer NOT NULL,
  stop_id text NOT NULL,
  stop_name text,
  stop_lat double precision,
  stop_lon double precision,
  scheduled_arrival_at timestamptz,
  scheduled_departure_at timestamptz,
  actual_at timestamptz,
  source text CHECK (source IN ('event', 'position')),
  delay_seconds integer,
  lat double precision,
  lon double precision,
  gps_valid boolean,
  device_id text,
  vehicle_id text,
  driver_id text,
  doors_in integer[] NOT NULL,
  doors_out integer[] NOT NULL,
  PRIMARY KEY (group_id, service_date, trip_id, stop_sequence)
);

CREATE TABLE trip_tracking_dirty (
  group_id text NOT NULL,
  service_date date NOT NULL,
  trip_id text NOT NULL,
  marked_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, service_date, trip_id)
);
CREATE INDEX trip_tracking_dirty_marked ON trip_tracking_dirty (marked_at);
`,
};
