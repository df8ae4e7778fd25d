/** SMS notifications: what is sent, what is recorded, what is counted. */
import { Type, type Static } from 'typebox';
import { Nullable, StringEnum } from '../../platform/http/params.js';
import { component } from '../../platform/http/components.js';

export const SMS_STATUSES = ['sending', 'sent', 'failed'] as const;

export const SmsBody = component('SmsBody', Type.Object(
  {
    to: Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'The recipient\'s phone number in E.164 form (+33612345678).' }),
    message: Type.String({ minLength: 1, maxLength: 1600, description: 'The text (long messages are split by the gateway).' }),
    device_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'The device the notification concerns (it must exist in the group).' })),
    gtfs_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The GTFS version the notification concerns.' })),
  },
  { additionalProperties: false, description: 'An SMS to send.' },
));
export type SmsBody = Static<typeof SmsBody>;

export const SmsRecord = component('SmsNotification', Type.Object(
  {
    notification_id: Type.String({ description: 'The notification\'s identifier.' }),
    group_id: Type.String(),
    to: Type.String({ description: 'The recipient\'s phone number (E.164).' }),
    message: Type.String({ description: 'The text sent.' }),
    device_id: Nullable(Type.String({ description: 'The device the notification concerns.' })),
    gtfs_id: Nullable(Type.String({ description: 'The GTFS version the notification concerns.' })),
    transport: StringEnum(['log', 'webhook'] as const, { description: 'log: written to the service log (no gateway configured); webhook: handed to the configured SMS gateway.' }),
    status: StringEnum(SMS_STATUSES, { description: 'sending: handed to the transport, no answer yet; sent: the transport accepted it; failed: it did not (see error).' }),
    error: Nullable(Type.String({ description: 'Why the transport refused it (failed).' })),
    provider_message_id: Nullable(Type.String({ description: 'The gateway\'s identifier of the message, when it gives one.' })),
    created_at: Type.String({ format: 'date-time' }),
    sent_at: Nullable(Type.String({ format: 'date-time', description: 'When the transport accepted it.' })),
  },
  { additionalProperties: false, title: 'SmsNotification', description: 'An SMS notification and what became of it.' },
));
export type SmsRecord = Static<typeof SmsRecord>;

export const SmsCount = component('SmsCount', Type.Object(
  {
    group_id: Type.String(),
    period: Nullable(Type.String({ description: 'The month counted (YYYY-MM, in the group\'s time zone); null: every month.' })),
    device_id: Nullable(Type.String({ description: 'The device filter, as given (null: every device).' })),
    gtfs_id: Nullable(Type.String({ description: 'The GTFS filter, as given (null: every version).' })),
    count: Type.Integer({ minimum: 0, description: 'SMS sent (accepted by the transport).' }),
    failed: Type.Integer({ minimum: 0, description: 'SMS the transport refused (not in count).' }),
  },
  { additionalProperties: false, title: 'SmsCount', description: 'The number of SMS sent by the group, over a month or all time.' },
));
export type SmsCount = Static<typeof SmsCount>;
