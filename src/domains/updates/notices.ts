/**
 * Trip update changes on the live channel (PostgreSQL LISTEN/NOTIFY, so every API instance hears
 * every write), beside the device reports accepted (device/live.ts); the live hub (live/hub.ts)
 * hears both and reads a trip update through updates' service. A trip update travels as a
 * reference, because a detour's shape can exceed the 8000 bytes a NOTIFY payload holds; each
 * instance with subscribers in the group reads the record once.
 */
import type { AppContext } from '../../platform/context.js';
import { LIVE_CHANNEL, type LiveReport } from '../device/live.js';

export { LIVE_CHANNEL };

export const TRIP_UPDATE_ACTIONS = ['put', 'ended', 'removed'] as const;
export type TripUpdateAction = (typeof TRIP_UPDATE_ACTIONS)[number];

export interface TripUpdateNotice {
  group_id: string;
  trip_update: { update_id: string; action: TripUpdateAction };
}

export type LiveNotice = LiveReport | TripUpdateNotice;

/** After the write is stored; never fails the write (an error is logged). */
export function publishTripUpdate(ctx: AppContext, groupId: string, updateId: string, action: TripUpdateAction): void {
  const notice: TripUpdateNotice = { group_id: groupId, trip_update: { update_id: updateId, action } };
  ctx.db.notify(LIVE_CHANNEL, JSON.stringify(notice)).catch((err: unknown) => ctx.log.warn({ err, group_id: groupId, update_id: updateId }, 'live publication of a trip update failed; the update is stored'));
}
