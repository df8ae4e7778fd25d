/**
 * GTFS import: a zip on disk → a new GTFS version of the group, in one transaction.
 *
 * Each file is inflated, parsed (csv-parse) and checked row by row as a stream, and its valid
 * rows go to the database by COPY while the next rows are parsed: memory holds the ids of the
 * small files and a counter per trip, never a file. The checks that need a whole large file
 * (duplicate keys of stop_times, shapes, calendar_dates) are left to their deferred primary
 * keys, tested once before commit. Any error rolls the transaction back: a refused or failed
 * import leaves nothing, and the published version is untouched.
 */
import { parse, CsvError } from 'csv-parse';
import type { AppContext } from '../../../platform/context.js';
import { MAX_CSV_COLUMNS, MAX_CSV_LINE_BYTES } from '../../../platform/csv.js';
import type { Tx } from '../../../platform/db/index.js';
import { copyLine } from '../../../platform/db/types.js';
import { objectId } from '../../../platform/ids.js';
import { requireGroup } from '../../groups/service.js';
import { analyzeTables, checkConstraintNow, copyVersionRows, selectDuplicateKeys } from '../queries/import.js';
import { insertVersion, updateVersionReport } from '../queries/versions.js';
import { publishIn } from '../service.js';
import { openGtfsArchive, type GtfsArchive } from './archive.js';
import { GTFS_FILES, GTFS_FILE_NAMES, newFeedState, type FeedState, type GtfsFile } from './files.js';
import type { GtfsImportResult } from '../schemas.js';
import { Problems, RowProblems } from './problems.js';

export interface ImportProgress {
  file: string;
  /** Uncompressed bytes read so far, over all files. */
  bytes: number;
  totalBytes: number;
  /** Rows read so far, over all files. */
  rows: number;
}

export interface ImportOptions {
  name?: string | undefined;
  importedBy?: string | null;
  /** Publish the version in the same transaction (CLI --publish). */
  publish?: boolean;
  onProgress?: (p: ImportProgress) => void;
}

export type ImportResult = GtfsImportResult;

/** Copy lines are sent in pieces of about this many characters. */
const COPY_CHUNK_CHARS = 1 << 20;

export async function importGtfs(
  ctx: AppContext,
  groupId: string,
  zipPath: string,
  o: ImportOptions = {},
): Promise<ImportResult> {
  const group = await requireGroup(ctx.db, groupId);
  const archive = await openGtfsArchive(zipPath, GTFS_FILE_NAMES, ctx.config.gtfs);
  try {
    const problems = new Problems(ctx.config.gtfs.maxListedProblems);
    if (archive.folder) problems.warning({ file: archive.folder, line: null, field: null, code: 'ignored_file', message: `the GTFS files are in the folder ${archive.folder} rather than at the root of the archive; they were read from there` });
    for (const name of archive.ignored) problems.warning({ file: name, line: null, field: null, code: 'ignored_file', message: `${name} is not a file this service imports; ignored` });
    for (const f of GTFS_FILES) {
      if (f.required && !archive.files.has(f.name)) problems.error({ file: f.name, line: null, field: null, code: 'missing_file', message: `${f.name} is required` });
    }
    if (!archive.files.has('calendar.txt') && !archive.files.has('calendar_dates.txt')) {
      problems.error({ file: 'calendar.txt', line: null, field: null, code: 'missing_file', message: 'calendar.txt or calendar_dates.txt is required (either, or both)' });
    }
    if (problems.errors.count > 0) throw problems.refusal();

    const now = ctx.clock.now();
    const gtfsId = objectId(now.getTime());
    const fallbackName = `GTFS ${now.toISOString().slice(0, 10)} ${gtfsId}`;
    const state = newFeedState();
    const counts: Record<string, number> = {};
    const reader = new FileReader(archive, o.onProgress);
    const rowPrefix = copyLine([groupId, gtfsId]).slice(0, -1) + ',';

    return await ctx.db.transaction(async (tx) => {
      await insertVersion(tx, groupId, gtfsId, fallbackName, now, o.importedBy ?? null);
      for (const file of GTFS_FILES) {
        if (!archive.files.has(file.name)) continue;
        const p = new RowProblems(file.name, problems);
        if (file.table === null) {
          await drain(reader.read(file, p, (row) => (file.row(row, p, state), null)));
          continue;
        }
        let loaded = 0;
        await copyVersionRows(tx, file.table, file.columns, reader.read(file, p, (row) => {
          const values = file.row(row, p, state);
          if (values === null) return null;
          loaded++;
          return rowPrefix + copyLine(values);
        }));
        counts[file.key] = loaded;
        if (file.deferredKey) await findDuplicates(tx, groupId, gtfsId, file, reader, problems);
        if (file.name === 'stop_times.txt') checkTripEnds(state, problems);
      }
      for (const tz of state.agencyTimezones) {
        if (tz !== group.timezone) problems.warning({ file: 'agency.txt', line: null, field: 'agency_timezone', code: 'time_zone', message: `agency_timezone ${tz} differs from the group time zone ${group.timezone}: service days are computed in ${group.timezone}`, value: tz });
      }
      if (problems.errors.count > 0) throw problems.refusal();
      // Fresh statistics: right after a bulk load the planner still thinks the tables are
      // nearly empty, and picks plans (nested scans of a whole version) that make the reads of
      // the trips of a date and of a trip's stop times a hundred times slower.
      await analyzeTables(tx, GTFS_FILES.filter((f) => f.table !== null && counts[f.key] !== undefined).map((f) => f.table!));

      const w = problems.warnings;
      const name = o.name?.trim() || state.feedInfo?.['feed_version'] || fallbackName;
      await updateVersionReport(tx, groupId, gtfsId, { name, counts, warnings: w.items, warningCount: w.count, feedInfo: state.feedInfo });
      const publishedAt = o.publish ? await publishIn(tx, ctx.clock.now(), groupId, gtfsId, o.importedBy ?? null) : null;
      return {
        gtfs_id: gtfsId,
        name,
        status: publishedAt ? 'published' : 'imported',
        imported_at: now.toISOString(),
        publication_date: publishedAt?.toISOString() ?? null,
        counts,
        warnings: w.items,
        warning_count: w.count,
        warning_counts: w.by_code as Record<string, number>,
      };
    });
  } finally {
    archive.close();
  }
}

