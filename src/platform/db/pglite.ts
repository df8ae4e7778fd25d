/** Embedded PostgreSQL (PGlite, WebAssembly): one connection, transactions serialised. */
import { mkdirSync } from 'node:fs';
import { PGlite, types, type Transaction } from '@electric-sql/pglite';
import { ChangeFeed } from './changes.js';
import { cursorStream } from './cursor.js';
import { Kept } from './kept.js';
import { copyColumns, copyText, quoteIdent, withSavepoint, type Db, type Tx } from './types.js';

const parsers = {
  [types.INT8]: (v: string) => Number(v),
  [types.NUMERIC]: (v: string) => Number(v),
  [types.DATE]: (v: string) => v,
};

/**
 * Opens (or creates) the database in dataDir. A new one starts as an empty cluster (PGlite runs
 * initdb, about 2 s), or as the copy of another's files (`from`, a dump of dumpDataDir): the test
 * suite opens each file's database from a migrated copy.
 */
export async function openPglite(dataDir: string, o: { from?: Blob } = {}): Promise<PgliteDb> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
  const pg = await PGlite.create(dataDir, { parsers, ...(o.from ? { loadDataDir: o.from } : {}) });
  return new PgliteDb(pg);
}

async function copyInto(run: (sql: string, blob: Blob) => Promise<unknown>, table: string, columns: readonly string[], chunks: AsyncIterable<string>) {
  // PGlite reads COPY input from a blob: feed it in pieces of a few MB so memory stays bounded.
  const sql = `COPY ${quoteIdent(table)} ${copyColumns(columns)} FROM '/dev/blob' WITH (FORMAT csv)`;
  let parts: string[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    parts.push(chunk);
    size += chunk.length;
    if (size >= 4_000_000) {
      await run(sql, new Blob(parts));
      parts = [];
      size = 0;
    }
  }
  if (size > 0) await run(sql, new Blob(parts));
}

/** Rows per FETCH of copyOut. */
const COPY_BATCH = 2000;

class PgliteTx implements Tx {
  private depth = 0;
  constructor(private readonly tx: Transaction) {}

  async query<R>(text: string, params: readonly unknown[] = []): Promise<R[]> {
    const r = await this.tx.query<R>(text, params as unknown[]);
    return r.rows;
  }

  async exec(script: string): Promise<void> {
    await this.tx.exec(script);
  }

  copyFrom(table: string, columns: readonly string[], chunks: AsyncIterable<string>): Promise<void> {
    return copyInto((sql, blob) => this.tx.query(sql, [], { blob }), table, columns, chunks);
  }

  savepoint<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return withSavepoint(this, ++this.depth, fn).finally(() => this.depth--);
  }
}

export class PgliteDb implements Db {
  readonly kind = 'pglite' as const;
  readonly changes: ChangeFeed = new ChangeFeed(this);
  readonly kept = new Kept();
  constructor(readonly pg: PGlite) {}

  async query<R>(text: string, params: readonly unknown[] = []): Promise<R[]> {
    const r = await this.pg.query<R>(text, params as unknown[]);
    return r.rows;
  }

  async exec(script: string): Promise<void> {
    await this.pg.exec(script);
  }

  copyFrom(table: string, columns: readonly string[], chunks: AsyncIterable<string>): Promise<void> {
    return this.transaction((tx) => tx.copyFrom(table, columns, chunks));
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.pg.transaction((tx) => fn(new PgliteTx(tx)));
  }

  stream<R>(text: string, params: readonly unknown[], batchSize = 5000): AsyncIterable<R[]> {
    // PGlite has one connection: other queries wait while a stream is open.
    return cursorStream<R>(
      (body) => this.pg.transaction(async (tx) => body(async <T>(sql: string, p: readonly unknown[] = []) => (await tx.query<T>(sql, p as unknown[])).rows)),
      text,
      params,
      batchSize,
    );
  }

  /**
   * PGlite's COPY TO returns the whole result at once, so COPY text is made from a cursor stream
   * instead: each column read as its type's text output (no parser), escaped as COPY escapes it.
   */
  async *copyOut(text: string, params: readonly unknown[]): AsyncIterable<string> {
    // Every result column's type read as text (described first: the transaction below holds the connection).
    const { resultFields } = await this.pg.describeQuery(text);
    const parsers = Object.fromEntries(resultFields.map((f) => [f.dataTypeID, (v: string) => v]));
    const rows = cursorStream<(string | null)[]>(
      (body) => this.pg.transaction(async (tx) => body(async <T>(sql: string, p: readonly unknown[] = []) => (await tx.query<T>(sql, p as unknown[], { rowMode: 'array', parsers })).rows)),
      text,
      params,
      COPY_BATCH,
    );
    for await (const batch of rows) {
      let chunk = '';
      for (const row of batch) chunk += row.map((v) => (v === null ? '\\N' : copyText(v))).join('\t') + '\n';
      yield chunk;
    }
  }

  /** One embedded connection that cannot drop: `onConnection` is never called. */
  async listen(channel: string, onMessage: (payload: string) => void, _onConnection?: (up: boolean) => void): Promise<() => Promise<void>> {
    const unlisten = await this.pg.listen(channel, onMessage);
    return async () => {
      if (!this.pg.closed) await unlisten();
    };
  }

  async notify(channel: string, payload: string | readonly string[]): Promise<void> {
    await this.pg.query('SELECT pg_notify($1, p) FROM json_array_elements_text($2::json) AS p', [channel, JSON.stringify(typeof payload === 'string' ? [payload] : payload)]);
  }

  /** A copy of the database's files (uncompressed tar), which openPglite(…, { from }) opens. */
  dump(): Promise<Blob> {
    return this.pg.dumpDataDir('none');
  }

  async close(): Promise<void> {
    if (!this.pg.closed) await this.pg.close();
  }
}
