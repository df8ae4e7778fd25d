import type { Migration } from '../migrate.js';

/**
 * Room on each page of the trip tracking's tables for their rows' next versions (issue #16). A
 * trip's row is written again at every round after one of its reports (every 15 s a bus), its stop
 * rows as they are passed; none of these writes changes an indexed column. With full pages (the
 * default fillfactor, 100), about half of these updates could not stay on their row's page: each
 * such one wrote a new index entry and left a dead row for vacuum. A city's database (a morning of
 * bench:network, then about a hundred rebuilds of bench/feeds-rebuild.ts --recomputed, which
 * rewrites every open trip as a round does) held `trip_tracking` in 305 MB for 10,000 rows, 47 %
 * of its 1.0 million updates HOT, and `trip_tracking_stops` in 270 MB, 58 % of 1.8 million. With
 * room on the page, an update stays there (HOT: no index write) and the page's dead versions are
 * pruned as it is read: after a city's morning with this, 99.5 and 99.6 % of the updates were HOT
 * and the tables 8.6 and 105 MB (bench/RESULTS.md, 2026-12-06).
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
