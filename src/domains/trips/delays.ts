/**
 * The delays trip tracking observed, for the whole network in one query: what the passenger feeds
 * publish. The same facts trackingOf gives per trip (delay_seconds at delay_stop_sequence, with
 * the time that stop was passed), read set-based and bounded to trips still running, so the
 * feeds' rebuild never reads the finished trips of a day (nor of past days).
 */
import type { Db } from '../../platform/db/index.js';
import { formatGtfsTime } from '../gtfs/time.js';
import { selectDelays } from './queries/tracking.js';
import { refreshDirty } from './tracking.js';

export interface TripDelay {
  service_date: string;
  trip_id: string;
  /** HH:MM:SS of the instance the reports named (frequency trips), else null. */
  start_time: string | null;
  /** Seconds, positive when late: at the last stop passed. */
  delay_seconds: number;
  stop_sequence: number;
  stop_id: string;
  /** When the vehicle passed that stop. */
  passed_at: Date;
}

/**
 * The delay of each trip of `dates` that has one, whose scheduled end plus its delay is at or
 * after `endedSince` (or has no scheduled end). Trips marked dirty by ingest on those dates are
 * recomputed first, as trackingOf does, so the answer holds every report committed before the call
 * (`recompute` false: as the tracking rounds left them, see trackingOf).
 */
export async function observedDelays(db: Db, groupId: string, dates: readonly string[], endedSince: Date, o: { recompute?: boolean } = {}): Promise<TripDelay[]> {
  if (o.recompute !== false) await refreshDirty(db, { groupId, dates });
  const rows = await selectDelays(db, groupId, [...dates], endedSince);
  return rows.map((r) => ({ ...r, start_time: r.start_time === null ? null : formatGtfsTime(r.start_time) }));
}
