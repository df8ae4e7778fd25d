/**
 * The change feed, seen from one instance: migration 0008 makes every table NOTIFY its name on
 * CHANGE_CHANNEL when a committed statement changed it. Caches of this instance ask for a Watch
 * over the tables they read; its `generation` moves whenever one of them changes, here or in any
 * other instance, so a cached value is valid while the generation it was read at is current.
 *
 * Conservative on doubt: until the listener is connected, and while it is down, `live` is false
 * (callers do not cache); a reconnection moves every generation (what was missed is unknown).
 * A write answered by this instance moves every generation before its answer leaves
 * (`touchAll`), so a client reading right after its own write never sees the old value, whatever
 * the notification's own delay.
 */
import type { Db } from './types.js';
import { CHANGE_CHANNEL } from './types.js';

/**
 * Tables without the trigger (migration 0009): written by every device report, a NOTIFY in their
 * transactions would serialize the commits. Whoever writes them calls `announce` after the commit.
 */
export const ANNOUNCED_TABLES = [
  'positions', 'trip_events', 'passenger_counts', 'trip_runs', 'vehicle_movements', 'device_sign_events', 'device_latest',
  'device_history_events', 'device_history_snapshots', 'trip_tracking_dirty',
] as const;
export type AnnouncedTable = (typeof ANNOUNCED_TABLES)[number];

/** Announcements of one instance are sent at most this often, all tables of the window in one. */
const ANNOUNCE_WINDOW_MS = 50;

export interface Watch {
  readonly generation: number;
}

interface WatchState extends Watch {
  generation: number;
  reads(table: string): boolean;
}

/** The change feed of a database handle (`db.changes`: one per Db, as its LISTEN connection is the Db's). */
export class ChangeFeed {
  private readonly watches: WatchState[] = [];
  private up = false;
  private listening = false;
  private starting: Promise<void> | undefined;

  constructor(private readonly db: Db) {}

  /** True while notifications are heard: only then may a value be cached. */
  get live(): boolean {
    // Listening once is enough: the Db reconnects by itself and tells us (onConnection).
    if (!this.listening && !this.starting) void this.start();
    return this.up;
  }

  /**
   * A watch over the tables a cache reads: `{ only }` names them, `{ except }` names the tables it
   * never reads (everything else counts). Watches are few and long-lived: make them once.
   */
  watch(tables: { only: readonly string[] } | { except: readonly string[] }): Watch {
    const set = new Set('only' in tables ? tables.only : tables.except);
    const only = 'only' in tables;
    const w: WatchState = { generation: 0, reads: (t) => set.has(t) === only };
    this.watches.push(w);
    return w;
  }

  /** Every cached value of this instance is stale (a write answered here, a lost connection). */
  touchAll(): void {
    for (const w of this.watches) w.generation++;
  }

  /**
   * This instance just committed a change to `tables` outside a write request (e.g. GET /logout):
   * its own caches drop what they read from them now, without waiting for the notification.
   */
  touch(...tables: string[]): void {
    for (const table of tables) for (const w of this.watches) if (w.reads(table)) w.generation++;
    for (const l of this.listeners) if (tables.some((t) => l.tables.has(t))) l.fn();
  }

  private readonly listeners: { tables: ReadonlySet<string>; fn: () => void }[] = [];

  /**
   * Calls `fn` after a change to one of `tables` (here or in another instance: after the caches
   * that read them have dropped their values) and after the listener reconnects (a change may have
   * been missed). For those who act on a change rather than read again later: the live stream
   * re-checks the standing of its open connections. Returns the unsubscription.
   */
  onChange(tables: readonly string[], fn: () => void): () => void {
    void this.live;
    const l = { tables: new Set(tables), fn };
    this.listeners.push(l);
    return () => {
      const i = this.listeners.indexOf(l);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  private changed(payload: string): void {
    this.touch(...payload.split(','));
  }

  private announced = new Set<string>();
  private announcing: NodeJS.Timeout | undefined;

  /**
   * A committed write to tables without the trigger: this instance's caches drop what they read
   * from them now, the other instances within ANNOUNCE_WINDOW_MS (one autocommit NOTIFY per
   * window, outside the writers' transactions). A failed announcement is lost; the caches' time to
   * live bounds what it costs.
   */
  announce(tables: readonly AnnouncedTable[]): void {
    this.touch(...tables);
    for (const t of tables) this.announced.add(t);
    this.announcing ??= setTimeout(() => {
      this.announcing = undefined;
      const payload = [...this.announced].join(',');
      this.announced.clear();
      this.db.notify(CHANGE_CHANNEL, payload).catch(() => {});
    }, ANNOUNCE_WINDOW_MS);
    this.announcing.unref();
  }

  /**
   * Starts listening (buildApp starts it with the app; a first use starts it too). A failure leaves
   * the feed not live (nothing cached) and the next use tries again.
   */
  async start(): Promise<void> {
    if (this.listening) return;
    if (this.starting) return this.starting;
    this.starting = this.listen();
    return this.starting;
  }

  private async listen(): Promise<void> {
    try {
      // Listens for the life of the Db (its close ends the listener).
      await this.db.listen(CHANGE_CHANNEL, (payload) => this.changed(payload), (up) => {
        this.up = up;
        this.touchAll();
        if (up) for (const l of this.listeners) l.fn();
      });
      this.listening = true;
      this.touchAll();
      this.up = true;
    } catch {
      // Not listening: nothing is cached; the next use tries again.
    } finally {
      this.starting = undefined;
    }
  }

}