/**
 * Reads the files of the archive row by row, with line numbers, and reports progress. Records
 * are handled synchronously as the parser produces them: one await per inflated chunk, not per
 * row (with millions of rows, per-row promises cost more than the parsing).
 */
class FileReader {
  private bytes = 0;
  private rowCount = 0;
  constructor(
    private readonly archive: GtfsArchive,
    private readonly onProgress: ((p: ImportProgress) => void) | undefined,
  ) {}

  /**
   * Hands each data row of `file`, projected on `file.fields` ('' for an absent column), to
   * `visit` with p.line set to its line; yields what the visits return (COPY lines) joined in
   * pieces of about COPY_CHUNK_CHARS.
   */
  async *read(file: GtfsFile, p: RowProblems, visit: (row: string[]) => string | null, report = true): AsyncGenerator<string> {
    // A record is bounded like every CSV input of the service (platform/csv.ts).
    const parser = parse({ bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: false, max_record_size: MAX_CSV_LINE_BYTES });
    // Set once a piece of the file holds a NUL byte: only then are the values searched for it.
    let nul = false;
    let indexes: number[] | null | undefined;
    // Records are counted rather than asked their line (csv-parse's info option halves its
    // speed); a quoted value spanning lines moves the count by its line breaks.
    let nextLine = 1;
    let parts: string[] = [];
    let size = 0;
    let failure: unknown;
    parser.on('data', (record: string[]) => {
      const line = nextLine;
      nextLine += 1 + lineBreaks(record);
      if (indexes === undefined) {
        indexes = this.header(file, record, p);
        return;
      }
      if (indexes === null || (record.length === 1 && record[0]!.trim() === '')) return;
      p.line = line;
      p.failed = false;
      const row = new Array<string>(indexes.length);
      for (let i = 0; i < indexes.length; i++) {
        const v = indexes[i]! < 0 ? '' : (record[indexes[i]!] ?? '');
        row[i] = v.length > 0 && (v.charCodeAt(0) <= 32 || v.charCodeAt(v.length - 1) <= 32) ? v.trim() : v;
      }
      if (nul) {
        // PostgreSQL text cannot hold NUL: the value is refused here, naming its line and field.
        const i = row.findIndex((v) => v.includes('\u0000'));
        if (i >= 0) return void p.error(file.fields[i]!.name, 'bad_value', 'the value contains a NUL character (\\u0000), which text cannot hold', row[i]!.replaceAll('\u0000', '\\u0000'));
      }
      if (report) this.rowCount++;
      const out = visit(row);
      if (out !== null) {
        parts.push(out);
        size += out.length;
      }
    });
    parser.on('error', (err) => (failure ??= err));
    const ended = new Promise<void>((resolve) => parser.once('end', resolve).once('error', () => resolve()));
    for await (const chunk of this.counted(file.name, report)) {
      nul ||= chunk.includes(0);
      parser.write(chunk);
      if (failure !== undefined || indexes === null) break;
      if (size >= COPY_CHUNK_CHARS) {
        yield parts.join('');
        parts = [];
        size = 0;
      }
    }
    if (failure === undefined && indexes !== null) {
      parser.end();
      await ended;
    } else {
      parser.destroy();
    }
    if (size > 0) yield parts.join('');
    if (failure !== undefined) {
      if (!(failure instanceof CsvError)) throw failure;
      p.line = (failure as CsvError & { lines?: number }).lines ?? nextLine;
      p.error(null, 'csv_syntax', `${failure.message}; the rest of the file is not read`);
    } else if (indexes === undefined) {
      this.empty(file, p);
    }
  }

