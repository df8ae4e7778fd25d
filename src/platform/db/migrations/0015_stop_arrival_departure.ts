import type { Migration } from '../migrate.js';

/**
 * Arrival and departure at each stop of a tracked trip (issue #17, section 1): the vehicle
 * arrives when it reaches the stop and departs when it has moved beyond it along the trip; the
 * dwell is their difference. `actual_at` stays the passing time the delay is measured at
 * (departure; arrival for the last stop). Stored rows are recomputed from the reports, so rows
 * computed before this migration get the two times at their trip's next recomputation.
 */
export const m0015: Migration = {
  version: 15,
  name: 'stop arrival and departure',
  sql: `
ALTER TABLE trip_tracking_stops ADD COLUMN actual_arrival_at timestamptz;
ALTER TABLE trip_tracking_stops ADD COLUMN actual_departure_at timestamptz;
`,
};
