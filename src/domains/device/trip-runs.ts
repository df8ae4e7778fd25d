/** The trip_start and trip_end reports of devices, as other domains read them (the trip object's runs). */
import type { Queryable } from '../../platform/db/index.js';
import { selectTripRuns, type TripRunRow } from './queries/trip-runs.js';

export type { TripRunRow };

/** The trip_start and trip_end reports of a trip of a date, by time. */
export function tripRuns(db: Queryable, groupId: string, serviceDate: string, tripId: string): Promise<TripRunRow[]> {
  return selectTripRuns(db, groupId, serviceDate, tripId);
}
