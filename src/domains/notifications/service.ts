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
import { countSmsRows, insertSending, updateOutcome, type SmsRow } from './queries.js';
import type { SmsBody, SmsCount, SmsRecord } from './schemas.js';
import { transportFor, type SmsTransport } from './transport.js';

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
  await insertSending(
    ctx.db,
    scope.groupId,
    { notification_id: notificationId, recipient: input.to, message: input.message, device_id: input.device_id ?? null, gtfs_id: input.gtfs_id ?? null, transport: transport.name, created_by: o.by },
    ctx.clock.now(),
  );
  let outcome: { status: 'sent'; providerMessageId: string | null } | { status: 'failed'; error: string };
  try {
    const r = await transport.send({ notification_id: notificationId, group_id: scope.groupId, to: input.to, message: input.message, device_id: input.device_id ?? null, gtfs_id: input.gtfs_id ?? null });
    outcome = { status: 'sent', providerMessageId: r.providerMessageId };
  } catch (err) {
    outcome = { status: 'failed', error: err instanceof Error ? err.message : String(err) };
  }
  const record = smsRecord(
    await updateOutcome(ctx.db, scope.groupId, notificationId, {
      status: outcome.status,
      error: outcome.status === 'failed' ? outcome.error : null,
      provider_message_id: outcome.status === 'sent' ? outcome.providerMessageId : null,
      sent_at: outcome.status === 'sent' ? ctx.clock.now() : null,
    }),
  );
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
  const { count, failed } = await countSmsRows(db, scope.groupId, {
    period: q.period ?? null,
    timezone: scope.timezone,
    deviceId: q.device_id ?? null,
    gtfsId: q.gtfs_id ?? null,
    teams: teamParam(scope),
  });
  return { group_id: scope.groupId, period: q.period ?? null, device_id: q.device_id ?? null, gtfs_id: q.gtfs_id ?? null, count, failed };
}
