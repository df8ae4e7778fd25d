import type { Migration } from '../migrate.js';

/**
 * Trip updates (spec: What the service does 9): gaps against the schedule decided by the operator,
 * overlaying the GTFS for a range of service dates without rewriting it. An update is never
 * deleted: removing it stamps removed_at, so what passengers were told stays on record.
 */
export const m0005: Migration = {
  version: 5,
  name: 'trip updates',
  sql: `
CREATE TABLE trip_updates (
  group_id text NOT NULL REFERENCES groups ON DELETE CASCADE,
  update_id text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  kind text NOT NULL CHECK (kind IN ('cancel', 'skip_stop', 'move_stop', 'add_stop', 'detour', 'message')),
  trip_id text,
  route_id text,
  start_time integer,
  start_date date NOT NULL,
  end_date date NOT NULL,
  details jsonb NOT NULL DEFAULT '{}',
  message jsonb,
  body_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  created_by text,
  ended_at timestamptz,
  removed_at timestamptz,
  PRIMARY KEY (group_id, update_id),
  CHECK ((trip_id IS NULL) <> (route_id IS NULL)),
  CHECK (end_date >= start_date)
);
CREATE INDEX trip_updates_dates ON trip_updates (group_id, start_date, end_date) WHERE removed_at IS NULL;
CREATE INDEX trip_updates_trip ON trip_updates (group_id, trip_id) WHERE trip_id IS NOT NULL;
CREATE INDEX trip_updates_route ON trip_updates (group_id, route_id) WHERE route_id IS NOT NULL;
`,
};
