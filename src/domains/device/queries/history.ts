/**
 * A device's history: its events (device_history_events), their snapshots
 * (device_history_snapshots) and its latest state (device_latest) (docs/architecture.md).
 */
import type { Queryable } from '../../../platform/db/index.js';

type State = Record<string, unknown>;

export interface HistoryEventRow {
  event_id: string;
  at: Date;
  patch: State;
}

export interface SnapshotRow {
  event_id: string;
  state: State;
}

/** An event bound: up to an id (inclusive) or before it (strict). */
export type EventBound = '<=' | '<';

/** Which of these client ids the device's stored events hold. */
export async function selectStoredClientIds(db: Queryable, groupId: string, deviceId: string, clientIds: string[]): Promise<string[]> {
  return (await db.query<{ client_id: string }>(
    'SELECT client_id FROM device_history_events WHERE group_id = $1 AND device_id = $2 AND client_id = ANY($3::uuid[])',
    [groupId, deviceId, clientIds],
  )).map((r) => r.client_id);
}

/** The device's latest state and its time, if the device has a latest row. */
export async function selectLatestState(db: Queryable, groupId: string, deviceId: string): Promise<{ state: State | null; state_at: Date | null } | undefined> {
  return (await db.query<{ state: State | null; state_at: Date | null }>(
    'SELECT state, state_at FROM device_latest WHERE group_id = $1 AND device_id = $2',
    [groupId, deviceId],
  ))[0];
}

/** Stores events (a client id already stored is skipped); answers those stored. */
export function insertHistoryEvents(
  tx: Queryable, groupId: string, deviceId: string,
  events: { eventIds: string[]; clientIds: string[]; ats: string[]; patches: string[] }, receivedAt: Date,
): Promise<{ client_id: string; event_id: string }[]> {
  return tx.query<{ client_id: string; event_id: string }>(
    `INSERT INTO device_history_events (group_id, device_id, event_id, client_id, at, patch, received_at)
     SELECT $1, $2, u.event_id, u.client_id, u.at, u.patch, $7
     FROM unnest($3::text[], $4::uuid[], $5::timestamptz[], $6::jsonb[]) AS u(event_id, client_id, at, patch)
     ON CONFLICT DO NOTHING
     RETURNING client_id, event_id`,
    [groupId, deviceId, events.eventIds, events.clientIds, events.ats, events.patches, receivedAt],
  );
}

/** Drops the device's snapshots from this event on. */
export async function deleteSnapshotsFrom(tx: Queryable, groupId: string, deviceId: string, eventId: string): Promise<void> {
  await tx.query('DELETE FROM device_history_snapshots WHERE group_id = $1 AND device_id = $2 AND event_id >= $3', [groupId, deviceId, eventId]);
}

/** The device's latest snapshot (within the bound when given). */
export async function selectLastSnapshot(db: Queryable, groupId: string, deviceId: string, bound?: { op: EventBound; eventId: string }): Promise<SnapshotRow | undefined> {
  if (!bound) {
    return (await db.query<SnapshotRow>(
      'SELECT event_id, state FROM device_history_snapshots WHERE group_id = $1 AND device_id = $2 ORDER BY event_id DESC LIMIT 1',
      [groupId, deviceId],
    ))[0];
  }
  return (await db.query<SnapshotRow>(
    `SELECT event_id, state FROM device_history_snapshots WHERE group_id = $1 AND device_id = $2 AND event_id ${bound.op} $3 ORDER BY event_id DESC LIMIT 1`,
    [groupId, deviceId, bound.eventId],
  ))[0];
}

/** The device's events after `afterId` (within the bound when given), in order. */
export function selectEventsAfter(db: Queryable, groupId: string, deviceId: string, afterId: string, bound?: { op: EventBound; eventId: string }): Promise<HistoryEventRow[]> {
  if (!bound) {
    return db.query<HistoryEventRow>(
      `SELECT event_id, at, patch FROM device_history_events
     WHERE group_id = $1 AND device_id = $2 AND event_id > $3 ORDER BY event_id`,
      [groupId, deviceId, afterId],
    );
  }
  return db.query<HistoryEventRow>(
    `SELECT event_id, at, patch FROM device_history_events
     WHERE group_id = $1 AND device_id = $2 AND event_id > $3 AND event_id ${bound.op} $4 ORDER BY event_id`,
    [groupId, deviceId, afterId, bound.eventId],
  );
}

/** The time of one event of the device. */
export async function selectEventAt(db: Queryable, groupId: string, deviceId: string, eventId: string): Promise<Date | null> {
  return (await db.query<{ at: Date }>('SELECT at FROM device_history_events WHERE group_id = $1 AND device_id = $2 AND event_id = $3', [groupId, deviceId, eventId]))[0]?.at ?? null;
}

/** Stores snapshots of the device's state. */
export async function insertSnapshots(tx: Queryable, groupId: string, deviceId: string, snapshots: { event_id: string; state: string }[]): Promise<void> {
  await tx.query(
    `INSERT INTO device_history_snapshots (group_id, device_id, event_id, state)
       SELECT $1, $2, u.event_id, u.state FROM unnest($3::text[], $4::jsonb[]) AS u(event_id, state)`,
    [groupId, deviceId, snapshots.map((s) => s.event_id), snapshots.map((s) => s.state)],
  );
}

/** Sets the device's latest state (its row made, first seen now, when it has none). */
export async function upsertLatestState(tx: Queryable, groupId: string, deviceId: string, stateAt: Date, state: string, seenAt: Date): Promise<void> {
  await tx.query(
    `INSERT INTO device_latest (group_id, device_id, state_at, state, last_seen_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (group_id, device_id) DO UPDATE SET state_at = EXCLUDED.state_at, state = EXCLUDED.state`,
    [groupId, deviceId, stateAt, state, seenAt],
  );
}
