/**
 * The datahub CSV files of drivers and vehicles, both ways. One description per file (columns in
 * order, the stored column each maps to, how a cell reads and which schema it obeys) serves the
 * export (streamed from a server-side cursor) and the import (every line validated, then applied
 * in one transaction). Export → import → export gives the same bytes: platform/csv.ts writes
 * and reads, rows are ordered by id, and empty cells are stored as null (or an empty team list).
 */
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { AppContext } from '../../platform/context.js';
import { CsvFormatError, TURN_EVERY, csvList, readCsv, type CsvValue } from '../../platform/csv.js';
import { nextTurn } from '../../platform/slices.js';
import { violatedConstraint, type Db } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { errors, ValidationError, type ValidationIssue } from '../../platform/http/errors.js';
import { teamParam, teamsWritable } from '../../platform/http/teams.js';
import { listTeams } from '../groups/service.js';
import { deferUnique, selectStoredTeams, selectUniqueHolders, streamExport, upsertRecords, type ExportFilter } from './queries/datahub.js';
import type { ImportReport } from './schemas.js';

type Cell = 'text' | 'list' | 'boolean' | 'integer';

export interface CsvColumn {
  /** Name in the header line. */
  csv: string;
  /** The stored column. */
  db: string;
  cell: Cell;
  required: boolean;
  /** The schema the JSON bodies use for the same field: one rule for both ways in. */
  schema: TSchema;
  normalise?: (v: string) => string;
}

export interface CsvTable {
  noun: 'driver' | 'vehicle';
  table: 'drivers' | 'vehicles';
  /** The id column (first in the file). */
  key: string;
  /** The other column unique in the group, and its (deferrable) constraint. */
  unique: { db: string; constraint: string };
  columns: readonly CsvColumn[];
}

export const csvHeader = (t: CsvTable) => t.columns.map((c) => c.csv);

export type { ExportFilter };

/** The rows of the export, in batches read from a cursor, so memory stays flat whatever the count. */
export async function* exportRows(db: Db, t: CsvTable, scope: GroupScope, filter?: ExportFilter): AsyncIterable<CsvValue[][]> {
  for await (const batch of streamExport(db, t, scope.groupId, teamParam(scope), filter)) {
    yield batch.map((r) => t.columns.map((c) => r[c.db] as CsvValue));
  }
}

const BATCH = 2000;

type Parsed = { line: number; values: Record<string, unknown> };

/**
 * Imports a file in exactly the export format: upsert by id, one transaction. Every line is
 * checked (required cells, formats, known teams, the caller's teams, duplicate ids and duplicate
 * unique values in the file or against stored records); one bad line rejects the whole file with
 * a 422 listing the problems as loc ["body", <line>, <column>] (the header is line 1).
 */
