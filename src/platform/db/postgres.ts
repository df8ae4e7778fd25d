/** A PostgreSQL server through a connection pool (`DATABASE_URL`). */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { ChangeFeed } from './changes.js';
import { cursorStream } from './cursor.js';
import { Kept } from './kept.js';
import { parseTimestamptz, TIMESTAMPTZ } from './timestamps.js';
import { CHANGE_CHANNEL, copyColumns, quoteIdent, withLiterals, withSavepoint, type Db, type Tx } from './types.js';

const INT8 = 20;
const NUMERIC = 1700;
const DATE = 1082;

const typeParsers = {
  getTypeParser(oid: number, format?: string) {
    if (oid === INT8 || oid === NUMERIC) return (v: string) => Number(v);
    if (oid === DATE) return (v: string) => v;
    if (oid === TIMESTAMPTZ && format !== 'binary') return parseTimestamptz;
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

export interface PostgresOptions {
  connectionString: string;
  poolSize: number;
  /** Run every connection with this search_path (tests use a fresh schema per run). */
  schema?: string;
}

export async function openPostgres(o: PostgresOptions): Promise<Db> {
  const clientConfig: pg.ClientConfig = {
    connectionString: o.connectionString,
    types: typeParsers,
    // The change feed's triggers notify on this session setting (migration 0008): the channel
    // this Db listens to, prefixed with the schema like every channel.
    ...(o.schema ? { options: `-c search_path=${quoteIdent(o.schema)} -c transit_ops.change_channel=${`${o.schema}__${CHANGE_CHANNEL}`.replace(/[\\ ]/g, '\\$&')}` } : {}),
  };
  const pool = new pg.Pool({ ...clientConfig, max: o.poolSize, idleTimeoutMillis: 30_000 });
  // A client losing its connection must not crash the process: idle, the pool replaces it; checked
  // out, its query fails (the request answers 503 or the device retries) and the pool discards it.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  await pool.query('SELECT 1');
  return new PostgresDb(pool, clientConfig, o.schema);
}

/**
 * Queries with parameters run as named prepared statements: each connection parses and plans a
 * statement once, then reuses it (the SQL texts are fixed in the code, so their number is bounded).
 */
const names = new Map<string, string>();
function prepared(text: string, params: readonly unknown[]): pg.QueryConfig {
  if (params.length === 0) return { text };
  let name = names.get(text);
  if (name === undefined) {
    // Past the bound (SQL built from data, which this code base does not do), run unnamed.
    if (names.size >= 5000) return { text, values: params as unknown[] };
    name = `q${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
  }
  return { name, text, values: params as unknown[] };
}

async function copyInto(client: pg.PoolClient, table: string, columns: readonly string[], chunks: AsyncIterable<string>) {
  const sink = client.query(copyStreams.from(`COPY ${quoteIdent(table)} ${copyColumns(columns)} FROM STDIN WITH (FORMAT csv)`));
  await pipeline(Readable.from(chunks), sink);
}

class PostgresTx implements Tx {
  private depth = 0;
  constructor(private readonly client: pg.PoolClient) {}

  async query<R>(text: string, params: readonly unknown[] = []): Promise<R[]> {
    const r = await this.client.query(prepared(text, params));
    return r.rows as R[];
  }

  async exec(script: string): Promise<void> {
    await this.client.query(script);
  }

  copyFrom(table: string, columns: readonly string[], chunks: AsyncIterable<string>): Promise<void> {
    return copyInto(this.client, table, columns, chunks);
  }

  savepoint<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return withSavepoint(this, ++this.depth, fn).finally(() => this.depth--);
  }
}

interface Listener {
  client: pg.Client;
  handlers: Map<string, Set<(payload: string) => void>>;
  watchers: Set<(up: boolean) => void>;
}

class PostgresDb implements Db {
  readonly kind = 'postgres' as const;
  readonly changes: ChangeFeed = new ChangeFeed(this);
  readonly kept = new Kept();
  private listener: Promise<Listener> | undefined;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly clientConfig: pg.ClientConfig,
    private readonly schema: string | undefined,
  ) {}

  get reopen(): { connectionString: string; schema: string | undefined } {
    return { connectionString: this.clientConfig.connectionString!, schema: this.schema };
  }

  async query<R>(text: string, params: readonly unknown[] = []): Promise<R[]> {
    const r = await this.pool.query(prepared(text, params));
    return r.rows as R[];
  }

  async exec(script: string): Promise<void> {
    await this.pool.query(script);
  }

  copyFrom(table: string, columns: readonly string[], chunks: AsyncIterable<string>): Promise<void> {
    return this.transaction((tx) => tx.copyFrom(table, columns, chunks));
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.inTransaction('BEGIN', (client) => fn(new PostgresTx(client)));
  }

  /** BEGIN … COMMIT on a client of its own; ROLLBACK on failure (a client that cannot roll back is discarded). */
  private async inTransaction<T>(begin: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query(begin);
      try {
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw err;
      }
    } finally {
      client.release(broken);
    }
  }

  stream<R>(text: string, params: readonly unknown[], batchSize = 5000): AsyncIterable<R[]> {
    return cursorStream<R>(
      (body) => this.inTransaction('BEGIN READ ONLY', (client) => body(async <T>(sql: string, p: readonly unknown[] = []) => (await client.query(sql, p as unknown[])).rows as T[])),
      text,
      params,
      batchSize,
    );
  }

  /**
   * COPY (query) TO STDOUT on a client of its own, the parameters written in as literals. The
   * socket is read only as fast as the consumer takes chunks; a consumer that stops early
   * discards the client (the server sees the connection close and ends the COPY).
   */
  async *copyOut(text: string, params: readonly unknown[]): AsyncIterable<string> {
    const sql = `COPY (${withLiterals(text, params)}) TO STDOUT`;
    const client = await this.pool.connect();
    let done = false;
    try {
      const source = client.query(copyStreams.to(sql));
      // Decoded chunk by chunk (a UTF-8 character may span two); the text after the last line end
      // waits for the next chunk. Strings, not joined Buffers: garbage in V8's young generation
      // is cheaper than Buffers outside it, freed only by a full collection.
      const decoder = new StringDecoder('utf8');
      let rest = '';
      for await (const chunk of source as AsyncIterable<Buffer>) {
        const text = rest + decoder.write(chunk);
        const end = text.lastIndexOf('\n') + 1;
        rest = text.slice(end);
        if (end > 0) yield text.slice(0, end);
      }
      rest += decoder.end();
      if (rest) yield rest;
      done = true;
    } finally {
      client.release(!done);
    }
  }

  /** Channels are database-wide: prefix them with the schema so test runs never hear each other. */
  private channel(name: string): string {
    return this.schema ? `${this.schema}__${name}` : name;
  }

  private connectListener(): Promise<Listener> {
    this.listener ??= (async () => {
      const client = new pg.Client(this.clientConfig);
      const l: Listener = { client, handlers: new Map(), watchers: new Set() };
      client.on('notification', (msg) => {
        for (const h of l.handlers.get(msg.channel) ?? []) h(msg.payload ?? '');
      });
      client.on('error', () => {
        // The connection dropped: reconnect and subscribe again to every channel.
        this.listener = undefined;
        if (this.closed) return;
        for (const w of l.watchers) w(false);
        // Until it works again: a failed attempt (the server still down) tries again later.
        const attempt = (delay: number) =>
          setTimeout(() => {
            if (this.closed) return;
            void this.connectListener().then(async (fresh) => {
              for (const [channel, hs] of l.handlers) {
                fresh.handlers.set(channel, hs);
                await fresh.client.query(`LISTEN ${quoteIdent(channel)}`);
              }
              for (const w of l.watchers) fresh.watchers.add(w);
              for (const w of fresh.watchers) w(true);
            }).catch(() => {
              this.listener = undefined;
              attempt(Math.min(delay * 2, 10_000));
            });
          }, delay);
        attempt(500);
      });
      await client.connect();
      return l;
    })();
    return this.listener;
  }

  async listen(channel: string, onMessage: (payload: string) => void, onConnection?: (up: boolean) => void): Promise<() => Promise<void>> {
    const name = this.channel(channel);
    const l = await this.connectListener();
    if (onConnection) l.watchers.add(onConnection);
    let hs = l.handlers.get(name);
    if (!hs) {
      hs = new Set();
      l.handlers.set(name, hs);
      await l.client.query(`LISTEN ${quoteIdent(name)}`);
    }
    hs.add(onMessage);
    return async () => {
      hs.delete(onMessage);
      if (onConnection) l.watchers.delete(onConnection);
      if (hs.size === 0 && l.handlers.get(name) === hs) {
        l.handlers.delete(name);
        if (!this.closed) await l.client.query(`UNLISTEN ${quoteIdent(name)}`).catch(() => {});
      }
    };
  }

  async notify(channel: string, payload: string | readonly string[]): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, p) FROM json_array_elements_text($2::json) AS p', [this.channel(channel), JSON.stringify(typeof payload === 'string' ? [payload] : payload)]);
  }

  async close(): Promise<void> {
    this.closed = true;
    const l = this.listener;
    this.listener = undefined;
    if (l) await (await l.catch(() => undefined))?.client.end().catch(() => {});
    await this.pool.end();
  }
}
