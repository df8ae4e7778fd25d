/**
 * One database interface over two engines: a PostgreSQL server through a pool, or embedded
 * PGlite. Same SQL, same migrations. Values always travel as parameters, never in the text
 * (COPY … TO STDOUT, which takes no parameters, is the one exception: see sqlLiteral).
 *
 * Types are normalised on both engines: int8 and numeric → number, date → 'YYYY-MM-DD' string,
 * timestamptz → Date, json/jsonb → parsed value, arrays → arrays.
 */
import type { ChangeFeed } from './changes.js';
import type { Kept } from './kept.js';

export type Row = Record<string, unknown>;

export interface Queryable {
  query<R = Row>(text: string, params?: readonly unknown[]): Promise<R[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
  /**
   * Bulk load with COPY FROM in CSV format (comma, double-quote quoting, empty unquoted = NULL).
   * `chunks` is CSV text without a header, in pieces; it is consumed lazily.
   */
  copyFrom(table: string, columns: readonly string[], chunks: AsyncIterable<string>): Promise<void>;
}

export interface Tx extends Queryable {
  /** Runs fn inside a savepoint: a failure rolls back only what fn did. */
  savepoint<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** What this instance hears of committed changes (changes.ts): one per handle, ended by close(). */
  readonly changes: ChangeFeed;
  /** What the code keeps for the life of this handle (kept.ts): memos of what it read, work under way on it. */
  readonly kept: Kept;
  /**
   * How another thread of this process opens the same database (PostgreSQL: its connection string
   * and schema; the feeds' worker thread, feed-thread.ts). Undefined on the embedded engine, whose
   * database lives in this thread's memory.
   */
  readonly reopen?: { connectionString: string; schema: string | undefined };
  /** One transaction: committed when fn resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Reads a large result in batches through a server-side cursor, so memory stays flat
   * whatever the size. Runs in a read-only transaction of its own.
   */
  stream<R = Row>(text: string, params: readonly unknown[], batchSize?: number): AsyncIterable<R[]>;
  /**
   * Reads a large result as PostgreSQL's COPY text (one line per row ended by LF, columns
   * separated by TAB, NULL as `\N`, and `\\`, `\t`, `\n`, `\r`… escapes in values: see
   * copyText), in chunks of whole lines, each produced only when the consumer asks for it, so
   * memory stays flat. Cheaper per row than stream() on PostgreSQL (COPY skips the row protocol
   * and pg's per-field parsing). Values come as their type's text output: select text, integers,
   * booleans, floats and arrays (not dates or timestamps, whose text depends on DateStyle).
   */
  copyOut(text: string, params: readonly unknown[]): AsyncIterable<string>;
  /**
   * Subscribes to a notification channel; returns the unsubscribe function. `onConnection` hears
   * the listening connection drop (false: notifications may be missed from now on) and come back
   * (true: listening again; what was sent in between is lost).
   */
  listen(channel: string, onMessage: (payload: string) => void, onConnection?: (up: boolean) => void): Promise<() => Promise<void>>;
  /** Sends one notification per payload (several in one round trip). */
  notify(channel: string, payload: string | readonly string[]): Promise<void>;
  close(): Promise<void>;
}

export function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid SQL identifier: ${name}`);
  return `"${name}"`;
}

export function copyColumns(columns: readonly string[]): string {
  return `(${columns.map(quoteIdent).join(', ')})`;
}

/**
 * A value for a CSV line read by COPY … (FORMAT csv): null → empty unquoted field; a text is
 * quoted only when it must be (empty, or holding a quote, comma or line break, or `\.`), which
 * keeps bulk loads of millions of rows cheap.
 */
export function copyField(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return String(v);
  const s = typeof v === 'string' ? v : v instanceof Date ? v.toISOString() : Array.isArray(v) ? pgArrayLiteral(v) : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return s === '' || s === '\\.' || NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const NEEDS_QUOTES = /[",\r\n]/;

function pgArrayLiteral(values: unknown[]): string {
  return `{${values.map((v) => (v === null ? 'NULL' : `"${String(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`)).join(',')}}`;
}

export function copyLine(values: readonly unknown[]): string {
  return values.map(copyField).join(',') + '\n';
}

/** A value in COPY text format (a column of a line of copyOut): backslash, TAB, LF and CR escaped. */
export function copyText(v: string): string {
  return COPY_ESCAPED.test(v) ? v.replace(COPY_ESCAPES, (c) => COPY_ESCAPE[c]!) : v;
}

/** The inverse of copyText (and of PostgreSQL's escapes, octal and hex ones included). */
export function uncopyText(v: string): string {
  return v.indexOf('\\') < 0 ? v : v.replace(/\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|(.))/g, (_, octal?: string, hex?: string, c?: string) =>
    octal !== undefined ? String.fromCharCode(parseInt(octal, 8) & 0xff) : hex !== undefined ? String.fromCharCode(parseInt(hex, 16)) : (COPY_UNESCAPE[c!] ?? c!));
}

const COPY_ESCAPED = /[\\\t\n\r\b\f\v]/;
const COPY_ESCAPES = /[\\\t\n\r\b\f\v]/g;
const COPY_ESCAPE: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\b': '\\b', '\f': '\\f', '\v': '\\v' };
const COPY_UNESCAPE: Record<string, string> = { t: '\t', n: '\n', r: '\r', b: '\b', f: '\f', v: '\v' };

/**
 * A value as an SQL literal, for the one statement that takes no parameters (COPY … TO STDOUT):
 * texts as E'…' with quotes and backslashes doubled (whatever standard_conforming_strings says),
 * finite numbers, booleans, null, and arrays of those (ARRAY[…], to be cast by the statement).
 */
export function sqlLiteral(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'string') {
    if (v.includes('\0')) throw new Error('a text holding NUL cannot be an SQL literal');
    return `E'${v.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
  }
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`not a finite number: ${v}`);
    // In brackets: a negative number after a minus would otherwise start a comment (`--`).
    return `(${String(v)})`;
  }
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (Array.isArray(v)) return `ARRAY[${v.map(sqlLiteral).join(', ')}]`;
  throw new Error(`no SQL literal for a ${typeof v}`);
}

/** A statement with its parameters $1… written in as literals (see sqlLiteral); `$n` must occur only as parameters. */
export function withLiterals(text: string, params: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const i = Number(n) - 1;
    if (i >= params.length) throw new Error(`no parameter $${n}`);
    return sqlLiteral(params[i]);
  });
}

/** The constraint a statement violated (23505 unique, 23503 foreign key), on both engines; else null. */
export function violatedConstraint(err: unknown, code: '23505' | '23503'): string | null {
  const e = err as { code?: unknown; constraint?: unknown } | null;
  return e && e.code === code && typeof e.constraint === 'string' ? e.constraint : null;
}

/** SAVEPOINT … RELEASE, or ROLLBACK TO on failure: the part of a transaction both engines share. */
export async function withSavepoint<T>(tx: Tx, depth: number, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const name = `sp_${depth}`;
  await tx.query(`SAVEPOINT ${name}`);
  try {
    const result = await fn(tx);
    await tx.query(`RELEASE SAVEPOINT ${name}`);
    return result;
  } catch (err) {
    await tx.query(`ROLLBACK TO SAVEPOINT ${name}`);
    throw err;
  }
}

/** The channel of the change feed (migration 0008, src/platform/db/changes.ts). */
export const CHANGE_CHANNEL = 'data_changes';

/** A database handle, not a transaction: a transaction reads its own writes, never through a cache. */
export function isHandle(db: Queryable): db is Db {
  return 'changes' in db && 'kept' in db;
}
