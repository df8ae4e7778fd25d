import type { Migration } from '../migrate.js';

/**
 * The change feed: every table of the schema gets a statement-level trigger that NOTIFYs the
 * table's name when a statement changed it (once per table and transaction: PostgreSQL folds
 * identical notifications, and delivers them at commit, never for a rollback). Each instance
 * listens and invalidates what it cached from that table (src/platform/db/changes.ts), so caches
 * stay consistent across instances without a query per request.
 *
 * The channel comes from the session setting `transit_ops.change_channel` (set by the service
 * when it runs in a schema of its own, as tests do), else `data_changes`. Statement-level
 * without transition tables: a bulk load of millions of rows costs one notification.
 *
 * `transit_ops_watch_tables()` adds the trigger to every table that lacks it; the migrator calls
 * it after each run, so a table created by a later migration is watched too.
 */
export const m0008: Migration = {
  version: 8,
  name: 'change feed',
  sql: `
CREATE FUNCTION transit_ops_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify(coalesce(nullif(current_setting('transit_ops.change_channel', true), ''), 'data_changes'), TG_TABLE_NAME);
  RETURN NULL;
END $$;

CREATE FUNCTION transit_ops_watch_tables() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  t record;
  n integer := 0;
BEGIN
  FOR t IN
    SELECT c.relname FROM pg_class c
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND c.relname <> 'schema_migrations'
      AND NOT EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = c.oid AND g.tgname = 'transit_ops_change')
  LOOP
    EXECUTE format('CREATE TRIGGER transit_ops_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION transit_ops_notify_change()', t.relname);
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;

SELECT transit_ops_watch_tables();
`,
};
