import type { Migration } from '../migrate.js';

/**
 * The raw reports' keys in time order (issue #16, the city's batch tail): (group, at, device,
 * client id) instead of (group, device, client id, at).
 *
 * Measured on the city at its morning peak (bench/wal-by-relation.ts, 4,609 buses): in the minute
 * after a checkpoint the server wrote 206 MB of WAL, 77 % of it full-page images (a page's first
 * change after each checkpoint is logged as the whole 8 KB page), against 53 MB in a minute three
 * minutes later. The largest share, 46 MB, was the positions' key: keyed by device first, each
 * device's inserts land on its own leaf page, so every checkpoint logs the whole key of the day
 * again; trip events' and passenger counts' keys added 17 MB. A device batch's commit waits for
 * all of that to be flushed. Keyed by time first, the reports of a minute share the key's
 * rightmost pages (a backlog sent after an offline spell lands a little further left), a few
 * pages a checkpoint.
 *
 * The key's columns are the same, so what it makes unique (a retried item is a duplicate: ON
 * CONFLICT DO NOTHING, device/ingest.ts) is unchanged. The trip events' index by time
 * (trip_events_time: group, at, device, client id, the events' pages by time, duties'
 * selectTripEvents) is that key now, and goes. A device's reads keep positions_device (group,
 * device, at); the trips' reads, the indexes by trip.
 *
 * Upgrading rebuilds these keys over every partition kept (docs/operations.md §5 gives the time it
 * takes per million rows), the tables locked meanwhile.
 */
const KEYS = [
  { table: 'positions', key: 'group_id, at, device_id, client_id' },
  { table: 'trip_events', key: 'group_id, at, device_id, client_id' },
  { table: 'passenger_counts', key: 'group_id, at, device_id, client_id, category' },
] as const;

export const m0024: Migration = {
  version: 24,
  name: 'report keys by time',
  sql: `${KEYS.map((k) => `
ALTER TABLE ${k.table} DROP CONSTRAINT ${k.table}_pkey;
ALTER TABLE ${k.table} ADD PRIMARY KEY (${k.key});`).join('')}
DROP INDEX trip_events_time;`,
};
