import type { Migration } from '../migrate.js';

/**
 * Room on each page of the trip tracking's tables for their rows' next versions (issue #16). A
 * trip's row is written again at every round after one of its reports (every 15 s a bus), its stop
 * rows as they are passed; none of these writes changes an indexed column. With full pages (the
 * default fillfactor, 100), about half of these updates could not stay on their row's page: each
 * such one wrote a new index entry and left a dead row for vacuum. A city's morning left
 * `trip_tracking` at 305 MB for 10,000 rows, 47 % of its 1.0 million updates HOT, and
 * `trip_tracking_stops` 58 % of 1.8 million (bench:network, 2026-12-06). With room on the page, an
 * update stays there (HOT: no index write) and the page's dead versions are pruned as it is read.
 * Only pages written from now on leave the room; a table's existing pages fill as before. The
 * setting takes a lock that lets reads and writes go on.
 */
export const m0025: Migration = {
  version: 25,
  name: 'tracking fillfactor',
  sql: `
ALTER TABLE trip_tracking SET (fillfactor = 70);
ALTER TABLE trip_tracking_stops SET (fillfactor = 80);`,
};
