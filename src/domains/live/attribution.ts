/**
 * Who a device report is about, for the live stream: the duty open on the device at the item's
 * time (inclusive of its sign-off instant), with its driver, its vehicle and their teams. Without
 * such a duty, the device's own vehicle and team (as provisioned) stand in.
 *
 * Each instance caches the answer per device: a hit needs the item's time inside the cached span;
 * a sign-on or sign-off of the device drops its entry (they travel on the same channel, before the
 * reports that follow them), and entries expire after CACHE_MS so team changes reach the stream.
 */
import type { Queryable } from '../../platform/db/index.js';

export interface Attribution {
  duty_id: string | null;
  driver_id: string | null;
  vehicle_id: string | null;
  /** The teams of the driver and of the vehicle (or of the device when no duty is open). */
  teams: string[];
}

/** How long a cached attribution is trusted (team changes reach the stream within this time). */
export const CACHE_MS = 60_000;

interface Entry {
  attribution: Attribution;
  /** The span of event time it holds for: [from, until], until null = open. */
  from: number;
  until: number | null;
  expires: number;
}

interface DutyRow {
  duty_id: string;
  driver_id: string;
  vehicle_id: string;
  signed_on_at: Date;
  signed_off_at: Date | null;
  teams: string[];
}

export class Attributions {
  private readonly cache = new Map<string, Entry>();

  constructor(private readonly db: Queryable) {}

  forget(groupId: string, deviceId: string): void {
    this.cache.delete(`${groupId}\u0000${deviceId}`);
  }

  async of(groupId: string, deviceId: string, at: Date, now: number): Promise<Attribution> {
    const key = `${groupId}\u0000${deviceId}`;
    const t = at.getTime();
    const hit = this.cache.get(key);
    if (hit && hit.expires > now && hit.from <= t && (hit.until === null || t <= hit.until)) return hit.attribution;
    const entry = await this.read(groupId, deviceId, at, now);
    if (this.cache.size > 100_000) this.cache.clear();
    this.cache.set(key, entry);
    return entry.attribution;
  }

  private async read(groupId: string, deviceId: string, at: Date, now: number): Promise<Entry> {
    const duty = (await this.db.query<DutyRow>(
      `SELECT du.duty_id, du.driver_id, du.vehicle_id, du.signed_on_at, du.signed_off_at,
         ARRAY(SELECT DISTINCT t FROM (
           SELECT unnest(dr.teams) AS t FROM drivers dr WHERE dr.group_id = du.group_id AND dr.driver_id = du.driver_id
           UNION SELECT unnest(ve.teams) FROM vehicles ve WHERE ve.group_id = du.group_id AND ve.vehicle_id = du.vehicle_id) x ORDER BY t) AS teams
       FROM duties du
       WHERE du.group_id = $1 AND du.device_id = $2 AND du.signed_on_at <= $3 AND (du.signed_off_at IS NULL OR du.signed_off_at >= $3)
       ORDER BY du.signed_on_at DESC LIMIT 1`,
      [groupId, deviceId, at],
    ))[0];
    const expires = now + CACHE_MS;
    if (duty) {
      return {
        attribution: { duty_id: duty.duty_id, driver_id: duty.driver_id, vehicle_id: duty.vehicle_id, teams: duty.teams },
        from: duty.signed_on_at.getTime(),
        until: duty.signed_off_at?.getTime() ?? null,
        expires,
      };
    }
    // No duty at that time: the device as provisioned, for the gap between its duties.
    const rows = await this.db.query<{ vehicle_id: string | null; teams: string[]; gap_from: Date | null; gap_until: Date | null }>(
      `SELECT d.vehicle_id,
         ARRAY(SELECT DISTINCT t FROM (
           SELECT d.team_id AS t WHERE d.team_id IS NOT NULL
           UNION SELECT unnest(ve.teams) FROM vehicles ve WHERE ve.group_id = d.group_id AND ve.vehicle_id = d.vehicle_id) x ORDER BY t) AS teams,
         (SELECT max(du.signed_off_at) FROM duties du WHERE du.group_id = d.group_id AND du.device_id = d.device_id AND du.signed_off_at < $3) AS gap_from,
         (SELECT min(du.signed_on_at) FROM duties du WHERE du.group_id = d.group_id AND du.device_id = d.device_id AND du.signed_on_at > $3) AS gap_until
       FROM devices d WHERE d.group_id = $1 AND d.device_id = $2`,
      [groupId, deviceId, at],
    );
    const d = rows[0];
    return {
      attribution: { duty_id: null, driver_id: null, vehicle_id: d?.vehicle_id ?? null, teams: d?.teams ?? [] },
      from: d?.gap_from ? d.gap_from.getTime() + 1 : Number.NEGATIVE_INFINITY,
      until: d?.gap_until ? d.gap_until.getTime() - 1 : null,
      expires,
    };
  }
}
