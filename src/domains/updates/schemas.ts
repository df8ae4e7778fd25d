/**
 * Trip updates: a gap against the schedule decided by the operator, for a trip (or every trip of a
 * route) over a range of service dates. One update is one kind of change; several updates of a
 * trip in force on a date apply together (see the rule in overlay.ts).
 */
import { Type, type Static } from 'typebox';
import { component, ref } from '../../platform/http/components.js';
import { DateEither, HttpUrl, Nullable, StringEnum } from '../../platform/http/params.js';

export const UPDATE_KINDS = ['cancel', 'skip_stop', 'move_stop', 'add_stop', 'detour', 'message'] as const;
export type UpdateKind = (typeof UPDATE_KINDS)[number];

const StopId = Type.String({ minLength: 1, maxLength: 255 });
export const StopRef = component('StopRef', Type.Object(
  {
    stop_id: Type.Optional(StopId),
    stop_sequence: Type.Optional(Type.Integer({ minimum: 0, description: 'Only for an update of one trip: which call of the trip (a stop may be served twice).' })),
  },
  { additionalProperties: false, minProperties: 1, description: 'A stop of the trip: its stop_id, or its stop_sequence (trip updates only), or both (they must agree).' },
));
export type StopRef = Static<typeof StopRef>;

export const Place = component('Place', Type.Object(
  {
    stop_id: Type.Optional(StopId),
    lat: Type.Optional(Type.Number({ minimum: -90, maximum: 90 })),
    lon: Type.Optional(Type.Number({ minimum: -180, maximum: 180 })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false, description: 'A stop of the GTFS (stop_id), or a temporary stop (lat, lon and name).' },
));
export type Place = Static<typeof Place>;

export const AddedStop = component('AddedStop', Type.Object(
  {
    place: ref(Place),
    after: ref(StopRef),
    travel_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 7200, description: 'Scheduled travel time from the stop it follows (default: half-way to the next stop).' })),
  },
  { additionalProperties: false, description: 'A stop served too: where, after which stop of the trip.' },
));
export type AddedStop = Static<typeof AddedStop>;

export const GTFS_RT_CAUSES = ['UNKNOWN_CAUSE', 'OTHER_CAUSE', 'TECHNICAL_PROBLEM', 'STRIKE', 'DEMONSTRATION', 'ACCIDENT', 'HOLIDAY', 'WEATHER', 'MAINTENANCE', 'CONSTRUCTION', 'POLICE_ACTIVITY', 'MEDICAL_EMERGENCY'] as const;
export const GTFS_RT_EFFECTS = ['NO_SERVICE', 'REDUCED_SERVICE', 'SIGNIFICANT_DELAYS', 'DETOUR', 'ADDITIONAL_SERVICE', 'MODIFIED_SERVICE', 'OTHER_EFFECT', 'UNKNOWN_EFFECT', 'STOP_MOVED', 'NO_EFFECT', 'ACCESSIBILITY_ISSUE'] as const;

export const Message = component('Message', Type.Object(
  {
    header: Type.String({ minLength: 1, maxLength: 200, description: 'The short text passengers see first.' }),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
    url: Type.Optional(HttpUrl({ maxLength: 500, description: 'A page with more information.' })),
    severity: StringEnum(['info', 'warning', 'severe'] as const, { default: 'warning' }),
    cause: StringEnum(GTFS_RT_CAUSES, { default: 'UNKNOWN_CAUSE', description: 'GTFS-Realtime Alert cause.' }),
    effect: Type.Optional(StringEnum(GTFS_RT_EFFECTS, { description: 'GTFS-Realtime Alert effect; by default derived from the kind (cancel: NO_SERVICE, detour: DETOUR, skip_stop and move_stop: STOP_MOVED / MODIFIED_SERVICE, add_stop: ADDITIONAL_SERVICE, message: OTHER_EFFECT).' })),
    language: Type.Optional(Type.String({ pattern: '^[a-z]{2}(-[A-Z]{2})?$', description: 'BCP 47 language of the texts (e.g. fr, en-GB).' })),
  },
  { additionalProperties: false, description: 'A message for passengers (GTFS-Realtime Alert, SIRI situation).' },
));
export type Message = Static<typeof Message>;

