import type { Migration } from '../migrate.js';

/**
 * The learned model of the predictions (issue #17, section 2; src/domains/predictions/model.ts):
 *
 * - prediction_segments: for each route direction (`pattern_key`, route_id|direction_id), pair of
 *   consecutive stops, day type (weekday, saturday, sunday: Sundays and holidays by the GTFS
 *   calendars) and time band of the day (`time_band` × the model's band_seconds, counted from
 *   the start of the service day), the running times the group's tracking history recorded from
 *   the passing time at the first stop to the passing time at the second: how many (n), their
 *   median, 10th and 90th percentiles, and the median dwell at the second stop (arrival to
 *   departure; null where no run recorded both).
 * - prediction_models: per group, when and on what the segments were last built.
 *
 * A build replaces a group's rows in one transaction, so readers see the old model or the new one.
 */
export const m0018: Migration = {
  version: 18,
  name: 'prediction segments',
  sql: `
CREATE TABLE prediction_segments (
  group_id text NOT NULL,
  pattern_key text NOT NULL,
  from_stop_id text NOT NULL,
  to_stop_id text NOT NULL,
  day_type text NOT NULL CHECK (day_type IN ('weekday', 'saturday', 'sunday')),
  time_band integer NOT NULL,
  n integer NOT NULL,
  median_run_s double precision NOT NULL,
  p10_run_s double precision NOT NULL,
  p90_run_s double precision NOT NULL,
  median_dwell_s double precision,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, pattern_key, day_type, time_band, from_stop_id, to_stop_id)
);

CREATE TABLE prediction_models (
  group_id text NOT NULL,
  built_at timestamptz NOT NULL,
  band_seconds integer NOT NULL,
  history_from date NOT NULL,
  history_to date NOT NULL,
  runs integer NOT NULL,
  segments integer NOT NULL,
  took_ms integer NOT NULL,
  PRIMARY KEY (group_id)
);
`,
};
