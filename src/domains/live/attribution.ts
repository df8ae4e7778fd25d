/**
 * Who a device report is about, for the live stream: the duty open on the device at the item's
 * time (inclusive of its sign-off instant), with its driver, its vehicle and their teams. Without
 * such a duty, the device's own vehicle and team (as provisioned) stand in.
 *
 * Each instance caches the answer per device, loaded for a whole group in one query when its first
 * subscriber arrives: a hit needs the item's time inside the cached span. A sign-on or sign-off of
 * the device drops its entry (they travel on the same channel, before the reports that follow
 * them). After CACHE_MS an entry is still used while the group is read again in the background
 * (one query per group at a time), so team changes reach the stream and no report waits for it.
 */
import type { Queryable } from '../../platform/db/index.js';
import { deviceGap, devicesLatestDuty, dutyAt } from '../duties/attribution.js';

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

export class Attributions {
  private readonly cache = new Map<string, Entry>();
  private readonly refreshing = new Map<string, Promise<void>>();
  /** A counter of forget() calls, and when each device was last forgotten: a group read started earlier must not restore it. */
  private forgets = 0;
  private readonly forgottenAt = new Map<string, number>();

  constructor(
    private readonly db: Queryable,
    private readonly onError: (err: unknown) => void,
  ) {}

  forget(groupId: string, deviceId: string): void {
    const k = key(groupId, deviceId);
    this.cache.delete(k);
    this.forgottenAt.set(k, ++this.forgets);
  }

  async of(groupId: string, deviceId: string, at: Date, now: number): Promise<Attribution> {
    const k = key(groupId, deviceId);
    const t = at.getTime();
    const hit = this.cache.get(k);
    if (hit && hit.from <= t && (hit.until === null || t <= hit.until)) {
      if (hit.expires <= now) void this.warm(groupId, now).catch(this.onError);
      return hit.attribution;
    }
    const entry = await this.read(groupId, deviceId, at, now);
    this.cache.set(k, entry);
    return entry.attribution;
  }

  /** Loads every device of the group as it stands now (one query; one at a time per group). */
  warm(groupId: string, now: number): Promise<void> {
    let p = this.refreshing.get(groupId);
    if (!p) {
      p = this.readGroup(groupId, now).finally(() => this.refreshing.delete(groupId));
      this.refreshing.set(groupId, p);
    }
    return p;
  }

  private async readGroup(groupId: string, now: number): Promise<void> {
    const started = this.forgets;
    const rows = await devicesLatestDuty(this.db, groupId, new Date(now));
    const expires = now + CACHE_MS;
    for (const r of rows) {
      const k = key(groupId, r.device_id);
      if ((this.forgottenAt.get(k) ?? 0) > started) continue;
      const open = r.duty_id && !r.signed_off_at;
      // The latest duty if still open; else the device itself, from the end of its last duty on.
      const entry: Entry = open
        ? { attribution: { duty_id: r.duty_id!, driver_id: r.driver_id!, vehicle_id: r.vehicle_id!, teams: r.teams! }, from: r.signed_on_at!.getTime(), until: null, expires }
        : {
            attribution: { duty_id: null, driver_id: null, vehicle_id: r.device_vehicle_id, teams: r.device_teams },
            from: r.signed_off_at ? r.signed_off_at.getTime() + 1 : Number.NEGATIVE_INFINITY,
            until: null,
            expires,
          };
      this.cache.set(k, entry);
    }
    if (this.refreshing.size <= 1) this.forgottenAt.clear();
  }

  private async read(groupId: string, deviceId: string, at: Date, now: number): Promise<Entry> {
    const duty = await dutyAt(this.db, groupId, deviceId, at);
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
    const d = await deviceGap(this.db, groupId, deviceId, at);
    return {
      attribution: { duty_id: null, driver_id: null, vehicle_id: d?.vehicle_id ?? null, teams: d?.teams ?? [] },
      from: d?.gap_from ? d.gap_from.getTime() + 1 : Number.NEGATIVE_INFINITY,
      until: d?.gap_until ? d.gap_until.getTime() - 1 : null,
      expires,
    };
  }
}

const key = (groupId: string, deviceId: string) => `${groupId}\u0000${deviceId}`;
