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
import { stringify } from 'csv-stringify';

export const CSV_DELIMITER = ';';
export const LIST_SEPARATOR = ',';
const FORMULA_START = /^[=+\-@\t\r]/;

/** A number written with a decimal comma (the PCS-CNT coordinates); a number, so never neutralised. */
export class DecimalComma {
  constructor(readonly value: number) {}
}

export type CsvValue = string | number | boolean | Date | DecimalComma | null | undefined | readonly string[];

export function csvCell(v: CsvValue): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  if (v instanceof Date) return v.toISOString();
  if (v instanceof DecimalComma) return Number.isFinite(v.value) ? String(v.value).replace('.', ',') : '';
  if (Array.isArray(v)) return neutralise(v.join(LIST_SEPARATOR));
  return neutralise(v as string);
}

function neutralise(s: string): string {
  return FORMULA_START.test(s) ? `'${s}` : s;
}

/** The reader's inverse of the neutralisation. */
export function unneutralise(s: string): string {
  return s.length > 1 && s[0] === "'" && FORMULA_START.test(s.slice(1)) ? s.slice(1) : s;
}

/** Streams rows as CSV text (header first), for an HTTP answer or a file. */
export function csvStream(header: readonly string[], rows: AsyncIterable<readonly CsvValue[][]> | Iterable<readonly CsvValue[][]>): Readable {
  const stringifier = stringify({ delimiter: CSV_DELIMITER, record_delimiter: '\r\n', quoted_match: /[;"\r\n]/, quoted_empty: false, eof: true });
  async function* records() {
    yield [...header];
    for await (const batch of rows as AsyncIterable<readonly CsvValue[][]>) {
      for (const row of batch) yield row.map(csvCell);
    }
  }
  return Readable.from(records()).pipe(stringifier);
}

/** Sends a CSV answer, streamed: memory holds one batch of rows whatever the size. */
export function sendCsv(reply: FastifyReply, filename: string, header: readonly string[], rows: AsyncIterable<readonly CsvValue[][]> | Iterable<readonly CsvValue[][]>) {
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
