/**
 * The live stream's messages (spec: Events 1 leaves shapes and kinds open: these are ours).
 * Every message is one JSON text frame: an envelope `{type, group_id, at, data}`.
 */
import { Type, type Static } from 'typebox';
import { StringEnum } from '../../platform/http/params.js';
import { TRIP_UPDATE_ACTIONS } from '../updates/notices.js';

/** Device report item type → message type. */
export const DEVICE_MESSAGE_TYPES = {
  position: 'vehicle_position',
  trip_event: 'trip_event',
  trip_start: 'trip_start',
  trip_end: 'trip_end',
  sign_on: 'duty_sign_on',
  sign_off: 'duty_sign_off',
  device_state: 'device_state',
  passenger_count: 'passenger_count',
  vehicle_movement: 'vehicle_movement',
} as const;

export const EVENT_TYPES = [...Object.values(DEVICE_MESSAGE_TYPES), 'trip_update'] as const;
export const CONTROL_TYPES = ['subscribed', 'error'] as const;
export const MESSAGE_TYPES = [...EVENT_TYPES, ...CONTROL_TYPES] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

export interface Envelope {
  type: MessageType;
  group_id: string;
  at: string;
  data: Record<string, unknown>;
}

/** Close codes (4000–4999 are the application's; the reason is the error name). */
export const CLOSE = {
  /** No credential within the time allowed, a first message that is not {"session_id": "…"}, or a credential invalid, expired or revoked. */
  unauthenticated: 4401,
  /** The credential has no role in the group, a role not allowed, a scope without `read`, or a password session on a group delegated to OpenID Connect. */
  forbidden: 4403,
  /** The group does not exist. */
  groupNotFound: 4404,
  /** The client did not read its messages: more than LIVE_MAX_BUFFERED_BYTES waiting. */
  slowClient: 4429,
  /** An unexpected failure on our side. */
  internalError: 1011,
  /** The server is shutting down: reconnect (to another instance). */
  goingAway: 1001,
} as const;

const Attribution = {
  device_id: Type.String(),
  duty_id: Type.Union([Type.String(), Type.Null()], { description: 'The duty open on the device at `at`; null if none.' }),
  driver_id: Type.Union([Type.String(), Type.Null()]),
  vehicle_id: Type.Union([Type.String(), Type.Null()], { description: "The duty's vehicle; without a duty, the device's provisioned vehicle." }),
  id: Type.String({ description: 'The report item id (client UUID): stable across retries and instances.' }),
};

export const LiveMessage = Type.Object(
  {
    type: StringEnum(MESSAGE_TYPES),
    group_id: Type.String(),
    at: Type.String({ format: 'date-time', description: 'When it happened: the report item time (device clock), or the time of the operator action for trip_update.' }),
    data: Type.Object(
      {
        ...Object.fromEntries(Object.entries(Attribution).map(([k, v]) => [k, Type.Optional(v)])),
        action: Type.Optional(StringEnum(TRIP_UPDATE_ACTIONS, { description: 'trip_update: put (recorded), ended (ended early) or removed.' })),
        update: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'trip_update: the TripUpdateRecord as it stands (see PUT trip-updates).' })),
      },
      { additionalProperties: true, description: 'Device messages: the report item (its fields as sent, less `type` and `at`) with who it is about. trip_update: action and update. subscribed: role, teams. error: code, detail.' },
    ),
  },
  { title: 'LiveMessage' },
);
export type LiveMessage = Static<typeof LiveMessage>;

export const LiveQuery = Type.Object({
  batch: Type.Optional(Type.Boolean({
    default: true,
    description: 'true (default): each text frame is a JSON array of envelopes (the messages of one window); false: one envelope per text frame.',
  })),
});
export type LiveQuery = Static<typeof LiveQuery>;
