/** The trip_runs table: trip_start and trip_end reports (docs/architecture.md). */
import type { Queryable } from '../../../platform/db/index.js';

export interface TripRunRow {
  device_id: string;
  kind: 'start' | 'end';
  at: Date;
}

/** The trip_start and trip_end reports of a trip of a date, by time. */
export function selectTripRuns(db: Queryable, groupId: string, serviceDate: string, tripId: string): Promise<TripRunRow[]> {
  return db.query<TripRunRow>('SELECT device_id, kind, at FROM trip_runs WHERE group_id = $1 AND service_date = $2 AND trip_id = $3 ORDER BY at', [groupId, serviceDate, tripId]);
}
