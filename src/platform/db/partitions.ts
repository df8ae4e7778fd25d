/**
 * The partitions of the raw report tables (migration 0017): positions by UTC day, trip events and
 * passenger counts by UTC month. The maintainer creates them ahead (yesterday … today +
 * PARTITIONS_AHEAD_DAYS) at start and every `checkSeconds`, so a clock passing midnight or a
 * restart finds what it needs; ingest creates on demand the partition of an older report (a
 * device's backlog); expired day partitions of positions are dropped (POSITIONS_RETENTION_DAYS).
 *
 * Trip events and passenger counts are never dropped: with the trip runs they are what the
 * tracking of a trip and the exports are computed from (DESIGN.md §6: derived records and
 * exports' sources are kept). Their monthly partitions leave a later retention one DROP a month.
 *
 * All creations and drops of every instance take one advisory lock, so two instances never race.
 */
import type { Clock } from '../clock.js';
import type { Service } from '../lifecycle.js';
import { fail } from '../http/errors.js';
import type { Db, Queryable } from './types.js';

export type PartitionedTable = 'positions' | 'trip_events' | 'passenger_counts';

export const PARTITIONED: Readonly<Record<PartitionedTable, 'day' | 'month'>> = { positions: 'day', trip_events: 'month', passenger_counts: 'month' };

/** Partitions exist this many days ahead of the clock; reports dated later are refused (a device's clock gone wrong). */
export const PARTITIONS_AHEAD_DAYS = 7;

const LOCK = "SELECT pg_advisory_xact_lock(hashtext('transit-ops:partitions'))";
/** The lock a partition creation takes; a session holding it (a test) holds back every creation. */
export const PARTITION_LOCK_KEY = 'transit-ops:partitions';
/** How long making a partition on demand waits for its locks, in seconds. */
export const PARTITION_LOCK_TIMEOUT_SECONDS = 5;
/** The Retry-After of a 503 PartitionBusy, in seconds. */
export const PARTITION_RETRY_AFTER_SECONDS = 5;
/** SQLSTATE lock_not_available: lock_timeout expired. */
const LOCK_NOT_AVAILABLE = '55P03';
const DAY_MS = 86_400_000;

export interface PartitionSettings {
  /** Days positions are kept; 0: kept for ever. */
  positionsRetentionDays: number;
  /** The maintainer's period. */
  checkSeconds: number;
}

/** The name of the partition of `table` holding instant `at` (as transit_ops_ensure_partition names it). */
export function partitionName(table: PartitionedTable, at: Date): string {
  const iso = at.toISOString();
  return `${table}_p${PARTITIONED[table] === 'day' ? iso.slice(0, 10).replaceAll('-', '') : iso.slice(0, 7).replace('-', '')}`;
}

/**
 * Makes sure the partitions holding these instants exist (one short transaction when one is
 * missing). Making a partition locks its parent against every reader and writer: it waits at most
 * PARTITION_LOCK_TIMEOUT_SECONDS for a long reader (an export) or another instance's round, then
 * fails with 503 PartitionBusy and Retry-After (nothing stored; the device sends the batch again)
 * rather than stall the ingest of every device queued behind it. Partitions made ahead keep this
 * off the common path.
 */
export async function ensurePartitions(db: Db, wanted: readonly { table: PartitionedTable; at: Date }[], known: Set<string> = new Set()): Promise<void> {
  const set = known;
  const missing = new Map<string, { table: PartitionedTable; at: Date }>();
  for (const w of wanted) {
    const name = partitionName(w.table, w.at);
    if (!set.has(name)) missing.set(name, w);
  }
  if (missing.size === 0) return;
  try {
    await db.transaction(async (tx) => {
      await tx.query(`SET LOCAL lock_timeout = '${PARTITION_LOCK_TIMEOUT_SECONDS}s'`);
      await tx.query(LOCK);
      const all = [...missing.values()];
      await tx.query('SELECT transit_ops_ensure_partition(u.t, u.unit, u.at) FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS u(t, unit, at)', [
        all.map((w) => w.table), all.map((w) => PARTITIONED[w.table]), all.map((w) => w.at.toISOString()),
      ]);
    });
  } catch (err) {
    if ((err as { code?: unknown } | null)?.code === LOCK_NOT_AVAILABLE) {
      throw fail('PartitionBusy', `the partition for these reports could not be made within ${PARTITION_LOCK_TIMEOUT_SECONDS} s (a long reader or another instance holds the table); ` +
        `nothing was stored: send the batch again after Retry-After seconds`, { 'retry-after': String(PARTITION_RETRY_AFTER_SECONDS) });
    }
    throw err;
  }
  for (const name of missing.keys()) set.add(name);
}

