/** SMS notifications: what is sent, what is recorded, what is counted. */
import { Type, type Static } from 'typebox';
import { Nullable, StringEnum } from '../../platform/http/params.js';

export const SMS_STATUSES = ['sending', 'sent', 'failed'] as const;

export const SmsBody = Type.Object(
  {
    to: Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'The recipient\'s phone number in E.164 form (+33612345678).' }),
    message: Type.String({ minLength: 1, maxLength: 1600, description: 'The text (long messages are split by the gateway).' }),
    device_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'The device the notification concerns (it must exist in the group).' })),
    gtfs_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The GTFS version the notification concerns.' })),
  },
  { additionalProperties: false },
);
export type SmsBody = Static<typeof SmsBody>;

export const SmsRecord = Type.Object(
  {
    notification_id: Type.String(),
    group_id: Type.String(),
    to: Type.String(),
    message: Type.String(),
    device_id: Nullable(Type.String()),
    gtfs_id: Nullable(Type.String()),
    transport: Type.String({ description: 'log or webhook.' }),
    status: StringEnum(SMS_STATUSES, { description: 'sending: handed to the transport, no answer yet; sent: the transport accepted it; failed: it did not (see error).' }),
    error: Nullable(Type.String()),
    provider_message_id: Nullable(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    sent_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false, title: 'SmsNotification' },
);
export type SmsRecord = Static<typeof SmsRecord>;

export const SmsCount = Type.Object(
  {
    group_id: Type.String(),
    period: Nullable(Type.String({ description: 'The month counted (YYYY-MM, in the group\'s time zone); null: every month.' })),
    device_id: Nullable(Type.String()),
    gtfs_id: Nullable(Type.String()),
    count: Type.Integer({ description: 'SMS sent (accepted by the transport).' }),
    failed: Type.Integer({ description: 'SMS the transport refused (not in count).' }),
  },
  { additionalProperties: false, title: 'SmsCount' },
);
export type SmsCount = Static<typeof SmsCount>;
