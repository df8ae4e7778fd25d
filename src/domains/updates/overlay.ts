/**
 * How trip updates overlay the schedule of one trip on one service date (the GTFS is never
 * rewritten). Every update in force on the date for the trip (or its route, or its instance)
 * applies, in the order they were recorded, with one rule for overlaps:
 * - a cancel wins over everything: the trip does not run;
 * - a stop touched by several updates ends as the most recent one says (skipped, moved, or
 *   served again when a later update moves it back); a detour's skipped stops count as skips;
 * - added stops and messages accumulate; of several detours, the most recent one is the path.
 * Trips of the day, tracking (a skipped stop is not "missed"), the trip object, GTFS-Realtime and
 * SIRI all read this overlay.
 */
import type { AddedStop, Detour, Message, Place, StopRef, TripUpdateRecord } from './schemas.js';

export interface TripStopRef {
  stop_id: string;
  stop_sequence: number;
}

export interface ResolvedAddedStop {
  update_id: string;
  place: Place;
  /** The stop_sequence of the scheduled stop it follows. */
  after_stop_sequence: number;
  travel_seconds: number | null;
}

export interface TripOverlay {
  cancelled: boolean;
  /** stop_sequence → the update that skips it. */
  skipped: Map<number, string>;
  /** stop_sequence → where it is served instead. */
  moved: Map<number, { update_id: string; place: Place }>;
  added: ResolvedAddedStop[];
  detour: (Detour & { update_id: string }) | null;
  messages: (Message & { update_id: string; kind: TripUpdateRecord['kind'] })[];
  /** Every update applied, in the order recorded. */
  applied: TripUpdateRecord[];
}

export const emptyOverlay = (): TripOverlay => ({ cancelled: false, skipped: new Map(), moved: new Map(), added: [], detour: null, messages: [], applied: [] });

/** The calls of the trip a stop reference names (all calls of a stop_id when no sequence is given). */
export function resolveStop(ref: StopRef, stops: readonly TripStopRef[]): number[] {
  return stops
    .filter((s) => (ref.stop_sequence === undefined || s.stop_sequence === ref.stop_sequence) && (ref.stop_id === undefined || s.stop_id === ref.stop_id))
    .map((s) => s.stop_sequence);
}

/** Does this update apply to this trip instance? */
export function concerns(u: TripUpdateRecord, trip: { trip_id: string; route_id: string; start_time?: string | null }): boolean {
  if (u.trip_id !== null) return u.trip_id === trip.trip_id && (u.start_time === null || trip.start_time == null || u.start_time === trip.start_time);
  return u.route_id === trip.route_id;
}

/** Applies the updates (already in force on the date and concerning the trip), oldest first. */
export function overlayTrip(updates: readonly TripUpdateRecord[], stops: readonly TripStopRef[]): TripOverlay {
  const o = emptyOverlay();
  const ordered = [...updates].sort((a, b) => a.sequence - b.sequence);
  const serveAgain = (seq: number) => {
    o.skipped.delete(seq);
    o.moved.delete(seq);
  };
  const added = (a: AddedStop, update_id: string) => {
    for (const after of resolveStop(a.after, stops).slice(0, 1)) o.added.push({ update_id, place: a.place, after_stop_sequence: after, travel_seconds: a.travel_seconds ?? null });
  };
  for (const u of ordered) {
    o.applied.push(u);
    if (u.message) o.messages.push({ ...u.message, update_id: u.update_id, kind: u.kind });
    switch (u.kind) {
      case 'cancel':
        o.cancelled = true;
        break;
      case 'skip_stop':
        for (const seq of resolveStop(u.stop!, stops)) {
          serveAgain(seq);
          o.skipped.set(seq, u.update_id);
        }
        break;
      case 'move_stop':
        for (const seq of resolveStop(u.stop!, stops)) {
          serveAgain(seq);
          // Moved back to its own stop: served as scheduled again.
          if (u.replacement!.stop_id !== undefined && u.replacement!.stop_id === stops.find((s) => s.stop_sequence === seq)?.stop_id && u.replacement!.lat === undefined) continue;
          o.moved.set(seq, { update_id: u.update_id, place: u.replacement! });
        }
        break;
      case 'add_stop':
        added(u.added_stop!, u.update_id);
        break;
      case 'detour':
        o.detour = { ...u.detour!, update_id: u.update_id };
        for (const ref of u.detour!.skipped_stops) {
          for (const seq of resolveStop(ref, stops)) {
            serveAgain(seq);
            o.skipped.set(seq, u.update_id);
          }
        }
        for (const a of u.detour!.added_stops) added(a, u.update_id);
        break;
      case 'message':
        break;
    }
  }
  return o;
}
