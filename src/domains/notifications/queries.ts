/** The sms_notifications table: the only place that reads or writes it (docs/architecture.md). */
import type { Queryable } from '../../platform/db/index.js';
import type { SmsRecord } from './schemas.js';

export interface SmsRow {
  notification_id: string;
  group_id: string;
  recipient: string;
  message: string;
  device_id: string | null;
  gtfs_id: string | null;
  transport: SmsRecord['transport'];
  status: SmsRecord['status'];
  error: string | null;
  provider_message_id: string | null;
  created_at: Date;
  sent_at: Date | null;
}

const COLUMNS = 'notification_id, group_id, recipient, message, device_id, gtfs_id, transport, status, error, provider_message_id, created_at, sent_at';

/** An SMS about to be handed to its transport (status sending). */
export async function insertSending(
  db: Queryable,
  groupId: string,
  n: Pick<SmsRow, 'notification_id' | 'recipient' | 'message' | 'device_id' | 'gtfs_id'> & { transport: string; created_by: string | null },
  now: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO sms_notifications (group_id, notification_id, recipient, message, device_id, gtfs_id, transport, status, created_by, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'sending', $8, $9)`,
    [groupId, n.notification_id, n.recipient, n.message, n.device_id, n.gtfs_id, n.transport, n.created_by, now],
  );
}

/** The outcome of handing an SMS to its transport. */
export async function updateOutcome(
  db: Queryable,
  groupId: string,
  notificationId: string,
  o: Pick<SmsRow, 'status' | 'error' | 'provider_message_id' | 'sent_at'>,
): Promise<SmsRow> {
  const rows = await db.query<SmsRow>(
    `UPDATE sms_notifications SET status = $3, error = $4, provider_message_id = $5, sent_at = $6
     WHERE group_id = $1 AND notification_id = $2 RETURNING ${COLUMNS}`,
    [groupId, notificationId, o.status, o.error, o.provider_message_id, o.sent_at],
  );
  return rows[0]!;
}

/**
 * The SMS sent and failed, created in the month `period` (YYYY-MM) of `timezone` (null: all
 * months), of a device and a GTFS version when given, of the devices of `teams` (null: every
 * team). A read model: it reads the devices' teams (fleet's table) in the same statement.
 */
export async function countSmsRows(
  db: Queryable,
  groupId: string,
  q: { period: string | null; timezone: string; deviceId: string | null; gtfsId: string | null; teams: string[] | null },
): Promise<{ count: number; failed: number }> {
  const rows = await db.query<{ count: number; failed: number }>(
    `SELECT count(*) FILTER (WHERE n.status = 'sent') AS count, count(*) FILTER (WHERE n.status = 'failed') AS failed
     FROM sms_notifications n
     WHERE n.group_id = $1
       AND ($2::text IS NULL OR (n.created_at >= ($2::text || '-01')::timestamp AT TIME ZONE $3
                                AND n.created_at < (($2::text || '-01')::date + interval '1 month')::timestamp AT TIME ZONE $3))
       AND ($4::text IS NULL OR n.device_id = $4)
       AND ($5::text IS NULL OR n.gtfs_id = $5)
       AND ($6::text[] IS NULL OR EXISTS (SELECT 1 FROM devices d WHERE d.group_id = n.group_id AND d.device_id = n.device_id AND d.team_id = ANY($6)))`,
    [groupId, q.period, q.timezone, q.deviceId, q.gtfsId, q.teams],
  );
  return rows[0]!;
}
