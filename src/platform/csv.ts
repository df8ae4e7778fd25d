/**
 * The one CSV writer and reader of the exports and imports: `;` separator, CRLF line ends and
 * RFC 4180 quoting (a cell holding `;`, `"`, CR or LF is quoted, quotes doubled), UTF-8, a
 * header line, an empty value as an empty cell.
 *
 * Cell values: null/undefined → empty; booleans → True/False; numbers as written by JavaScript
 * (point decimal); dates → ISO 8601; arrays (team lists) → items joined by `,`.
 *
 * Formula neutralisation: a text cell starting with `=`, `+`, `-`, `@`, TAB or CR would run as a
 * formula in a spreadsheet; it is written with a leading `'` (OWASP's advice), and the reader
 * removes that `'` again, so export → import → export gives the same bytes. Numbers are never
 * changed (a negative delay stays -42).
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { parse } from 'csv-parse';
import { nextTurn } from './slices.js';

export const CSV_DELIMITER = ';';
export const LIST_SEPARATOR = ',';
const FORMULA_START = /^[=+\-@\t\r]/;

/** A number written with a decimal comma (the PCS-CNT coordinates); a number, so never neutralised. */
export class DecimalComma {
  constructor(readonly value: number) {}
}

export type CsvValue = string | number | boolean | Date | DecimalComma | null | undefined | readonly string[];

/**
 * Rows to write, in batches: rows of cells, or records already written as text (csvText and csvDecimalComma for the cells, CSV_DELIMITER
 * between them, CRLF after each record), for exports of millions of rows.
 */
export type CsvBatches = AsyncIterable<Iterable<readonly CsvValue[]> | string> | Iterable<Iterable<readonly CsvValue[]> | string>;

export function csvCell(v: CsvValue): string {
  if (typeof v === 'string') return neutralise(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  if (v === null || v === undefined) return '';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v instanceof Date) return v.toISOString();
  if (v instanceof DecimalComma) return csvDecimalComma(v.value);
  return neutralise(v.join(LIST_SEPARATOR));
}

function neutralise(s: string): string {
  // The characters of FORMULA_START, tested by code: this runs for every text cell of an export.
  const c = s.charCodeAt(0);
  return c === 61 || c === 43 || c === 45 || c === 64 || c === 9 || c === 13 ? `'${s}` : s;
}

/** The reader's inverse of the neutralisation. */
export function unneutralise(s: string): string {
  return s.length > 1 && s[0] === "'" && FORMULA_START.test(s.slice(1)) ? s.slice(1) : s;
}

/** A text cell as written in the file (csvCell then quoting, as csvRecord writes it); null → empty. */
export function csvText(s: string | null): string {
  return s === null ? '' : field(neutralise(s));
}

/** A number cell with a decimal comma, as csvRecord writes a DecimalComma. */
export function csvDecimalComma(n: number): string {
  return Number.isFinite(n) ? String(n).replace('.', ',') : '';
}

/** Text as written in the file: quoted when it holds `;`, `"`, CR or LF, its quotes doubled. */
function field(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 59 || c === 34 || c === 13 || c === 10) return `"${text.replaceAll('"', '""')}"`;
  }
  return text;
}

/** One CSV record, ended by CRLF. */
export function csvRecord(row: readonly CsvValue[]): string {
  let line = '';
  for (let i = 0; i < row.length; i++) {
    const v = row[i];
    if (i > 0) line += CSV_DELIMITER;
    // A number's text (digits, `.`, `-`, `e`, `+`, or `,` for a DecimalComma) never needs quotes.
    line += typeof v === 'number' || v instanceof DecimalComma ? csvCell(v) : field(csvCell(v));
  }
  return line + '\r\n';
}

/** Size of the pieces of text handed to the stream. */
const PIECE = 64 * 1024;

/**
 * Streams rows as CSV text (header first), for an HTTP answer or a file. Records are joined into
 * pieces of about 64 KB (short-lived strings: a whole batch joined in one string would keep
 * hundreds of thousands of fragments alive until written), and the next piece is made only when
 * the reader has taken the previous ones, so a slow client makes the producer wait, not memory
 * grow: memory holds the batch being written.
 */
export function csvStream(header: readonly string[], rows: CsvBatches): Readable {
  async function* pieces() {
    let text = header.map(field).join(CSV_DELIMITER) + '\r\n';
    for await (const batch of rows as AsyncIterable<Iterable<readonly CsvValue[]> | string>) {
      if (typeof batch === 'string') {
        text += batch;
        if (text.length >= PIECE) {
          yield text;
          text = '';
        }
        continue;
      }
      for (const row of batch) {
        text += csvRecord(row);
        if (text.length >= PIECE) {
          yield text;
          text = '';
        }
      }
    }
    yield text;
  }
  return Readable.from(pieces(), { objectMode: false, highWaterMark: PIECE });
}

/** Sends a CSV answer, streamed: memory holds one batch of rows whatever the size. */
export function sendCsv(reply: FastifyReply, filename: string, header: readonly string[], rows: CsvBatches) {
  reply.header('content-type', 'text/csv; charset=utf-8');
  reply.header('content-disposition', `attachment; filename="${filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`);
  return reply.send(csvStream(header, rows));
}

