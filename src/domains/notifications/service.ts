/**
 * SMS notifications. Every SMS the service sends goes through sendSms, which records it before
 * handing it to the transport (status sending), then records the outcome (sent or failed): the
 * count is read from these records, so nothing is sent unrecorded.
 */
import type { AppContext } from '../../platform/context.js';
import type { Queryable } from '../../platform/db/index.js';
import type { GroupScope } from '../../platform/http/access.js';
import { fail, invalid } from '../../platform/http/errors.js';
import { forbiddenDifferentTeam, teamParam, teamsVisible } from '../../platform/http/teams.js';
import { objectId } from '../../platform/ids.js';
import { deviceTeams } from '../fleet/devices.js';
import type { SmsBody, SmsCount, SmsRecord } from './schemas.js';
import { transportFor, type SmsTransport } from './transport.js';

interface SmsRow {
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

const smsRecord = ({ recipient, ...r }: SmsRow): SmsRecord => ({ ...r, to: recipient, created_at: r.created_at.toISOString(), sent_at: r.sent_at?.toISOString() ?? null });

/**
 * Sends one SMS and records it with its device and GTFS context. A caller limited to teams may
 * only name a device of their teams. The transport defaults to the configured one.
 */
export async function sendSms(ctx: AppContext, scope: GroupScope, input: SmsBody, o: { by: string | null; transport?: SmsTransport }): Promise<SmsRecord> {
  if (input.device_id !== undefined) {
    const teams = await deviceTeams(ctx.db, scope.groupId, input.device_id);
    if (teams === null) throw invalid(['body', 'device_id'], `No device ${JSON.stringify(input.device_id)} in group ${scope.groupId}`, 'value_error', input.device_id);
    if (!teamsVisible(scope, teams)) throw forbiddenDifferentTeam(`Device ${input.device_id}`);
  }
  const transport = o.transport ?? transportFor(ctx.config, ctx.log);
  const notificationId = objectId(ctx.clock.now().getTime());
  await ctx.db.query(
    `INSERT INTO sms_notifications (group_id, notification_id, recipient, message, device_id, gtfs_id, transport, status, created_by, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'sending', $8, $9)`,
    [scope.groupId, notificationId, input.to, input.message, input.device_id ?? null, input.gtfs_id ?? null, transport.name, o.by, ctx.clock.now()],
  );
  let outcome: { status: 'sent'; providerMessageId: string | null } | { status: 'failed'; error: string };
  try {
    const r = await transport.send({ notification_id: notificationId, group_id: scope.groupId, to: input.to, message: input.message, device_id: input.device_id ?? null, gtfs_id: input.gtfs_id ?? null });
    outcome = { status: 'sent', providerMessageId: r.providerMessageId };
  } catch (err) {
    outcome = { status: 'failed', error: err instanceof Error ? err.message : String(err) };
  }
  const rows = await ctx.db.query<SmsRow>(
    `UPDATE sms_notifications SET status = $3, error = $4, provider_message_id = $5, sent_at = $6
     WHERE group_id = $1 AND notification_id = $2 RETURNING ${COLUMNS}`,
    [scope.groupId, notificationId, outcome.status, outcome.status === 'failed' ? outcome.error : null, outcome.status === 'sent' ? outcome.providerMessageId : null, outcome.status === 'sent' ? ctx.clock.now() : null],
  );
  const record = smsRecord(rows[0]!);
  if (outcome.status === 'failed') throw fail('SmsNotSent', `The SMS was not sent: ${outcome.error}`, {}, { notification: record });
  return record;
}

/**
 * spec: GET notifications/sms-count: SMS sent in a month of the group's time zone (all months
 * without period), for a device and a GTFS version when given. A caller limited to teams counts
 * the SMS of their teams' devices only, and names only those devices (403 ForbiddenDifferentTeam).
 */
export async function countSms(db: Queryable, scope: GroupScope, q: { period?: string | undefined; device_id?: string | undefined; gtfs_id?: string | undefined }): Promise<SmsCount> {
  if (q.device_id !== undefined && scope.teams !== null) {
    // SMS are seen through their device: a count keyed by a device reads that device's data.
    const teams = await deviceTeams(db, scope.groupId, q.device_id);
    if (teams !== null && !teamsVisible(scope, teams)) throw forbiddenDifferentTeam(`Device ${q.device_id}`);
  }
  const rows = await db.query<{ count: number; failed: number }>(
    `SELECT count(*) FILTER (WHERE n.status = 'sent') AS count, count(*) FILTER (WHERE n.status = 'failed') AS failed
     FROM sms_notifications n
     WHERE n.group_id = $1
       AND ($2::text IS NULL OR (n.created_at >= ($2::text || '-01')::timestamp AT TIME ZONE $3
                                AND n.created_at < (($2::text || '-01')::date + interval '1 month')::timestamp AT TIME ZONE $3))
       AND ($4::text IS NULL OR n.device_id = $4)
       AND ($5::text IS NULL OR n.gtfs_id = $5)
       AND ($6::text[] IS NULL OR EXISTS (SELECT 1 FROM devices d WHERE d.group_id = n.group_id AND d.device_id = n.device_id AND d.team_id = ANY($6)))`,
    [scope.groupId, q.period ?? null, scope.timezone, q.device_id ?? null, q.gtfs_id ?? null, teamParam(scope)],
  );
  return { group_id: scope.groupId, period: q.period ?? null, device_id: q.device_id ?? null, gtfs_id: q.gtfs_id ?? null, count: rows[0]!.count, failed: rows[0]!.failed };
}