export async function importCsv(ctx: AppContext, scope: GroupScope, t: CsvTable, body: string): Promise<ImportReport> {
  const issues: ValidationIssue[] = [];
  const problem = (line: number, column: string, msg: string, type: string, input?: unknown) => {
    issues.push({ loc: ['body', line, column], msg, type, ...(input !== undefined ? { input } : {}) });
  };

  let file: Awaited<ReturnType<typeof readCsv>>;
  try {
    file = await readCsv(body);
  } catch (err) {
    if (err instanceof CsvFormatError) throw new ValidationError([{ loc: ['body', err.line], msg: `Malformed CSV: ${err.message}`, type: 'csv_invalid' }]);
    throw err;
  }
  const expected = csvHeader(t);
  if (file.header.join(';') !== expected.join(';')) {
    throw new ValidationError([{ loc: ['body', 1], msg: `The header line must be exactly ${expected.join(';')} (the export format)`, type: 'value_error', input: file.header.join(';') }]);
  }

  const checks = new Map(t.columns.map((c) => [c, Compile(c.schema)]));
  const groupTeams = new Set((await listTeams(ctx.db, scope.groupId)).map((x) => x.team_id));
  const rows: Parsed[] = [];
  const lineOfId = new Map<string, number>();
  const lineOfUnique = new Map<string, number>();
  const uniqueCsv = t.columns.find((c) => c.db === t.unique.db)!.csv;

  for (const [i, { line, values }] of file.records.entries()) {
    if (i % TURN_EVERY === TURN_EVERY - 1) await nextTurn();
    const parsed: Record<string, unknown> = {};
    let ok = true;
    for (const c of t.columns) {
      const raw = values[c.csv] ?? '';
      const r = readCell(c, raw, checks.get(c)!);
      if ('error' in r) {
        problem(line, c.csv, r.error.msg, r.error.type, raw);
        ok = false;
      } else parsed[c.db] = r.value;
    }
    // Each check runs when its cell could be read, so one pass reports every problem of the file.
    const teams = parsed['teams'] as string[] | undefined;
    if (teams) {
      const unknown = teams.filter((x) => !groupTeams.has(x));
      if (unknown.length > 0) problem(line, 'teams', `Unknown teams in group ${scope.groupId}: ${unknown.join(', ')}`, 'value_error', values['teams']);
      else if (!teamsWritable(scope, teams)) problem(line, 'teams', `You are limited to the teams ${scope.teams!.join(', ')}: each ${t.noun} must belong to those teams only`, 'forbidden_team', values['teams']);
    }
    const id = parsed[t.key] as string | undefined;
    if (id !== undefined) {
      const first = lineOfId.get(id);
      if (first !== undefined) problem(line, 'id', `Duplicate id: ${id} is already on line ${first}`, 'duplicate', values['id']);
      else lineOfId.set(id, line);
    }
    const unique = parsed[t.unique.db] as string | undefined;
    if (unique !== undefined) {
      const first = lineOfUnique.get(unique);
      if (first !== undefined) problem(line, uniqueCsv, `Duplicate ${uniqueCsv}: ${unique} is already on line ${first}`, 'duplicate', unique);
      else lineOfUnique.set(unique, line);
    }
    if (ok) rows.push({ line, values: parsed });
  }

  const apply = async (): Promise<ImportReport> =>
    ctx.db.transaction(async (tx) => {
      await deferUnique(tx, t);
      const ids = [...lineOfId.keys()];
      if (scope.teams !== null) {
        for (const s of await selectStoredTeams(tx, t, scope.groupId, ids)) {
          if (!teamsWritable(scope, s.teams)) problem(lineOfId.get(s.id)!, 'id', `The stored ${t.noun} ${s.id} belongs to teams outside yours (${s.teams.join(', ') || 'none'})`, 'forbidden_team', s.id);
        }
      }
      const holders = await selectUniqueHolders(tx, t, scope.groupId, [...lineOfUnique.keys()], ids);
      for (const h of holders) problem(lineOfUnique.get(h.value)!, uniqueCsv, `${uniqueCsv} ${h.value} belongs to the stored ${t.noun} ${h.id}, which this file does not change`, 'duplicate', h.value);
      if (issues.length > 0) throw validationError(issues);

      const report: ImportReport = { lines: file.records.length, created: 0, updated: 0, unchanged: 0 };
      const now = ctx.clock.now();
      for (let i = 0; i < rows.length; i += BATCH) {
        const batch = rows.slice(i, i + BATCH).map((r) => r.values);
        const changed = await upsertRecords(tx, t, scope.groupId, batch, now);
        for (const c of changed) {
          if (c.inserted) report.created++;
          else report.updated++;
        }
      }
      report.unchanged = rows.length - report.created - report.updated;
      return report;
    });

  try {
    return await apply();
  } catch (err) {
    // A concurrent write took a unique value between the checks and the commit.
    if (violatedConstraint(err, '23505') === t.unique.constraint) throw errors.conflict('ImportConflict', `Another write changed the ${t.noun}s while the file was imported (${uniqueCsv} taken); send the file again`);
    throw err;
  }
}

/** The problems by line; the answer lists the first MAX_LISTED_ISSUES (platform/http/errors.ts). */
function validationError(issues: ValidationIssue[]): ValidationError {
  issues.sort((a, b) => (a.loc[1] as number) - (b.loc[1] as number));
  return new ValidationError(issues);
}

type CellResult = { value: unknown } | { error: { msg: string; type: string } };

function readCell(c: CsvColumn, raw: string, check: ReturnType<typeof Compile>): CellResult {
  const error = (msg: string, type: string): CellResult => ({ error: { msg, type } });
  if (raw === '') return c.required ? error('Field required', 'missing') : { value: c.cell === 'list' ? [] : null };
  let value: unknown = raw;
  if (c.cell === 'list') value = csvList(raw);
  else if (c.cell === 'boolean') {
    if (!/^(true|false)$/i.test(raw)) return error('Input should be True or False', 'bool_parsing');
    value = raw.toLowerCase() === 'true';
  } else if (c.cell === 'integer') {
    if (!/^-?[0-9]+$/.test(raw)) return error('Input should be a whole number', 'int_parsing');
    value = Number(raw);
  }
  if (!check.Check(value)) {
    const enumValues = (c.schema as { enum?: string[] }).enum;
    if (enumValues) return error(`Input should be one of: ${enumValues.join(', ')}`, 'enum');
    const first = check.Errors(value)[0];
    return error(`Input ${first?.message ?? 'is not valid'}`, 'value_error');
  }
  return { value: c.normalise ? c.normalise(value as string) : value };
}
