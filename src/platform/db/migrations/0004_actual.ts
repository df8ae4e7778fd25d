import type { Migration } from '../migrate.js';

/**
 * The actual side, as devices report it (spec: What the service does 3–5). Every reported item
 * carries a client-generated UUID: each table's key includes (group_id, device_id, client_id), so
 * a retried item is acknowledged and never stored twice, permanently.
 *
 * Duties are derived from the sign-on and sign-off events of each device (in event time), so
 * late and reordered reports give the same duties as ordered ones. Vehicles and drivers of a
 * report are read from the duty open on its device at its time, not copied into each row.
 */
export const m0004: Migration = {
  version: 4,
  name: 'actual side',
  sql: `
CREATE TABLE device_sign_events (
  group_id text NOT NULL,
  device_id text NOT NULL,
  client_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('sign_on', 'sign_off')),
  at timestamptz NOT NULL,
  duty_id text,
  driver_id text,
  vehicle_id text,
  odometer_km double precision,
  non_commercial_km double precision,
  info jsonb NOT NULL DEFAULT '{}',
  received_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, device_id, client_id),
  CHECK ((kind = 'sign_on') = (duty_id IS NOT NULL AND driver_id IS NOT NULL AND vehicle_id IS NOT NULL))
);
CREATE INDEX device_sign_events_time ON device_sign_events (group_id, device_id, at);

CREATE TABLE duties (
  group_id text NOT NULL,
  duty_id text NOT NULL,
  device_id text NOT NULL,
  driver_id text NOT NULL,
  vehicle_id text NOT NULL,
  signed_on_at timestamptz NOT NULL,
  signed_off_at timestamptz,
  end_reason text CHECK (end_reason IN ('sign_off', 'next_sign_on')),
  sign_on jsonb NOT NULL,
  sign_off jsonb,
  non_commercial_km double precision,
  PRIMARY KEY (group_id, duty_id)
);
CREATE INDEX duties_device ON duties (group_id, device_id, signed_on_at);
CREATE INDEX duties_vehicle ON duties (group_id, vehicle_id, signed_on_at);
CREATE INDEX duties_driver ON duties (group_id, driver_id, signed_on_at);
CREATE INDEX duties_time ON duties (group_id, signed_on_at);

CREATE TABLE trip_runs (
  group_id text NOT NULL,
  device_id text NOT NULL,
  client_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('start', 'end')),
  at timestamptz NOT NULL,
  trip_id text NOT NULL,
  service_date date NOT NULL,
  start_time integer,
  block_id text,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, device_id, client_id)
);
CREATE INDEX trip_runs_device ON trip_runs (group_id, device_id, at);
CREATE INDEX trip_runs_trip ON trip_runs (group_id, service_date, trip_id);

CREATE TABLE trip_events (
  group_id text NOT NULL,
  device_id text NOT NULL,
  client_id uuid NOT NULL,
  at timestamptz NOT NULL,
  event text NOT NULL CHECK (event IN ('stop_passed', 'departure', 'arrival', 'state_change')),
  trip_id text NOT NULL,
  service_date date NOT NULL,
  start_time integer,
  stop_id text,
  stop_sequence integer,
  lat double precision,
  lon double precision,
  gps_valid boolean NOT NULL DEFAULT false,
  odometer_km double precision,
  state text,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, device_id, client_id)
);
CREATE INDEX trip_events_trip ON trip_events (group_id, service_date, trip_id, at);
CREATE INDEX trip_events_time ON trip_events (group_id, at, device_id, client_id);

CREATE TABLE positions (
  group_id text NOT NULL,
  device_id text NOT NULL,
  client_id uuid NOT NULL,
  at timestamptz NOT NULL,
  lat double precision NOT NULL,
  lon double precision NOT NULL,
  gps_valid boolean NOT NULL,
  speed_kmh real,
  bearing real,
  accuracy_m real,
  odometer_km double precision,
  trip_id text,
  service_date date,
  start_time integer,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, device_id, client_id)
);
CREATE INDEX positions_device ON positions (group_id, device_id, at);
CREATE INDEX positions_trip ON positions (group_id, service_date, trip_id, at) WHERE trip_id IS NOT NULL;

CREATE TABLE passenger_counts (
  group_id text NOT NULL,
  device_id text NOT NULL,
  client_id uuid NOT NULL,
  category text NOT NULL,
  at timestamptz NOT NULL,
  trip_id text NOT NULL,
  service_date date NOT NULL,
  start_time integer,
  stop_id text NOT NULL,
  stop_sequence integer,
  door smallint NOT NULL,
  boardings integer NOT NULL CHECK (boardings >= 0),
  alightings integer NOT NULL CHECK (alightings >= 0),
  received_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, device_id, client_id, category)
);
CREATE INDEX passenger_counts_trip ON passenger_counts (group_id, service_date, trip_id);

CREATE TABLE device_history_events (
  group_id text NOT NULL,
  device_id text NOT NULL,
  event_id text NOT NULL,
  client_id uuid NOT NULL,
  at timestamptz NOT NULL,
  patch jsonb NOT NULL,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, device_id, event_id),
  UNIQUE (group_id, device_id, client_id)
);

CREATE TABLE device_history_snapshots (
  group_id text NOT NULL,
  device_id text NOT NULL,
  event_id text NOT NULL,
  state jsonb NOT NULL,
  PRIMARY KEY (group_id, device_id, event_id)
);

CREATE TABLE device_latest (
  group_id text NOT NULL,
  device_id text NOT NULL,
  position_at timestamptz,
  lat double precision,
  lon double precision,
  gps_valid boolean,
  speed_kmh real,
  bearing real,
  trip_id text,
  service_date date,
  start_time integer,
  state_at timestamptz,
  state jsonb NOT NULL DEFAULT '{}',
  last_seen_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, device_id)
);

CREATE TABLE vehicle_movements (
  group_id text NOT NULL,
  vehicle_movement_id text NOT NULL,
  device_id text NOT NULL,
  client_id uuid NOT NULL,
  block_id text,
  service_date date NOT NULL,
  kind text NOT NULL,
  origin jsonb NOT NULL,
  destination jsonb NOT NULL,
  started_at timestamptz NOT NULL,
  ended_at timestamptz NOT NULL,
  distance_km double precision,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, vehicle_movement_id),
  UNIQUE (group_id, device_id, client_id)
);
CREATE INDEX vehicle_movements_date ON vehicle_movements (group_id, service_date, started_at);
CREATE INDEX vehicle_movements_block ON vehicle_movements (group_id, block_id, service_date);

CREATE TABLE danger_zones (
  group_id text NOT NULL REFERENCES groups ON DELETE CASCADE,
  danger_zone_id text NOT NULL,
  name text NOT NULL,
  lat double precision NOT NULL CHECK (lat BETWEEN -90 AND 90),
  lon double precision NOT NULL CHECK (lon BETWEEN -180 AND 180),
  radius_m double precision NOT NULL CHECK (radius_m > 0 AND radius_m <= 100000),
  message text NOT NULL,
  active_from timestamptz,
  active_to timestamptz,
  archived boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, danger_zone_id),
  CHECK (active_to IS NULL OR active_from IS NULL OR active_to > active_from)
);
`,
};
