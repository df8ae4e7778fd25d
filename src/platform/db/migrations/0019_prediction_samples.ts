import type { Migration } from '../migrate.js';

/**
 * What the predictions published (issue #17, section 3; src/domains/predictions/samples.ts): a
 * sample of every trip and stop ahead, at most one per clock minute (`sampled_minute`, in the
 * key: a second sampling in the same minute adds nothing), with the predicted arrival and
 * departure, the uncertainty and the horizon (predicted arrival − sampling time, seconds). The
 * actual passage is not stored: stats/predictions joins trip_tracking_stops when it scores, so a
 * passage recomputed later is scored as it stands. group_id leads the key (Citus distribution
 * column); the key serves the scoring (group, service dates, trip, stop); the index on
 * service_date serves the retention.
 */
export const m0019: Migration = {
  version: 19,
  name: 'prediction samples',
  sql: `
CREATE TABLE prediction_samples (
  group_id text NOT NULL,
  service_date date NOT NULL,
  trip_id text NOT NULL,
  stop_sequence integer NOT NULL,
  sampled_minute timestamptz NOT NULL,
  stop_id text NOT NULL,
  route_id text NOT NULL,
  sampled_at timestamptz NOT NULL,
  predicted_arrival_at timestamptz NOT NULL,
  predicted_departure_at timestamptz NOT NULL,
  uncertainty_s integer NOT NULL,
  horizon_s integer NOT NULL,
  basis text NOT NULL,
  PRIMARY KEY (group_id, service_date, trip_id, stop_sequence, sampled_minute)
);
CREATE INDEX prediction_samples_service_date ON prediction_samples (service_date);
`,
};
