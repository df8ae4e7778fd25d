import type { Migration } from '../migrate.js';

/**
 * Planning (spec: What the service does 4): who was due to operate which trip on which date.
 * One row per trip instance and date, replaced by each new assignment of it; `filename` keeps the
 * file a planning came from, for audit.
 */
export const m0007: Migration = {
  version: 7,
  name: 'planning',
  sql: `
CREATE TABLE plannings (
  group_id text NOT NULL REFERENCES groups ON DELETE CASCADE,
  service_date date NOT NULL,
  trip_id text NOT NULL,
  start_time integer NOT NULL DEFAULT -1,
  gtfs_id text NOT NULL,
  vehicle_id text,
  driver_id text,
  filename text,
  created_by text,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, service_date, trip_id, start_time),
  FOREIGN KEY (group_id, vehicle_id) REFERENCES vehicles (group_id, vehicle_id),
  FOREIGN KEY (group_id, driver_id) REFERENCES drivers (group_id, driver_id),
  CHECK (vehicle_id IS NOT NULL OR driver_id IS NOT NULL)
);
CREATE INDEX plannings_driver ON plannings (group_id, driver_id, service_date);
CREATE INDEX plannings_vehicle ON plannings (group_id, vehicle_id, service_date);
`,
};
