/**
 * The device_sign_events table: each sign-on and sign-off a device reported, keyed by its client
 * id. The duties are derived from them (duties/service.ts, deriveDuties).
 */
import type { Queryable, Tx } from '../../../platform/db/index.js';

/** A sign event as stored by insertSignEventRows. */
export interface StoredSign {
  client_id: string;
  kind: 'sign_on' | 'sign_off';
  at: Date;
  duty_id: string | null;
  driver_id: string | null;
  vehicle_id: string | null;
}

/** A sign event with everything a duty keeps of it. */
export interface SignEventRow extends StoredSign {
  odometer_km: number | null;
  non_commercial_km: number | null;
  info: Record<string, unknown>;
}

/** Stores the sign events not stored yet (a retried one is skipped); returns those stored now. */
export function insertSignEventRows(tx: Tx, g: string, d: string, rows: readonly SignEventRow[], receivedAt: Date): Promise<StoredSign[]> {
  return tx.query<StoredSign>(
    `INSERT INTO device_sign_events (group_id, device_id, client_id, kind, at, duty_id, driver_id, vehicle_id, odometer_km, non_commercial_km, info, received_at)
     SELECT $1, $2, u.* , $12 FROM unnest($3::uuid[], $4::text[], $5::timestamptz[], $6::text[], $7::text[], $8::text[], $9::float8[], $10::float8[], $11::jsonb[])
       AS u(client_id, kind, at, duty_id, driver_id, vehicle_id, odometer_km, non_commercial_km, info)
     ON CONFLICT DO NOTHING RETURNING client_id, kind, at, duty_id, driver_id, vehicle_id`,
    [
      g, d,
      rows.map((s) => s.client_id),
      rows.map((s) => s.kind),
      rows.map((s) => s.at.toISOString()),
      rows.map((s) => s.duty_id),
      rows.map((s) => s.driver_id),
      rows.map((s) => s.vehicle_id),
      rows.map((s) => s.odometer_km),
      rows.map((s) => s.non_commercial_km),
      rows.map((s) => JSON.stringify(s.info)),
      receivedAt,
    ],
  );
}

/**
 * The device's sign events from the last sign-on before `from` (from `from` when there is none),
 * in event time, a sign-off before a sign-on of the same instant.
 */
export async function selectSignEventsFrom(tx: Tx, g: string, d: string, from: Date): Promise<SignEventRow[]> {
  const anchor = await tx.query<{ at: Date }>(
    "SELECT at FROM device_sign_events WHERE group_id = $1 AND device_id = $2 AND kind = 'sign_on' AND at < $3 ORDER BY at DESC LIMIT 1",
    [g, d, from],
  );
  return tx.query<SignEventRow>(
    `SELECT client_id, kind, at, duty_id, driver_id, vehicle_id, odometer_km, non_commercial_km, info
     FROM device_sign_events WHERE group_id = $1 AND device_id = $2 AND at >= $3
     ORDER BY at, CASE kind WHEN 'sign_off' THEN 0 ELSE 1 END, client_id`,
    [g, d, anchor[0]?.at ?? from],
  );
}

/** The duty each of these sign-ons opened. */
export function selectDutiesOfSignOns(q: Queryable, g: string, d: string, clientIds: string[]): Promise<{ client_id: string; duty_id: string }[]> {
  return q.query('SELECT client_id, duty_id FROM device_sign_events WHERE group_id = $1 AND device_id = $2 AND client_id = ANY($3::uuid[])', [g, d, clientIds]);
}
