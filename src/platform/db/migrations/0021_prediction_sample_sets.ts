import type { Migration } from '../migrate.js';

/**
 * The prediction samples stored a trip and minute a row (issue #16, cost over time): a city's
 * minute is about 150,000 samples (4,600 trips in progress, every stop ahead within the hour), and a
 * row and an index entry per stop (0019) made them about 43 MB a minute, two thirds of the
 * database's growth at the morning peak, written in one burst a minute beside the devices'
 * reports. Now one row per trip and sampled minute holds its stops as arrays, the
 * predicted times as milliseconds from the sampling time (exact, and their horizon): about 40
 * bytes a stop and one key entry a trip instead of about 300 bytes a stop.
 *
 * `prediction_samples` stays, as a view of a row per trip, stop and minute with the columns it had
 * (stats/predictions scores from it; horizon_s = the arrival's offset rounded to the second, as
 * the sampler rounded it). What 0019 stored is moved over: a trip and minute sampled at two
 * instants (two rounds in one minute, each adding stops) takes the earlier instant, its stops'
 * offsets from it.
 */
export const m0021: Migration = {
  version: 21,
  name: 'prediction sample sets',
  sql: `
CREATE TABLE prediction_sample_sets (
  group_id text NOT NULL,
  service_date date NOT NULL,
  trip_id text NOT NULL,
  sampled_minute timestamptz NOT NULL,
  route_id text NOT NULL,
  sampled_at timestamptz NOT NULL,
  stop_sequences integer[] NOT NULL,
  stop_ids text[] NOT NULL,
  arrivals_ms integer[] NOT NULL,
  departures_ms integer[] NOT NULL,
  uncertainties_s integer[] NOT NULL,
  bases text[] NOT NULL,
  PRIMARY KEY (group_id, service_date, trip_id, sampled_minute)
);
CREATE INDEX prediction_sample_sets_service_date ON prediction_sample_sets (service_date);

INSERT INTO prediction_sample_sets (group_id, service_date, trip_id, sampled_minute, route_id, sampled_at,
  stop_sequences, stop_ids, arrivals_ms, departures_ms, uncertainties_s, bases)
SELECT p.group_id, p.service_date, p.trip_id, p.sampled_minute, min(p.route_id), f.at,
  array_agg(p.stop_sequence ORDER BY p.stop_sequence), array_agg(p.stop_id ORDER BY p.stop_sequence),
  array_agg(round(EXTRACT(EPOCH FROM (p.predicted_arrival_at - f.at)) * 1000)::int ORDER BY p.stop_sequence),
  array_agg(round(EXTRACT(EPOCH FROM (p.predicted_departure_at - f.at)) * 1000)::int ORDER BY p.stop_sequence),
  array_agg(p.uncertainty_s ORDER BY p.stop_sequence), array_agg(p.basis ORDER BY p.stop_sequence)
FROM prediction_samples p
JOIN (SELECT group_id, service_date, trip_id, sampled_minute, min(sampled_at) AS at FROM prediction_samples GROUP BY 1, 2, 3, 4) f
  USING (group_id, service_date, trip_id, sampled_minute)
GROUP BY p.group_id, p.service_date, p.trip_id, p.sampled_minute, f.at;

DROP TABLE prediction_samples;

CREATE VIEW prediction_samples AS
SELECT s.group_id, s.service_date, s.trip_id, u.stop_sequence, s.sampled_minute, u.stop_id, s.route_id, s.sampled_at,
  s.sampled_at + u.arrival_ms * interval '1 millisecond' AS predicted_arrival_at,
  s.sampled_at + u.departure_ms * interval '1 millisecond' AS predicted_departure_at,
  u.uncertainty_s, floor((u.arrival_ms + 500) / 1000.0)::int AS horizon_s, u.basis
FROM prediction_sample_sets s
CROSS JOIN LATERAL unnest(s.stop_sequences, s.stop_ids, s.arrivals_ms, s.departures_ms, s.uncertainties_s, s.bases)
  AS u(stop_sequence, stop_id, arrival_ms, departure_ms, uncertainty_s, basis);
`,
};
