/**
 * The report of an import: errors (fatal: the feed is refused) and warnings (the feed is
 * imported, the value is dropped or the row skipped, and it is said). Each names the file, the
 * line (the header is line 1), the field and the value. The first `max` of each are kept; the
 * totals and the count per code are always exact.
 */
import { fail, HttpError } from '../../../platform/http/errors.js';

export const PROBLEM_CODES = {
  missing_file: 'a required file is absent',
  empty_file: 'a file has no header line',
  missing_column: 'a required column is absent from the header',
  csv_syntax: 'the file is not well-formed CSV (the rest of the file is not read)',
  missing_value: 'a required value is empty',
  bad_value: 'a value is not of the expected type or range',
  bad_time: 'a time is not H:MM:SS, or departs before it arrives, or a trip lacks its first or last time',
  bad_date: 'a date is not a real YYYYMMDD date, or a range ends before it starts',
  duplicate_key: 'a key (an id, or trip and stop_sequence, …) appears more than once',
  unknown_reference: 'a row names an id its file of reference does not hold',
  ignored_file: 'a file of the archive is not imported',
  ignored_value: 'an optional value is invalid and was dropped',
  skipped_row: 'an optional row is invalid and was not imported',
  trip_without_stop_times: 'a trip has no stop times (it never runs)',
  time_zone: 'the agency time zone differs from the group time zone (service days use the group time zone)',
} as const;
export type ProblemCode = keyof typeof PROBLEM_CODES;

export interface Problem {
  file: string;
  /** Line in the file (1 = header); null for a problem of the whole file or archive. */
  line: number | null;
  field: string | null;
  code: ProblemCode;
  message: string;
  value?: string;
}

export interface ProblemList {
  items: Problem[];
  count: number;
  by_code: Partial<Record<ProblemCode, number>>;
}

export class Problems {
  readonly errors: ProblemList = { items: [], count: 0, by_code: {} };
  readonly warnings: ProblemList = { items: [], count: 0, by_code: {} };
  constructor(private readonly max: number) {}

  error(p: Problem) {
    this.add(this.errors, p);
  }

  warning(p: Problem) {
    this.add(this.warnings, p);
  }

  private add(list: ProblemList, p: Problem) {
    list.count++;
    list.by_code[p.code] = (list.by_code[p.code] ?? 0) + 1;
    if (list.items.length < this.max) list.items.push(p.value === undefined ? p : { ...p, value: p.value.slice(0, 200) });
  }

  /** 422 InvalidGtfsFeed, carrying the lists. */
  refusal(): HttpError {
    const e = this.errors;
    return fail('InvalidGtfsFeed', `The GTFS feed is refused: ${e.count} error${e.count === 1 ? '' : 's'} (${Object.entries(e.by_code).map(([c, n]) => `${c}: ${n}`).join(', ')})`, {}, {
      errors: e.items,
      error_count: e.count,
      error_counts: e.by_code,
      warnings: this.warnings.items,
      warning_count: this.warnings.count,
    });
  }
}

/** Where the row being checked is: the importer moves it along; file rules report through it. */
export class RowProblems {
  line = 0;
  /** Set when the current row had an error (the row is not loaded). */
  failed = false;
  constructor(readonly file: string, private readonly sink: Problems) {}

  error(field: string | null, code: ProblemCode, message: string, value?: string): null {
    this.failed = true;
    this.sink.error({ file: this.file, line: this.line, field, code, message, ...(value !== undefined ? { value } : {}) });
    return null;
  }

  warning(field: string | null, code: ProblemCode, message: string, value?: string): null {
    this.sink.warning({ file: this.file, line: this.line, field, code, message, ...(value !== undefined ? { value } : {}) });
    return null;
  }

  /** A problem of the whole file (no line). */
  ofFile(level: 'error' | 'warning', code: ProblemCode, message: string) {
    this.sink[level]({ file: this.file, line: null, field: null, code, message });
  }
}
