import type { Migration } from '../migrate.js';

/**
 * Raw reports partitioned by time (issue #16, DESIGN.md §6): positions by UTC day (a city of
 * 4,000 buses reporting every 15 s writes ~23M a day), trip events and passenger counts by UTC
 * month. Dropping a day of positions past their retention is then one DROP TABLE, instant,
 * instead of a DELETE of millions of rows and the vacuum after it (src/platform/db/partitions.ts
 * creates partitions ahead, on demand, and drops the expired ones).
 *
 * A partitioned table's unique keys must hold its partition key: the keys become
 * (group, device, client id, at) — a retried item is the same item, with the same `at`, so it is
 * still acknowledged as a duplicate by ON CONFLICT DO NOTHING (device/ingest.ts).
 *
 * No DEFAULT partition: a row outside every partition fails (23514) instead of landing in a
 * catch-all that each new partition would have to scan; ingest creates the partition a report
 * needs before inserting it, within its accepted window.
 *
 * The partitions (children) never get the change feed's trigger: their parents are announced
 * (0009), and a partition made after a migration must not be watched by the next one.
 */
const ANNOUNCED_TABLES = [
  'positions', 'trip_events', 'passenger_counts', 'trip_runs', 'vehicle_movements', 'device_sign_events', 'device_latest',
  'device_history_events', 'device_history_snapshots', 'trip_tracking_dirty',
] as const;

const list = ANNOUNCED_TABLES.map((t) => `'${t}'`).join(', ');

/** Each table: its partition unit, its new primary key, and its indexes (as 0004 made them). */
const TABLES = [
  {
    table: 'positions', unit: 'day', key: 'group_id, device_id, client_id, at',
    indexes: [
      'CREATE INDEX positions_device ON positions (group_id, device_id, at)',
      'CREATE INDEX positions_trip ON positions (group_id, service_date, trip_id, at) WHERE trip_id IS NOT NULL',
    ],
  },
  {
    table: 'trip_events', unit: 'month', key: 'group_id, device_id, client_id, at',
    indexes: [
      'CREATE INDEX trip_events_trip ON trip_events (group_id, service_date, trip_id, at)',
      'CREATE INDEX trip_events_time ON trip_events (group_id, at, device_id, client_id)',
    ],
  },
  {
    table: 'passenger_counts', unit: 'month', key: 'group_id, device_id, client_id, category, at',
    indexes: ['CREATE INDEX passenger_counts_trip ON passenger_counts (group_id, service_date, trip_id)'],
  },
] as const;

/** The old table is renamed, its rows copied into the partitions they need, then dropped. */
const convert = (t: (typeof TABLES)[number]) => `
ALTER TABLE ${t.table} RENAME TO ${t.table}_unpartitioned;
CREATE TABLE ${t.table} (LIKE ${t.table}_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (at);
SELECT transit_ops_ensure_partition('${t.table}', '${t.unit}', min(at)) FROM ${t.table}_unpartitioned GROUP BY date_trunc('${t.unit}', at AT TIME ZONE 'UTC');
INSERT INTO ${t.table} SELECT * FROM ${t.table}_unpartitioned;
DROP TABLE ${t.table}_unpartitioned;
ALTER TABLE ${t.table} ADD PRIMARY KEY (${t.key});
${t.indexes.join(';\n')};
`;

export const m0017: Migration = {
  version: 17,
  name: 'report partitions',
  sql: `
-- The partition of parent holding instant t (unit: day or month, UTC), created if missing; its
-- name is parent_pYYYYMMDD or parent_pYYYYMM. Callers serialize on the advisory lock of
-- partitions.ts, so two instances never create the same one.
CREATE FUNCTION transit_ops_ensure_partition(parent text, unit text, t timestamptz) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  lo timestamp;
  name text;
BEGIN
  IF unit NOT IN ('day', 'month') THEN RAISE EXCEPTION 'partition unit must be day or month, not %', unit; END IF;
  lo := date_trunc(unit, t AT TIME ZONE 'UTC');
  name := parent || '_p' || to_char(lo, CASE unit WHEN 'day' THEN 'YYYYMMDD' ELSE 'YYYYMM' END);
  IF to_regclass(format('%I.%I', current_schema(), name)) IS NULL THEN
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', name, parent,
      to_char(lo, 'YYYY-MM-DD HH24:MI:SS') || '+00', to_char(lo + ('1 ' || unit)::interval, 'YYYY-MM-DD HH24:MI:SS') || '+00');
  END IF;
  RETURN name;
END $$;

CREATE OR REPLACE FUNCTION transit_ops_watch_tables() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  t record;
  n integer := 0;
BEGIN
  FOR t IN
    SELECT c.relname FROM pg_class c
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      AND c.relname NOT IN ('schema_migrations', ${list})
      AND NOT EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = c.oid AND g.tgname = 'transit_ops_change')
  LOOP
    EXECUTE format('CREATE TRIGGER transit_ops_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION transit_ops_notify_change()', t.relname);
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;
${TABLES.map(convert).join('')}`,
};
