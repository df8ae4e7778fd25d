import type { Migration } from '../migrate.js';

/**
 * The earliest report a dirty mark stands for (trips/tracking/round.ts, incremental reads): device
 * ingest writes `since` = the earliest `at` among the reports it stored for the trip, and a mark
 * made again keeps the least. A tracking round that already holds the trip's reports as of its own
 * last write reads only those at or after `since`. NULL (the marks made before this migration, and
 * those made by anything but a report) means everything is read again.
 */
export const m0020: Migration = {
  version: 20,
  name: 'dirty since',
  sql: `ALTER TABLE trip_tracking_dirty ADD COLUMN since timestamptz;`,
};