export interface MaintenanceResult {
  created: string[];
  dropped: string[];
}

/** The partitions of a table, oldest first. */
export async function listPartitions(db: Queryable, table: PartitionedTable): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
     WHERE p.relname = $1 AND p.relnamespace = current_schema()::regnamespace ORDER BY c.relname`,
    [table],
  );
  return rows.map((r) => r.name);
}

/** End (exclusive) of a partition named by partitionName, or null for a name it does not make. */
function partitionEnd(table: PartitionedTable, name: string): Date | null {
  const m = new RegExp(`^${table}_p(\\d{4})(\\d{2})(\\d{2})?$`).exec(name);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]) - 1, m[3] === undefined ? undefined : Number(m[3])];
  return d === undefined ? new Date(Date.UTC(y, mo + 1, 1)) : new Date(Date.UTC(y, mo, d + 1));
}

/**
 * One round: the partitions from yesterday to PARTITIONS_AHEAD_DAYS ahead exist, and the day
 * partitions of positions entirely older than the retention are dropped. Instances take turns
 * (the lock). Neither the lock nor a drop waits more than 5 s (a drop waits for the readers of the
 * table, a long export): the round fails and is tried again next round rather than stall the
 * ingest queued behind it.
 */
export async function maintainPartitions(db: Db, clock: Clock, s: Pick<PartitionSettings, 'positionsRetentionDays'>, known: Set<string> = new Set()): Promise<MaintenanceResult> {
  const now = clock.now().getTime();
  return db.transaction(async (tx) => {
    await tx.query("SET LOCAL lock_timeout = '5s'");
    await tx.query(LOCK);
    const before = new Set<string>();
    const tables = Object.keys(PARTITIONED) as PartitionedTable[];
    for (const t of tables) for (const n of await listPartitions(tx, t)) before.add(n);
    const wanted: { table: PartitionedTable; at: Date }[] = [];
    for (const table of tables) for (let d = -1; d <= PARTITIONS_AHEAD_DAYS; d++) wanted.push({ table, at: new Date(now + d * DAY_MS) });
    const names = await tx.query<{ name: string }>(
      'SELECT DISTINCT transit_ops_ensure_partition(u.t, u.unit, u.at) AS name FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS u(t, unit, at)',
      [wanted.map((w) => w.table), wanted.map((w) => PARTITIONED[w.table]), wanted.map((w) => w.at.toISOString())],
    );
    const created = names.map((r) => r.name).filter((n) => !before.has(n)).sort();
    const dropped: string[] = [];
    if (s.positionsRetentionDays > 0) {
      const cutoff = now - s.positionsRetentionDays * DAY_MS;
      for (const name of [...before].filter((n) => n.startsWith('positions_p')).sort()) {
        const end = partitionEnd('positions', name);
        if (end && end.getTime() <= cutoff) {
          await tx.query(`DROP TABLE ${quote(name)}`);
          dropped.push(name);
        }
      }
    }
    return { created, dropped };
  }).then((r) => {
    const set = known;
    for (const n of r.created) set.add(n);
    for (const n of r.dropped) set.delete(n);
    return r;
  });
}

const quote = (name: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid partition name: ${name}`);
  return `"${name}"`;
};

/**
 * The partitions of an app (a service of buildApp): it runs maintainPartitions at start (the app is
 * ready once today's partitions exist) and every `checkSeconds`, and remembers the partitions known
 * to exist, so ingest asks the database only for a new one (ensure).
 */
export class Partitions implements Service {
  private readonly known = new Set<string>();
  private running: Promise<void> = Promise.resolve();
  private busy = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly o: { db: Db; clock: Clock; settings: PartitionSettings; onError: (err: unknown) => void; onRound?: (r: MaintenanceResult) => void }) {}

  /** Makes sure the partitions holding these instants exist (ensurePartitions). */
  ensure(wanted: readonly { table: PartitionedTable; at: Date }[]): Promise<void> {
    return ensurePartitions(this.o.db, wanted, this.known);
  }

  private round(): Promise<void> {
    this.busy = true;
    this.running = maintainPartitions(this.o.db, this.o.clock, this.o.settings, this.known)
      .then((r) => this.o.onRound?.(r), this.o.onError)
      .finally(() => (this.busy = false));
    return this.running;
  }

  /** The first round now (awaited), then one every checkSeconds. */
  async start(): Promise<void> {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (!this.busy) void this.round();
    }, this.o.settings.checkSeconds * 1000);
    this.timer.unref();
    await this.round();
  }

  /** Stops the loop and waits for a running round. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