export const Detour = component('Detour', Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200 })),
    shape: Type.Array(Type.Tuple([Type.Number({ minimum: -180, maximum: 180 }), Type.Number({ minimum: -90, maximum: 90 })]), {
      minItems: 2,
      maxItems: 5000,
      description: 'The path driven, as [lon, lat] points from the first stop left out to the stop where the trip rejoins its route.',
    }),
    skipped_stops: Type.Array(ref(StopRef), { minItems: 1, maxItems: 200, description: 'The stops of the trip not served during the detour.' }),
    added_stops: Type.Array(ref(AddedStop), { maxItems: 50, description: 'Temporary or other stops served instead.' }),
  },
  { additionalProperties: false, description: 'A detour: the path driven, the stops left out and those served instead.' },
));
export type Detour = Static<typeof Detour>;

export const StartTime = Type.String({ pattern: '^[0-9]{1,2}:[0-5][0-9]:[0-5][0-9]$', description: 'For a frequency-based trip: the start time of the instance (HH:MM:SS).' });

export const PutTripUpdateBody = component('TripUpdateBody', Type.Object(
  {
    update_id: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$', description: 'Chosen by the client: the same id with the same body answers the same record (a retry); with another body, 409.' }),
    kind: StringEnum(UPDATE_KINDS),
    trip_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'The trip; or route_id for every trip of the route.' })),
    route_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    start_time: Type.Optional(StartTime),
    start_date: DateEither('First service date the update is in force.'),
    end_date: DateEither('Last service date the update is in force (included).'),
    stop: Type.Optional(ref(StopRef)),
    replacement: Type.Optional(ref(Place)),
    added_stop: Type.Optional(ref(AddedStop)),
    detour: Type.Optional(ref(Detour)),
    message: Type.Optional(ref(Message)),
  },
  {
    additionalProperties: false,
    description:
      'cancel: the trip does not run. skip_stop: `stop` is not served. move_stop: `stop` is served at `replacement` instead. add_stop: `added_stop` is served too. ' +
      'detour: the trip takes `detour.shape`, leaves out `detour.skipped_stops` and serves `detour.added_stops`. message: only `message` for passengers. ' +
      '`message` is optional on every kind but message. Give trip_id (with start_time for a frequency instance) or route_id.',
  },
));
export type PutTripUpdateBody = Static<typeof PutTripUpdateBody>;

export const EndTripUpdateBody = component('TripUpdateEndBody', Type.Object({ end_date: Type.Optional(DateEither('The new last date (included).')) }, { additionalProperties: false, description: 'Ends a trip update early: its last date becomes end_date (default: today).' }));

export const UPDATE_STATUSES = ['scheduled', 'in_force', 'over', 'removed'] as const;

export const TripUpdateRecord = component('TripUpdate', Type.Object({
  update_id: Type.String(),
  sequence: Type.Integer({ description: 'The order updates were recorded in (the overlap rule applies them in this order).' }),
  kind: StringEnum(UPDATE_KINDS),
  is_detour: Type.Boolean({ description: 'true for a detour (spec: a detour is identified as such)' }),
  trip_id: Nullable(Type.String()),
  route_id: Nullable(Type.String()),
  start_time: Nullable(Type.String()),
  start_date: Type.String({ format: 'date' }),
  end_date: Type.String({ format: 'date' }),
  stop: Nullable(ref(StopRef)),
  replacement: Nullable(ref(Place)),
  added_stop: Nullable(ref(AddedStop)),
  detour: Nullable(ref(Detour)),
  message: Nullable(ref(Message)),
  status: StringEnum(UPDATE_STATUSES, { description: 'scheduled: starts later; in_force: in force today (group time zone); over: its last date has passed; removed.' }),
  created_at: Type.String({ format: 'date-time' }),
  created_by: Nullable(Type.String()),
  ended_at: Nullable(Type.String({ format: 'date-time', description: 'When it was ended early (its end_date was moved)' })),
  removed_at: Nullable(Type.String({ format: 'date-time' })),
}, { additionalProperties: false, description: 'A trip update: a gap against the schedule decided by the operator, over a range of service dates.' }));
export type TripUpdateRecord = Static<typeof TripUpdateRecord>;
