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
 * Parses a CSV document written in the export format: header first, `;` separator. Throws a
 * CsvFormatError naming the line when the text is not well-formed CSV.
 */
export async function readCsv(text: string | Buffer): Promise<{ header: string[]; records: CsvRecord[] }> {
  const parser = parse(text, { delimiter: CSV_DELIMITER, bom: true, relax_column_count: true, skip_empty_lines: true, info: true });
  let header: string[] | undefined;
  const records: CsvRecord[] = [];
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (!header) {
        header = record.map((h) => h.trim());
        continue;
      }
      const values: Record<string, string> = {};
      header.forEach((h, i) => (values[h] = unneutralise(record[i] ?? '')));
      records.push({ line: info.lines, values });
    }
  } catch (err) {
    const e = err as { lines?: number; message: string };
    throw new CsvFormatError(e.lines ?? 0, e.message);
  }
  return { header: header ?? [], records };
}

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
