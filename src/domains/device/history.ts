/**
 * Device history (spec: Resources, Device): every state change is an event with a 24-hex id
 * ordered by event time (ObjectId layout: seconds first), and every SNAPSHOT_EVERY events a
 * snapshot of the full state is kept, so reconstructing the state at any instant replays fewer
 * than SNAPSHOT_EVERY events whatever the device's age. A late event (older than a snapshot)
 * invalidates the snapshots after it; they are rebuilt at once.
 */
import type { Queryable } from '../../platform/db/index.js';
import { objectId } from '../../platform/ids.js';
import {
  deleteSnapshotsFrom, insertHistoryEvents, insertSnapshots, selectEventAt, selectEventsAfter, selectLastSnapshot, selectLatestState, selectStoredClientIds,
  upsertLatestState, type EventBound,
} from './queries/history.js';
import { DEVICE_STATE_MAX_BYTES, DEVICE_STATE_MAX_FIELDS } from './schemas.js';

export const SNAPSHOT_EVERY = 200;

export type DeviceStateValue = Record<string, unknown>;

export interface HistoryEventInput {
  clientId: string;
  at: Date;
  patch: DeviceStateValue;
}

/** A shallow merge: fields set to null are removed from the state. */
export function applyPatch(state: DeviceStateValue, patch: DeviceStateValue): DeviceStateValue {
  const next = { ...state };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete next[k];
    else next[k] = v;
  }
  return next;
}

/**
 * For each state change (in the order given), the bound of the stored state it would break, or
 * null: the device's latest state, merged with the changes kept so far in event time, must hold at
 * most DEVICE_STATE_MAX_FIELDS fields and DEVICE_STATE_MAX_BYTES bytes of JSON. A change older than
 * the latest state is counted as adding its fields and removing none (a later event may have set
 * again what it removes), so the latest state never passes the bounds, whatever the arrival order
 * (a state stored past them before they existed may change without growing).
 */
export async function stateBoundErrors(db: Queryable, groupId: string, deviceId: string, changes: { clientId: string; at: Date; patch: DeviceStateValue }[]): Promise<(string | null)[]> {
  // A retry of a stored change is acknowledged as a duplicate, whatever the state became since.
  const stored = new Set(await selectStoredClientIds(db, groupId, deviceId, changes.map((c) => c.clientId)));
  const latest = await selectLatestState(db, groupId, deviceId);
  let state: DeviceStateValue = latest?.state ?? {};
  let stateAt = latest?.state_at?.getTime() ?? -Infinity;
  const order = changes.map((_c, i) => i).sort((a, b) => changes[a]!.at.getTime() - changes[b]!.at.getTime());
  const errors: (string | null)[] = changes.map(() => null);
  for (const i of order) {
    const { clientId, at, patch } = changes[i]!;
    if (stored.has(clientId)) continue;
    const late = at.getTime() < stateAt;
    const next = late ? { ...state, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== null)) } : applyPatch(state, patch);
    const fields = Object.keys(next).length;
    const bytes = Buffer.byteLength(JSON.stringify(next));
    // A state already past a bound (stored before the bounds) may still change if it does not grow.
    const before = { fields: Object.keys(state).length, bytes: Buffer.byteLength(JSON.stringify(state)) };
    if (fields > DEVICE_STATE_MAX_FIELDS && fields > before.fields) errors[i] = `the device state would hold ${fields} fields, over the bound of ${DEVICE_STATE_MAX_FIELDS}: remove fields (set them to null) first`;
    else if (bytes > DEVICE_STATE_MAX_BYTES && bytes > before.bytes) errors[i] = `the device state would take ${bytes} bytes of JSON, over the bound of ${DEVICE_STATE_MAX_BYTES}: remove fields (set them to null) first`;
    else {
      state = next;
      stateAt = Math.max(stateAt, at.getTime());
    }
  }
  return errors;
}

/** The upper bound (inclusive) of event ids for an instant in whole UNIX seconds. */
export function lastIdOfSecond(unixSeconds: number): string {
  return Math.max(0, Math.min(0xffffffff, Math.floor(unixSeconds))).toString(16).padStart(8, '0') + 'ffffffffffffffff';
}

/**
 * Stores history events (duplicates by client id are skipped) and keeps snapshots and the
 * latest state current. Returns the ids of the events stored.
 */
export async function appendHistory(tx: Queryable, groupId: string, deviceId: string, events: HistoryEventInput[], receivedAt: Date): Promise<Set<string>> {
  if (events.length === 0) return new Set();
  const ids = events.map((e) => objectId(e.at.getTime()));
  const stored = await insertHistoryEvents(tx, groupId, deviceId, {
    eventIds: ids, clientIds: events.map((e) => e.clientId), ats: events.map((e) => e.at.toISOString()), patches: events.map((e) => JSON.stringify(e.patch)),
  }, receivedAt);
  if (stored.length === 0) return new Set();
  const earliest = stored.map((s) => s.event_id).sort()[0]!;
  await deleteSnapshotsFrom(tx, groupId, deviceId, earliest);
  const base = await selectLastSnapshot(tx, groupId, deviceId);
  const after = await selectEventsAfter(tx, groupId, deviceId, base?.event_id ?? '');
  let state = base?.state ?? {};
  const snapshots: { event_id: string; state: string }[] = [];
  after.forEach((e, i) => {
    state = applyPatch(state, e.patch);
    if ((i + 1) % SNAPSHOT_EVERY === 0) snapshots.push({ event_id: e.event_id, state: JSON.stringify(state) });
  });
  if (snapshots.length > 0) {
    await insertSnapshots(tx, groupId, deviceId, snapshots);
  }
  const last = after[after.length - 1];
  if (last) {
    await upsertLatestState(tx, groupId, deviceId, last.at, JSON.stringify(state), receivedAt);
  }
  return new Set(stored.map((s) => s.client_id));
}

export interface ReconstructedState {
  device_id: string;
  /** Id of the last event applied, null when the device had no history yet. */
  event_id: string | null;
  /** Time of that event. */
  at: string | null;
  state: DeviceStateValue;
  /** Id of the snapshot the reconstruction started from, and how many events it replayed. */
  snapshot_event_id: string | null;
  replayed_events: number;
}

/**
 * The state after every event whose id is ≤ `upTo` (inclusive) or < `before` (strict):
 * the latest snapshot within the bound plus the events after it.
 */
export async function reconstruct(db: Queryable, groupId: string, deviceId: string, bound: { upTo: string } | { before: string } | null): Promise<ReconstructedState> {
  const [op, value]: [EventBound, string] = bound === null ? ['<=', 'ffffffffffffffffffffffff'] : 'upTo' in bound ? ['<=', bound.upTo] : ['<', bound.before];
  const snapshot = await selectLastSnapshot(db, groupId, deviceId, { op, eventId: value });
  const events = await selectEventsAfter(db, groupId, deviceId, snapshot?.event_id ?? '', { op, eventId: value });
  let state = snapshot?.state ?? {};
  for (const e of events) state = applyPatch(state, e.patch);
  const last = events[events.length - 1];
  let lastId = last?.event_id ?? snapshot?.event_id ?? null;
  let lastAt = last?.at ?? null;
  if (!last && snapshot) {
    lastAt = await selectEventAt(db, groupId, deviceId, snapshot.event_id);
    lastId = snapshot.event_id;
  }
  return {
    device_id: deviceId,
    event_id: lastId,
    at: lastAt ? lastAt.toISOString() : null,
    state,
    snapshot_event_id: snapshot?.event_id ?? null,
    replayed_events: events.length,
  };
}
