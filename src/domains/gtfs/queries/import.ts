/**
 * The bulk load of a version's files into their gtfs_* tables (gtfs/import/importer.ts). The
 * `table` of each function is one of the tables of the importer's fixed list of GTFS files
 * (GTFS_FILES in gtfs/import/files.ts), never a caller's input.
 */
import type { Queryable, Tx } from '../../../platform/db/index.js';
import { quoteIdent } from '../../../platform/db/types.js';

/** Loads COPY lines (group_id and gtfs_id first, then `columns`) into a GTFS file's table. */
export function copyVersionRows(tx: Tx, table: string, columns: readonly string[], lines: AsyncIterable<string>): Promise<void> {
  return tx.copyFrom(table, ['group_id', 'gtfs_id', ...columns], lines);
}

/** Fresh planner statistics for the tables just loaded. */
export function analyzeTables(tx: Tx, tables: readonly string[]): Promise<void> {
  return tx.exec(`ANALYZE ${tables.map(quoteIdent).join(', ')}`);
}

/** Checks a deferred constraint now (throws a unique violation, 23505, when a key appears twice). */
export async function checkConstraintNow(tx: Queryable, constraint: string): Promise<void> {
  await tx.query(`SET CONSTRAINTS ${constraint} IMMEDIATE`);
}

/** The values of `columns` that appear more than once in a version's rows of `table`. */
export function selectDuplicateKeys(tx: Queryable, table: string, columns: readonly string[], groupId: string, gtfsId: string): Promise<Record<string, unknown>[]> {
  const cols = columns.map((c) => `"${c}"`).join(', ');
  return tx.query<Record<string, unknown>>(
    `SELECT ${cols}, count(*) AS n FROM ${table} WHERE group_id = $1 AND gtfs_id = $2 GROUP BY ${cols} HAVING count(*) > 1`,
    [groupId, gtfsId],
  );
}
