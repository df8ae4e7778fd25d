import type { Migration } from '../migrate.js';

/**
 * The scheduled side: GTFS versions and their publications, the GTFS files of each version, the
 * on-demand routes, the rail-station referential and the links of network stops to it.
 *
 * Every GTFS table is keyed by (group_id, gtfs_id, …): several versions coexist and earlier ones
 * stay readable. Identifier columns use the "C" collation: GTFS ids are opaque byte strings, and
 * bytewise comparison keeps the bulk load and the lookups fast.
 *
 * The GTFS tables carry no foreign keys: a foreign key fires a trigger per row, which would halve
 * the COPY rate of stop_times. The importer checks every reference itself (it reports them per
 * line), and writes a version's rows in the transaction that creates the version.
 *
 * The primary keys of the files that can be large (stop_times, shapes, calendar_dates) are
 * DEFERRABLE INITIALLY DEFERRED:
 * a duplicate key then does not abort the COPY; the importer finds every duplicate with one
 * query before committing and lists them, like any other error of the feed.
 */
export const m0002: Migration = {
  version: 2,
  name: 'gtfs',
  sql: `
CREATE TABLE gtfs_versions (
  group_id text NOT NULL REFERENCES groups ON DELETE CASCADE,
  gtfs_id text COLLATE "C" NOT NULL,
  name text NOT NULL,
  imported_at timestamptz NOT NULL,
  imported_by text,
  counts jsonb NOT NULL,
  warnings jsonb NOT NULL,
  warning_count integer NOT NULL,
  feed_info jsonb,
  PRIMARY KEY (group_id, gtfs_id)
);

-- Append-only: the version in force on a service date is read from here, so a later
-- publication never rewrites which version was in force before it.
CREATE TABLE gtfs_publications (
  group_id text NOT NULL,
  publication_id bigint GENERATED ALWAYS AS IDENTITY,
  gtfs_id text COLLATE "C" NOT NULL,
  published_at timestamptz NOT NULL,
  published_by text,
  PRIMARY KEY (group_id, publication_id),
  FOREIGN KEY (group_id, gtfs_id) REFERENCES gtfs_versions ON DELETE CASCADE
);
CREATE INDEX gtfs_publications_at ON gtfs_publications (group_id, published_at DESC, publication_id DESC);

CREATE TABLE gtfs_agencies (
  group_id text NOT NULL,
  gtfs_id text COLLATE "C" NOT NULL,
  agency_id text COLLATE "C" NOT NULL,
  agency_name text NOT NULL,
  agency_url text,
  agency_timezone text,
  agency_lang text,
  agency_phone text,
  PRIMARY KEY (group_id, gtfs_id, agency_id)
);

CREATE TABLE gtfs_stops (
  group_id text NOT NULL,
  gtfs_id text COLLATE "C" NOT NULL,
  stop_id text COLLATE "C" NOT NULL,
  stop_code text,
  stop_name text,
  stop_desc text,
  stop_lat double precision,
  stop_lon double precision,
  zone_id text,
  location_type smallint,
  parent_station text COLLATE "C",
  wheelchair_boarding smallint,
  platform_code text,
  PRIMARY KEY (group_id, gtfs_id, stop_id)
);

CREATE TABLE gtfs_routes (
  group_id text NOT NULL,
  gtfs_id text COLLATE "C" NOT NULL,
  route_id text COLLATE "C" NOT NULL,
  agency_id text COLLATE "C",
  route_short_name text,
  route_long_name text,
  route_desc text,
  route_type integer NOT NULL,
  route_color text,
  route_text_color text,
  route_sort_order integer,
  PRIMARY KEY (group_id, gtfs_id, route_id)
);

CREATE TABLE gtfs_calendars (
  group_id text NOT NULL,
  gtfs_id text COLLATE "C" NOT NULL,
  service_id text COLLATE "C" NOT NULL,
  monday boolean NOT NULL,
  tuesday boolean NOT NULL,
  wednesday boolean NOT NULL,
  thursday boolean NOT NULL,
  friday boolean NOT NULL,
  saturday boolean NOT NULL,
  sunday boolean NOT NULL,
  start_date date NOT NULL,
  end_date date NOT NULL,
  PRIMARY KEY (group_id, gtfs_id, service_id)
);

CREATE TABLE gtfs_calendar_dates (
  group_id text NOT NULL,
  gtfs_id text COLLATE "C" NOT NULL,
  service_id text COLLATE "C" NOT NULL,
  date date NOT NULL,
  exception_type smallint NOT NULL CHECK (exception_type IN (1, 2)),
  CONSTRAINT gtfs_calendar_dates_pkey PRIMARY KEY (group_id, gtfs_id, service_id, date) DEFERRABLE INITIALLY DEFERRED
);
CREATE INDEX gtfs_calendar_dates_date ON gtfs_calendar_dates (group_id, gtfs_id, date);

CREATE TABLE gtfs_shapes (
  group_id text NOT NULL,
  gtfs_id text COLLATE "C" NOT NULL,
  shape_id text COLLATE "C" NOT NULL,
  shape_pt_sequence integer NOT NULL,
  shape_pt_lat double precision NOT NULL,
  shape_pt_lon double precision NOT NULL,
  shape_dist_traveled double precision,
  CONSTRAINT gtfs_shapes_pkey PRIMARY KEY (group_id, gtfs_id, shape_id, shape_pt_sequence) DEFERRABLE INITIALLY DEFERRED
);

-- first_*/last_*/stop_count are computed by the importer from stop_times, so the trips of a
-- service date are listed without reading stop_times.
CREATE TABLE gtfs_trips (
  group_id text NOT NULL,
  gtfs_id text COLLATE "C" NOT NULL,
  trip_id text COLLATE "C" NOT NULL,
  route_id text COLLATE "C" NOT NULL,
  service_id text COLLATE "C" NOT NULL,
  trip_headsign text,
  trip_short_name text,
  direction_id smallint,
  block_id text COLLATE "C",
  shape_id text COLLATE "C",
  wheelchair_accessible smallint,
  bikes_allowed smallint,
  first_stop_id text COLLATE "C",
  first_stop_sequence integer,
  first_departure integer,
  last_stop_id text COLLATE "C",
  last_stop_sequence integer,
  last_arrival integer,
  stop_count integer NOT NULL,
  PRIMARY KEY (group_id, gtfs_id, trip_id)
);
CREATE INDEX gtfs_trips_service ON gtfs_trips (group_id, gtfs_id, service_id);

-- Times of day are seconds since the start of the service day (25:10:00 = 90600).
CREATE TABLE gtfs_stop_times (
  group_id text NOT NULL,
  gtfs_id text COLLATE "C" NOT NULL,
  trip_id text COLLATE "C" NOT NULL,
  stop_sequence integer NOT NULL,
  stop_id text COLLATE "C" NOT NULL,
  arrival_time integer,
  departure_time integer,
  stop_headsign text,
  pickup_type smallint,
  drop_off_type smallint,
  timepoint smallint,
  shape_dist_traveled double precision,
  CONSTRAINT gtfs_stop_times_pkey PRIMARY KEY (group_id, gtfs_id, trip_id, stop_sequence) DEFERRABLE INITIALLY DEFERRED
);

CREATE TABLE gtfs_frequencies (
  group_id text NOT NULL,
  gtfs_id text COLLATE "C" NOT NULL,
  trip_id text COLLATE "C" NOT NULL,
  start_time integer NOT NULL,
  end_time integer NOT NULL,
  headway_secs integer NOT NULL,
  exact_times smallint NOT NULL,
  PRIMARY KEY (group_id, gtfs_id, trip_id, start_time)
);

CREATE TABLE gtfs_transfers (
  group_id text NOT NULL,
  gtfs_id text COLLATE "C" NOT NULL,
  transfer_index integer NOT NULL,
  from_stop_id text COLLATE "C",
  to_stop_id text COLLATE "C",
  from_route_id text COLLATE "C",
  to_route_id text COLLATE "C",
  from_trip_id text COLLATE "C",
  to_trip_id text COLLATE "C",
  transfer_type smallint NOT NULL,
  min_transfer_time integer,
  PRIMARY KEY (group_id, gtfs_id, transfer_index)
);

CREATE TABLE on_demand_routes (
  group_id text NOT NULL REFERENCES groups ON DELETE CASCADE,
  route_id text NOT NULL,
  name text NOT NULL,
  short_name text,
  description text,
  color text,
  text_color text,
  status text NOT NULL CHECK (status IN ('active', 'inactive', 'archived')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, route_id)
);

-- A stop of an on-demand route: its stop_id belongs to the route and never names a GTFS stop.
CREATE TABLE on_demand_stops (
  group_id text NOT NULL,
  route_id text NOT NULL,
  stop_id text NOT NULL,
  position integer NOT NULL,
  name text NOT NULL,
  lat double precision NOT NULL,
  lon double precision NOT NULL,
  PRIMARY KEY (group_id, route_id, stop_id),
  FOREIGN KEY (group_id, route_id) REFERENCES on_demand_routes ON DELETE CASCADE
);

-- Open data attached to no group (a reference table, like users).
CREATE TABLE rail_stations (
  station_id text PRIMARY KEY,
  name text NOT NULL,
  code text,
  country text,
  lat double precision,
  lon double precision,
  updated_at timestamptz NOT NULL
);
CREATE INDEX rail_stations_code ON rail_stations (lower(code));

-- is_orphan: the stop is absent from the currently published GTFS; recomputed at each publication.
CREATE TABLE rail_station_links (
  group_id text NOT NULL REFERENCES groups ON DELETE CASCADE,
  stop_id text COLLATE "C" NOT NULL,
  station_id text NOT NULL REFERENCES rail_stations,
  is_orphan boolean NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, stop_id, station_id)
);
`,
};
