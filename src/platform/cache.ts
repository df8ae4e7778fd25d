/**
 * Instance-local caches kept consistent by the change feed (src/platform/db/changes.ts): a value
 * is served while none of the tables it was read from changed (in any instance), for at most its
 * time to live, and is never stored unless the feed is listening. The TTL only bounds how long a
 * value lives if a notification were lost; the feed is what keeps values exact.
 *
 * Times come from the service clock (ctx.clock), so a test that moves its clock moves the caches
 * too; a clock moved backwards expires everything.
 */
import { LRUCache } from 'lru-cache';
import { systemClock, type Clock } from './clock.js';
import type { ChangeFeed, Watch } from './db/changes.js';
import { isHandle, type Db, type Queryable } from './db/types.js';

interface Entry<V> {
  value: V;
  generation: number;
  from: number;
  until: number;
}

export class WatchedCache<V> {
  /** Bounded by `max`, the least recently used value leaving first. */
  private readonly entries: LRUCache<string, Entry<V>>;

  constructor(
    private readonly feed: ChangeFeed,
    private readonly watch: Watch,
    private readonly o: { ttlMs: number; max: number; clock: Clock },
  ) {
    this.entries = new LRUCache<string, Entry<V>>({ max: Math.max(1, o.max) });
  }

  /**
   * The cached value of `key` if no table it was read from changed since: `fresh` while within its
   * time to live (past it, the value is only as old as the TTL plus the time to read it again).
   */
  lookup(key: string): { value: V; fresh: boolean } | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.generation !== this.watch.generation || !this.feed.live) {
      this.entries.delete(key);
      return undefined;
    }
    const t = this.o.clock.now().getTime();
    return { value: e.value, fresh: t >= e.from && t < e.until };
  }

  /** The valid cached value of `key`, if any. */
  peek(key: string): V | undefined {
    const r = this.lookup(key);
    return r?.fresh ? r.value : undefined;
  }

  /** A ticket taken before reading the database: the value read after it may be stored with it. */
  ticket(): { generation: number; at: number } | undefined {
    if (this.o.ttlMs <= 0 || !this.feed.live) return undefined;
    return { generation: this.watch.generation, at: this.o.clock.now().getTime() };
  }

  /** Stores a value read after `ticket` was taken; a change since then makes it stale at once. */
  store(key: string, ticket: { generation: number; at: number } | undefined, value: V): void {
    if (!ticket || ticket.generation !== this.watch.generation) return;
    this.entries.set(key, { value, generation: ticket.generation, from: ticket.at, until: ticket.at + this.o.ttlMs });
  }

  /** The cached value of `key`, or the one `load` reads (and caches when it may). */
  async get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.peek(key);
    if (hit !== undefined) return hit;
    const ticket = this.ticket();
    const value = await load();
    this.store(key, ticket, value);
    return value;
  }
}

/**
 * A cache per database handle, made on first use: `tables` are what its values are read from
 * (see ChangeFeed.watch).
 */
export function cachePerDb<V>(tables: { only: readonly string[] } | { except: readonly string[] }, max = 10_000) {
  const caches = new WeakMap<Db, WatchedCache<V>>();
  return (db: Db, clock: Clock, ttlMs: number): WatchedCache<V> => {
    let c = caches.get(db);
    if (!c) {
      const feed = db.changes;
      c = new WatchedCache<V>(feed, feed.watch(tables), { ttlMs, max, clock });
      caches.set(db, c);
    }
    return c;
  };
}

/**
 * A read kept per database handle (cachePerDb) for values that do not move with time: `read(db,
 * key, load)` answers from the handle's cache while none of `tables` changed (the TTL only bounds
 * a lost notification), and calls `load` inside a transaction, which reads its own writes.
 */
export function readPerDb<V>(tables: { only: readonly string[] } | { except: readonly string[] }, ttlMs: number, max = 10_000) {
  const cacheOf = cachePerDb<V>(tables, max);
  return (db: Queryable, key: string, load: () => Promise<V>): Promise<V> => (isHandle(db) ? cacheOf(db, systemClock, ttlMs).get(key, load) : load());
}
