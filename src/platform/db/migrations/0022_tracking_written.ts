import type { Migration } from '../migrate.js';

/**
 * Which write of a trip's tracking last changed each of its stop rows (issue #16): the passenger
 * feeds read a city's open trips at every rebuild (some 4,400 trips and 290,000 stop rows at the
 * morning peak), and a tracking round changes a stop or two of a trip. With this stamp a rebuild
 * asks only for the rows written since its last read (trips/tracking.ts OpenTripStops).
 *
 * `trip_tracking.written` is drawn from `trip_tracking_written` at every write of the trip, under
 * the trip row's lock (the round's upsert takes it before it draws): of two writes of a trip, the
 * one committed later holds the greater value, whichever instance made it. A stop row the write
 * inserts or changes takes the trip's value; one it leaves as it was keeps its own. So the rows
 * of a trip changed since a read that saw `written` = w are those with a greater `written`. 0:
 * written before this migration (read whole once, as before).
 */
export const m0022: Migration = {
  version: 22,
  name: 'tracking written',
  sql: `
CREATE SEQUENCE trip_tracking_written;
ALTER TABLE trip_tracking ADD COLUMN written bigint NOT NULL DEFAULT 0;
ALTER TABLE trip_tracking_stops ADD COLUMN written bigint NOT NULL DEFAULT 0;`,
};
