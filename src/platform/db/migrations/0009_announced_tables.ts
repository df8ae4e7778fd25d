import type { Migration } from '../migrate.js';

/**
 * The tables written by every device report leave the change feed's triggers (0008): a NOTIFY in
 * a writing transaction makes its commit take PostgreSQL's one notification lock and hold it
 * through the WAL flush, so with a trigger on them every batch of every device committed one at
 * a time (bench:ingest fell from 8,500 to 5,500 items/s). Their writers announce instead, after
 * the commit and coalesced (ChangeFeed.announce and its ANNOUNCED_TABLES, src/platform/db/changes.ts;
 * this list is frozen with the migration).
 */
const ANNOUNCED_TABLES = [
  'positions', 'trip_events', 'passenger_counts', 'trip_runs', 'vehicle_movements', 'device_sign_events', 'device_latest',
  'device_history_events', 'device_history_snapshots', 'trip_tracking_dirty',
] as const;

const list = ANNOUNCED_TABLES.map((t) => `'${t}'`).join(', ');

export const m0009: Migration = {
  version: 9,
  name: 'announced tables',
  sql: `
CREATE OR REPLACE FUNCTION transit_ops_watch_tables() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  t record;
  n integer := 0;
BEGIN
  FOR t IN
    SELECT c.relname FROM pg_class c
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
      AND c.relname NOT IN ('schema_migrations', ${list})
      AND NOT EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = c.oid AND g.tgname = 'transit_ops_change')
  LOOP
    EXECUTE format('CREATE TRIGGER transit_ops_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION transit_ops_notify_change()', t.relname);
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;
${ANNOUNCED_TABLES.map((t) => `DROP TRIGGER IF EXISTS transit_ops_change ON ${t};`).join('\n')}
`,
};
