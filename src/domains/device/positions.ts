/** The positions devices reported, as other domains read them (the passenger feeds' vehicles). */
import type { Queryable } from '../../platform/db/index.js';
import { selectVehiclePositions, type VehiclePositionRow } from './queries/network.js';

export type { VehiclePositionRow };

/**
 * The latest position at or before `now` of each vehicle seen since `since`, by vehicle: the
 * vehicle of the duty open on the device at the position's time, else the vehicle the device is
 * mounted in; of two devices in one vehicle, the latest position wins.
 */
export function latestVehiclePositions(db: Queryable, groupId: string, since: Date, now: Date): Promise<VehiclePositionRow[]> {
  return selectVehiclePositions(db, groupId, since, now);
}
