/** What the planning assigns to one trip, as other domains read it (the trip object). */
import type { Queryable } from '../../platform/db/index.js';
import { selectTripAssignments } from './queries.js';

/** The vehicle and driver planned on each instance of a trip of a date, by start time. */
export function tripAssignments(db: Queryable, groupId: string, serviceDate: string, tripId: string): Promise<{ vehicle_id: string | null; driver_id: string | null }[]> {
  return selectTripAssignments(db, groupId, serviceDate, tripId);
}
