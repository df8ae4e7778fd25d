/**
 * The statements of the datahub CSV files (fleet/datahub.ts), for the drivers and vehicles
 * tables. One description per file (CsvTable) names the table and its columns, so each statement
 * is written once for both: the table is `drivers` or `vehicles` (CsvTable['table'], a type the
 * compiler checks), both fleet's (test/platform/owners.test.ts lists this module's dynamic names).
 */
import { quoteIdent, type Db, type Queryable, type Row, type Tx } from '../../../platform/db/index.js';
import { teamsVisibleSql } from '../../../platform/http/teams.js';
import type { CsvTable } from '../datahub.js';

const SQL_TYPE = { text: 'text', list: 'text[]', boolean: 'boolean', integer: 'integer' } as const;

/** A condition of the export beyond group and teams; its parameter is $3. */
export interface ExportFilter {
  sql: string;
  value: unknown;
}

/** The file's columns of the records `teams` see (null: every team), by id, in batches from a cursor. */
export function streamExport(db: Db, t: CsvTable, groupId: string, teams: string[] | null, filter?: ExportFilter): AsyncIterable<Row[]> {
  const text = `SELECT ${t.columns.map((c) => quoteIdent(c.db)).join(', ')} FROM ${quoteIdent(t.table)}
    WHERE group_id = $1 AND ${teamsVisibleSql('teams', 2)}${filter ? ` AND ${filter.sql}` : ''}
    ORDER BY ${quoteIdent(t.key)}`;
  return db.stream<Row>(text, [groupId, teams, ...(filter ? [filter.value] : [])]);
}

/** The unique constraint checked at commit, so a file may swap unique values between its records. */
export async function deferUnique(tx: Tx, t: CsvTable): Promise<void> {
  await tx.query(`SET CONSTRAINTS ${quoteIdent(t.unique.constraint)} DEFERRED`);
}

/** The teams of the stored records of these ids. */
export function selectStoredTeams(q: Queryable, t: CsvTable, groupId: string, ids: string[]): Promise<{ id: string; teams: string[] }[]> {
  return q.query(`SELECT ${quoteIdent(t.key)} AS id, teams FROM ${quoteIdent(t.table)} WHERE group_id = $1 AND ${quoteIdent(t.key)} = ANY($2)`, [groupId, ids]);
}

/** The stored records, other than these ids, holding one of these unique values. */
export function selectUniqueHolders(q: Queryable, t: CsvTable, groupId: string, values: string[], ids: string[]): Promise<{ id: string; value: string }[]> {
  const key = quoteIdent(t.key);
  const unique = quoteIdent(t.unique.db);
  return q.query(`SELECT ${key} AS id, ${unique} AS value FROM ${quoteIdent(t.table)} WHERE group_id = $1 AND ${unique} = ANY($2) AND NOT (${key} = ANY($3))`, [groupId, values, ids]);
}

/** Upserts a batch of records (stored column → value) by id; one row per created or changed record. */
export function upsertRecords(tx: Tx, t: CsvTable, groupId: string, records: Record<string, unknown>[], now: Date): Promise<{ inserted: boolean }[]> {
  const table = quoteIdent(t.table);
  const cols = t.columns.map((c) => quoteIdent(c.db));
  const others = t.columns.filter((c) => c.db !== t.key).map((c) => quoteIdent(c.db));
  return tx.query(
    `INSERT INTO ${table} (group_id, ${cols.join(', ')}, created_at, updated_at)
    SELECT $1, ${cols.map((c) => `r.${c}`).join(', ')}, $3, $3
    FROM jsonb_to_recordset($2::jsonb) AS r(${t.columns.map((c) => `${quoteIdent(c.db)} ${SQL_TYPE[c.cell]}`).join(', ')})
    ON CONFLICT (group_id, ${quoteIdent(t.key)}) DO UPDATE SET ${others.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}, updated_at = EXCLUDED.updated_at
    WHERE (${others.map((c) => `${table}.${c}`).join(', ')}) IS DISTINCT FROM (${others.map((c) => `EXCLUDED.${c}`).join(', ')})
    RETURNING (xmax = 0) AS inserted`,
    [groupId, JSON.stringify(records), now],
  );
}