export interface CsvRecord {
  /** 1-based line number in the file of the record (the header is line 1). */
  line: number;
  values: Record<string, string>;
}

/**
 * Bounds of every CSV input (issue #15: a header of 1,000,000 columns held the event loop for
 * seconds and answered a 174 MB 422). A line (and a record) holds at most MAX_CSV_LINE_BYTES
 * bytes and MAX_CSV_COLUMNS cells; the GTFS importer applies the same bounds to its files.
 */
export const MAX_CSV_LINE_BYTES = 64 * 1024;
export const MAX_CSV_COLUMNS = 1000;

/** Bytes handed to the parser at a time; other requests are served between pieces. */
const READ_PIECE = 16 * 1024;

export interface ReadCsvOptions {
  /** Records (lines after the header) beyond which the file is refused without reading on. */
  maxRecords?: number;
}

/**
 * Parses a CSV document written in the export format: header first, `;` separator. Throws a
 * CsvFormatError naming the line when the text is not well-formed CSV or passes a bound (line
 * length, columns, records). The text is parsed in pieces with a turn of the event loop
 * between them, so a large or hostile file never holds the other requests (GET /health…) for
 * longer than one piece takes.
 */
export async function readCsv(text: string | Buffer, o: ReadCsvOptions = {}): Promise<{ header: string[]; records: CsvRecord[] }> {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const maxRecords = o.maxRecords ?? Infinity;
  // Records are counted rather than asked their line (csv-parse's info option halves its speed),
  // as the GTFS importer does: a quoted value spanning lines moves the count by its line breaks.
  const parser = parse({ delimiter: CSV_DELIMITER, bom: true, relax_column_count: true, skip_empty_lines: false, max_record_size: MAX_CSV_LINE_BYTES });
  let header: string[] | undefined;
  const records: CsvRecord[] = [];
  let failure: CsvFormatError | undefined;
  let nextLine = 1;
  parser.on('data', (record: string[]) => {
    const line = nextLine;
    nextLine += 1 + lineBreaks(record);
    if (failure || (record.length === 1 && record[0] === '')) return;
    if (record.length > MAX_CSV_COLUMNS) {
      failure = new CsvFormatError(line, `${record.length} columns; a line holds at most ${MAX_CSV_COLUMNS}`);
      return;
    }
    if (!header) {
      header = record.map((h) => h.trim());
      return;
    }
    if (records.length >= maxRecords) {
      failure = new CsvFormatError(line, `more than ${maxRecords} lines after the header; a file holds at most ${maxRecords}`);
      return;
    }
    const values: Record<string, string> = {};
    header.forEach((h, i) => (values[h] = unneutralise(record[i] ?? '')));
    records.push({ line, values });
  });
  parser.on('error', (err: Error & { lines?: number; code?: string }) => {
    const tooLong = err.code === 'CSV_MAX_RECORD_SIZE';
    failure ??= new CsvFormatError(err.lines ?? 0, tooLong ? `the record is longer than ${MAX_CSV_LINE_BYTES} bytes, the most a CSV record may hold` : err.message);
  });
  const ended = new Promise<void>((resolve) => parser.once('end', resolve).once('error', () => resolve()));

  // Physical lines are measured before the parser sees them: a line of megabytes is refused
  // after one piece, not parsed.
  let line = 1;
  let lineStart = 0;
  for (let at = 0; at < bytes.length && !failure; at += READ_PIECE) {
    const piece = bytes.subarray(at, Math.min(at + READ_PIECE, bytes.length));
    for (let nl = piece.indexOf(10); nl !== -1 && !failure; nl = piece.indexOf(10, nl + 1)) {
      if (at + nl - lineStart > MAX_CSV_LINE_BYTES) failure = tooLongLine(line);
      line++;
      lineStart = at + nl + 1;
    }
    if (!failure && at + piece.length - lineStart > MAX_CSV_LINE_BYTES) failure = tooLongLine(line);
    if (failure) break;
    parser.write(piece);
    await nextTurn();
  }
  if (!failure) {
    parser.end();
    await ended;
  } else {
    parser.destroy();
  }
  if (failure) throw failure;
  return { header: header ?? [], records };
}

function lineBreaks(record: readonly string[]): number {
  let n = 0;
  for (const v of record) {
    for (let i = v.indexOf('\n'); i !== -1; i = v.indexOf('\n', i + 1)) n++;
  }
  return n;
}

const tooLongLine = (line: number) => new CsvFormatError(line, `the line is longer than ${MAX_CSV_LINE_BYTES} bytes, the most a CSV line may hold`);

/** Records checked between two turns of the event loop by the loops over a file's records. */
export const TURN_EVERY = 2000;

export class CsvFormatError extends Error {
  constructor(readonly line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.name = 'CsvFormatError';
  }
}

/** Splits a list cell (teams) written with LIST_SEPARATOR; empty cell → empty list. */
export function csvList(cell: string): string[] {
  return cell === '' ? [] : cell.split(LIST_SEPARATOR).map((s) => s.trim()).filter((s) => s !== '');
}