  private header(file: GtfsFile, record: string[], p: RowProblems): number[] | null {
    p.line = 1;
    if (record.length > MAX_CSV_COLUMNS) {
      p.error(null, 'csv_syntax', `the header has ${record.length} columns; a line holds at most ${MAX_CSV_COLUMNS}`);
      return null;
    }
    const names = record.map((h) => h.trim());
    let complete = true;
    const indexes = file.fields.map((f) => {
      const i = names.indexOf(f.name);
      if (i < 0 && f.required) {
        p.error(f.name, 'missing_column', `the header of ${file.name} has no ${f.name} column`);
        complete = false;
      }
      return i;
    });
    return complete ? indexes : null;
  }

  private empty(file: GtfsFile, p: RowProblems) {
    if (file.required) p.ofFile('error', 'empty_file', `${file.name} is empty (it needs at least a header line)`);
    else p.ofFile('warning', 'ignored_file', `${file.name} is empty; ignored`);
  }

  private async *counted(name: string, report: boolean): AsyncGenerator<Buffer> {
    for await (const chunk of this.archive.read(name)) {
      if (report) {
        this.bytes += chunk.length;
        this.onProgress?.({ file: name, bytes: this.bytes, totalBytes: this.archive.totalBytes, rows: this.rowCount });
      }
      yield chunk;
    }
  }
}

/** Reads a file for its visits only. */
async function drain(text: AsyncIterable<string>) {
  for await (const _ of text);
}

function lineBreaks(record: readonly string[]): number {
  let n = 0;
  for (const v of record) {
    if (v.length === 0) continue;
    for (let i = v.indexOf('\n'); i !== -1; i = v.indexOf('\n', i + 1)) n++;
  }
  return n;
}

/**
 * The deferred primary key of a large file is checked now: if it holds, nothing else is done.
 * Otherwise the duplicate keys are listed by one query, and the file is read again to give the
 * lines where they appear.
 */
async function findDuplicates(tx: Tx, groupId: string, gtfsId: string, file: GtfsFile, reader: FileReader, problems: Problems) {
  const key = file.deferredKey!;
  const holds = await tx.savepoint(async (sp) => {
    await checkConstraintNow(sp, key.constraint);
    return true;
  }).catch((err: { code?: string }) => {
    if (err.code === '23505') return false;
    throw err;
  });
  if (holds) return;
  const dupes = await selectDuplicateKeys(tx, file.table!, key.columns, groupId, gtfsId);
  const wanted = new Map(dupes.map((d) => [key.columns.map((c) => String(d[c])).join('\u0000'), 0]));
  const p = new RowProblems(file.name, problems);
  const quiet = new RowProblems(file.name, new Problems(0));
  const visit = (row: string[]) => {
    const k = key.key(row);
    const first = wanted.get(k);
    if (first === undefined) return null;
    if (first === 0) {
      wanted.set(k, quiet.line);
      return null;
    }
    p.line = quiet.line;
    p.error(key.columns[0]!, 'duplicate_key', `${key.columns.map((c, i) => `${c} ${JSON.stringify(k.split('\u0000')[i])}`).join(' and ')} appears more than once (first on line ${first})`);
    return null;
  };
  await drain(reader.read(file, quiet, visit, false));
}

/** GTFS requires a time at the first and the last stop of a trip: the service day hangs on them. */
function checkTripEnds(s: FeedState, problems: Problems) {
  const p = new RowProblems('stop_times.txt', problems);
  for (const [tripId, t] of s.trips) {
    if (t.count === 0) continue;
    if (t.firstDeparture === null) {
      p.line = t.firstLine;
      p.error('departure_time', 'bad_time', `the first stop of trip ${JSON.stringify(tripId)} has no time`);
    }
    if (t.lastArrival === null) {
      p.line = t.lastLine;
      p.error('arrival_time', 'bad_time', `the last stop of trip ${JSON.stringify(tripId)} has no time`);
    }
  }
}
