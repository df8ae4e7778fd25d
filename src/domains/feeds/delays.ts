/**
 * The delay of a trip as the feeds publish it: the gap between the time a device reported the
 * trip at its latest stop (stop passed, arrival or departure) and the scheduled time there.
 * GTFS-Realtime and SIRI propagate it to the stops after. This is the one place the feeds ask
 * for delays.
 */
import type { Queryable } from '../../platform/db/index.js';
import type { ScheduledStopTime } from '../gtfs/service-days.js';
import { formatGtfsTime } from '../gtfs/time.js';

export interface ObservedDelay {
  stop_sequence: number;
  stop_id: string;
  /** Seconds, positive when late. */
  delay: number;
  /** When the device reported it. */
  at: Date;
  /** Whether the vehicle has left the stop (departure, stop passed) or only arrived. */
  departed: boolean;
}

interface LatestEvent {
  trip_id: string;
  start_time: number | null;
  event: 'stop_passed' | 'departure' | 'arrival';
  stop_id: string | null;
  stop_sequence: number | null;
  at: Date;
}

/** Trip instance key as the feeds use it: trip_id, and start time for a frequency instance. */
export const instanceKey = (tripId: string, startTime: string | null) => `${tripId}@${startTime ?? ''}`;

/** The latest stop event of each trip reported on a service date, keyed by trip instance. */
export async function latestStopEvents(db: Queryable, groupId: string, serviceDate: string): Promise<Map<string, LatestEvent>> {
  const rows = await db.query<LatestEvent>(
    `SELECT DISTINCT ON (trip_id, start_time) trip_id, start_time, event, stop_id, stop_sequence, at
     FROM trip_events
     WHERE group_id = $1 AND service_date = $2 AND event IN ('stop_passed', 'departure', 'arrival') AND (stop_sequence IS NOT NULL OR stop_id IS NOT NULL)
     ORDER BY trip_id, start_time, at DESC`,
    [groupId, serviceDate],
  );
  return new Map(rows.map((r) => [instanceKey(r.trip_id, r.start_time === null ? null : formatGtfsTime(r.start_time)), r]));
}

/** The delay an event shows against the stop times of its trip (null when its stop has no time). */
export function delayOf(e: LatestEvent, stops: readonly ScheduledStopTime[]): ObservedDelay | null {
  const stop = stops.find((s) => (e.stop_sequence !== null ? s.stop_sequence === e.stop_sequence : s.stop_id === e.stop_id));
  if (!stop) return null;
  const departed = e.event !== 'arrival';
  const scheduled = departed ? (stop.departure_at ?? stop.arrival_at) : (stop.arrival_at ?? stop.departure_at);
  if (!scheduled) return null;
  return { stop_sequence: stop.stop_sequence, stop_id: stop.stop_id, delay: Math.round((e.at.getTime() - scheduled.getTime()) / 1000), at: e.at, departed };
}
