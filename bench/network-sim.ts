/**
 * The simulator proper (src/domains/simulate, issue #16 §1) as bench:network's load: one vehicle
 * per block running at the start (the number counted from the published timetable, so the
 * simulator's own ordering, running blocks first, picks exactly those), provisioned through the
 * API, then driven in real time on the bench's clock. Its start sends each vehicle's morning so
 * far (its backlog, thinned to a position a minute past 10 minutes) before the measured run.
 */
import pg from 'pg';
import { NetworkSimulator } from '../src/domains/simulate/simulator.js';
import type { BatchSeen, LoadSource, PrepareOptions } from './network-replay.js';
import { senderThread } from './sender.js';

export class SimulatorLoad implements LoadSource {
  readonly name = 'NetworkSimulator (src/domains/simulate/simulator.ts)';
  vehicles = 0;
  private sim: NetworkSimulator | null = null;
  private sender: ReturnType<typeof senderThread> | null = null;
  private o!: PrepareOptions;

  get failures() {
    return this.sim?.stats.failedRequests ?? 0;
  }

  /** Counts the blocks running at the peak (the simulator is built at run time, on the run's clock). */
  async prepare(o: PrepareOptions): Promise<void> {
    this.o = o;
    const db = new pg.Client({ connectionString: o.databaseUrl });
    await db.connect();
    try {
      const { rows: [r] } = await db.query<{ blocks: number; trips: number }>(
        `WITH v AS (SELECT p.gtfs_id FROM gtfs_publications p WHERE p.group_id = $1 ORDER BY p.published_at DESC LIMIT 1),
              day AS (SELECT extract(epoch FROM (($2::date + time '12:00') AT TIME ZONE g.timezone))::float8 - 43200 AS start FROM groups g WHERE g.group_id = $1),
              active AS (
                SELECT c.service_id FROM gtfs_calendars c, v WHERE c.group_id = $1 AND c.gtfs_id = v.gtfs_id AND $2::date BETWEEN c.start_date AND c.end_date
                  AND (ARRAY[c.monday, c.tuesday, c.wednesday, c.thursday, c.friday, c.saturday, c.sunday])[extract(isodow FROM $2::date)::int]
                  AND NOT EXISTS (SELECT 1 FROM gtfs_calendar_dates d WHERE d.group_id = $1 AND d.gtfs_id = v.gtfs_id AND d.service_id = c.service_id AND d.date = $2::date AND d.exception_type = 2)
                UNION
                SELECT d.service_id FROM gtfs_calendar_dates d, v WHERE d.group_id = $1 AND d.gtfs_id = v.gtfs_id AND d.date = $2::date AND d.exception_type = 1),
              blocks AS (
                SELECT coalesce(t.block_id, 'trip:' || t.trip_id) AS block, min(t.first_departure) - 1200 AS from_s, max(t.last_arrival) AS to_s, count(*) AS trips
                FROM gtfs_trips t, v WHERE t.group_id = $1 AND t.gtfs_id = v.gtfs_id AND t.service_id IN (SELECT service_id FROM active) GROUP BY 1)
         SELECT count(*)::int AS blocks, coalesce(sum(trips), 0)::int AS trips FROM blocks, day
         WHERE from_s <= ($3::float8 / 1000 - day.start) AND to_s >= ($3::float8 / 1000 - day.start)`,
        [o.groupId, o.date, o.peak]);
      this.vehicles = Math.min(r!.blocks, o.maxVehicles);
      o.log(`simulator: ${r!.blocks} blocks (${r!.trips} trips) running at the peak on ${o.date}; ${this.vehicles} vehicles`);
    } finally {
      await db.end();
    }
  }

  setBaseUrl(url: string) {
    this.o = { ...this.o, baseUrl: url };
  }

  activeVehicles(): number {
    return this.sim?.stats.vehicles ?? 0;
  }

  /** Provisions and sends the backlog (start), then runs until keepGoing() turns false. */
  async start(now: () => number, onBatch: (b: BatchSeen) => void): Promise<void> {
    this.sender = senderThread(this.o.baseUrl, this.o.groupId);
    this.sim = new NetworkSimulator({
      baseUrl: this.o.baseUrl, groupId: this.o.groupId, adminAuth: this.o.admin, provision: true, vehicles: this.vehicles,
      period: this.o.periodS, now: () => new Date(now()), log: this.o.log, concurrency: 32, post: this.sender.post,
    });
    this.sim.onBatch((e) => onBatch({
      deviceId: e.deviceId, vehicleId: e.vehicleId, items: e.items as BatchSeen['items'], accepted: e.accepted, sentAt: e.sentAt, answeredAt: e.answeredAt, seenAt: e.seenAt,
    }));
    await this.sim.start();
  }

  async run(_now: () => number, _onBatch: (b: BatchSeen) => void, keepGoing: () => boolean): Promise<void> {
    this.sim!.run();
    while (keepGoing()) await new Promise((r) => setTimeout(r, 200));
    await this.sim!.stop();
    await this.sender?.close();
  }
}
