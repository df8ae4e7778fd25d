/**
 * The records of the trips domain as the documents name them (issue #18 §1): the trip object
 * (spec: Resources, Trip), the trips of a date, the trip-tracking stats. Definitions of statuses,
 * delays and kilometres: trips/tracking.ts and routes.ts (DEFINITIONS).
 */
import { Type, type Static } from 'typebox';
import { component, ref } from '../../platform/http/components.js';
import { Nullable, StringEnum } from '../../platform/http/params.js';
import { Detour, Message, Place, UPDATE_KINDS } from '../updates/schemas.js';
import { STOP_STATUSES, TRIP_STATUSES } from './tracking.js';

const closed = { additionalProperties: false } as const;
const Instant = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });
const TRIP_STATUS_VALUES = Object.keys(TRIP_STATUSES) as (keyof typeof TRIP_STATUSES)[];
const STOP_STATUS_VALUES = Object.keys(STOP_STATUSES) as (keyof typeof STOP_STATUSES)[];
export const TripStatus = StringEnum(TRIP_STATUS_VALUES, { description: Object.entries(TRIP_STATUSES).map(([k, v]) => `\`${k}\`: ${v}`).join('; ') });
const Km = (description: string) => Type.Number({ description: `${description}, in km` });

export const TripStop = component('TripStop', Type.Object({
  stop_id: Type.String(),
  stop_sequence: Type.Integer(),
  stop_name: Nullable(Type.String()),
  scheduled_arrival_at: Nullable(Instant()),
  scheduled_departure_at: Nullable(Instant()),
  scheduled_at: Nullable(Instant('The scheduled time the delay is measured against: departure (arrival for the last stop).')),
  actual_at: Nullable(Instant('When the stop was passed (its departure; the last stop: its arrival).')),
  source: Nullable(StringEnum(['event', 'position'] as const, { description: 'How actual_at was found: a trip event of the stop, or the positions.' })),
  actual_arrival_at: Nullable(Instant()),
  actual_departure_at: Nullable(Instant()),
  dwell_seconds: Nullable(Type.Number({ description: 'actual_departure_at − actual_arrival_at, in seconds.' })),
  delay_seconds: Nullable(Type.Number({ description: 'actual_at − scheduled_at, in seconds, negative when early.' })),
  status: StringEnum(STOP_STATUS_VALUES, { description: Object.entries(STOP_STATUSES).map(([k, v]) => `\`${k}\`: ${v}`).join('; ') }),
  vehicle_id: Nullable(Type.String({ description: 'The vehicle that passed the stop.' })),
  boardings: Type.Integer(),
  alightings: Type.Integer(),
  moved_to: Type.Optional(ref(Place)),
}, { ...closed, description: 'A scheduled stop of a trip with what was recorded there. `moved_to` (with merge=true): where a trip update serves it instead.' }));

export const TripAddedStop = component('TripAddedStop', Type.Object({
  stop_id: Nullable(Type.String()),
  stop_sequence: Type.Null(),
  stop_name: Nullable(Type.String()),
  place: ref(Place),
  status: Type.Literal('added'),
  update_id: Type.String(),
  scheduled_at: Type.Null(),
  actual_at: Type.Null(),
  delay_seconds: Type.Null(),
}, { ...closed, description: 'With merge=true: a stop a trip update adds, in place in the stop list.' }));

export const AddedStopOfTrip = component('AddedStopOfTrip', Type.Object({
  update_id: Type.String(),
  place: ref(Place),
  after_stop_sequence: Type.Integer({ description: 'The stop_sequence of the scheduled stop it follows.' }),
  travel_seconds: Nullable(Type.Integer({ description: 'Scheduled travel time from the stop it follows, in seconds.' })),
}, { ...closed, description: 'A stop a trip update adds to a trip, after a scheduled stop.' }));

const Ids = (description: string) => Type.Array(Type.String(), { description });

export const Trip = component('Trip', Type.Object({
  id: Type.String({ description: 'The trip_id.' }),
  service_date: Type.String({ format: 'date' }),
  start_time: Nullable(Type.String({ description: 'The start time (HH:MM:SS) of the instance shown of a frequency-based trip; else null.' })),
  departure_time: Nullable(Instant('Scheduled first departure.')),
  arrival_time: Nullable(Instant('Scheduled last arrival.')),
  formatted_name: Type.String({ description: 'Route short name, → headsign, start HH:MM.' }),
  headsign: Nullable(Type.String()),
  direction_id: Nullable(Type.Integer()),
  block_id: Nullable(Type.String()),
  temporality: StringEnum(['past', 'current', 'future'] as const),
  status: TripStatus,
  route: Type.Object({ id: Nullable(Type.String()), color: Nullable(Type.String()), long_name: Nullable(Type.String()), short_name: Nullable(Type.String()), text_color: Nullable(Type.String()) }, closed),
  first_stop: Nullable(Type.Object({ id: Type.String(), name: Nullable(Type.String()), stop_sequence: Type.Integer() }, closed)),
  last_stop: Nullable(Type.Object({ id: Type.String(), name: Nullable(Type.String()), stop_sequence: Type.Integer() }, closed)),
  passenger_count: Type.Object({
    boardings: Type.Integer(), alightings: Type.Integer(),
    loading: Type.Integer({ description: 'The largest number on board between two stops.' }),
  }, { ...closed, description: 'Summed over doors and categories.' }),
  tk: Nullable(Km('Planned kilometres')),
  vk: Km('Kilometres driven'),
  percent_km: Nullable(Type.Number({ description: 'recorded_commercial_km / tk × 100, one decimal.' })),
  off_itinerary_km: Km('Part of vk off the itinerary'),
  recorded_commercial_km: Km('Progress along the itinerary, at most tk'),
  unreliable_km: Km('vk − reliable_km'),
  reliable_km: Km('Part of vk between valid fixes close in time'),
  current_delay_seconds: Nullable(Type.Number({ description: 'The delay at the last stop passed, in seconds.' })),
  delay: Type.Array(Type.Union([ref(TripStop), ref(TripAddedStop)]), { description: 'The stops, in order (with merge=true, the added stops in place).' }),
  vehicles: Type.Array(Type.Object({
    id: Type.String(), fleet_number: Nullable(Type.String()), license_plate: Nullable(Type.String()), teams: Nullable(Type.Array(Type.String())),
  }, closed), { description: 'The vehicles that recorded the trip, first seen first; another team\'s: id only.' }),
  drivers: Type.Array(Type.Object({
    id: Type.String(), driver_name: Nullable(Type.String()), staff_number: Nullable(Type.String()), teams: Nullable(Type.Array(Type.String())),
  }, closed), { description: 'The drivers that recorded the trip; another team\'s: id only.' }),
  devices: Type.Array(Type.Object({ id: Type.String(), label: Nullable(Type.String()) }, closed), { description: 'The devices that recorded the trip; a device the caller does not see: id only.' }),
  trips: Type.Array(Type.Object({ device_id: Type.String(), started_at: Instant(), ended_at: Nullable(Instant()) }, closed), { description: 'The recorded runs of the trip (a vehicle swap gives two).' }),
  gtfs: Type.Array(Type.Object({ id: Type.String(), name: Nullable(Type.String()), publication_date: Nullable(Instant()) }, closed), { description: 'The GTFS version in force on the date (none or one).' }),
  updates: Type.Object({
    cancelled: Type.Boolean(),
    skipped_stops: Type.Array(Type.Object({ stop_sequence: Type.Integer(), update_id: Type.String() }, closed)),
    moved_stops: Type.Array(Type.Object({ stop_sequence: Type.Integer(), update_id: Type.String(), place: ref(Place) }, closed)),
    added_stops: Type.Array(ref(AddedStopOfTrip)),
    // The record's own fields plus the update's: one closed object (an allOf of a closed record
    // and the extra fields would refuse the extra fields).
    detour: Nullable(Type.Object({ ...Detour.properties, update_id: Type.String() }, { ...closed, description: 'The detour in force (a Detour record) and the update that made it.' })),
    messages: Type.Array(Type.Object({ ...Message.properties, update_id: Type.String(), kind: StringEnum(UPDATE_KINDS) }, { ...closed, description: 'A message in force (a Message record) and the update that made it.' })),
    applied: Type.Array(Type.Object({
      update_id: Type.String(), kind: StringEnum(UPDATE_KINDS), is_detour: Type.Boolean(), start_date: Type.String({ format: 'date' }), end_date: Type.String({ format: 'date' }),
    }, closed)),
  }, { ...closed, description: 'The trip updates in force on the date.' }),
  problems: Type.Object({
    no_sign_on: Type.Optional(Type.Object({ planned_vehicle_ids: Ids('planned vehicles'), planned_driver_ids: Ids('planned drivers') }, closed)),
    different_vehicle: Type.Optional(Type.Object({ planned: Ids('planned'), recorded: Ids('recorded') }, closed)),
    different_driver: Type.Optional(Type.Object({ planned: Ids('planned'), recorded: Ids('recorded') }, closed)),
    vehicle_change: Type.Optional(Type.Object({ vehicle_ids: Ids('the vehicles, first seen first') }, closed)),
    missing_stops: Type.Optional(Type.Object({ stops: Type.Array(Type.Object({ stop_id: Type.String(), stop_sequence: Type.Integer() }, closed)) }, closed)),
    gps_unreliable: Type.Optional(Type.Object({ unreliable_km: Type.Number(), vk: Type.Number() }, closed)),
    off_itinerary: Type.Optional(Type.Object({ off_itinerary_km: Type.Number() }, closed)),
    operated_while_cancelled: Type.Optional(Type.Object({ update_ids: Ids('the cancelling updates') }, closed)),
  }, { ...closed, description: 'Keyed by problem; empty when there is nothing to look at.' }),
  service: Type.Object({ recorded_stops: Type.Integer(), planned_stops: Type.Integer() }, closed),
  planned: Type.Object({ vehicle_ids: Ids('planning\'s vehicles'), driver_ids: Ids('planning\'s drivers') }, closed),
  predictions: Type.Array(Type.Object({
    stop_id: Type.String(), stop_sequence: Type.Integer(), arrival_at: Instant(), departure_at: Instant(),
    uncertainty_seconds: Type.Number({ description: 'One standard deviation, in seconds.' }),
    basis: StringEnum(['history', 'schedule'] as const, { description: '`history`: running times learned from the group\'s tracking; `schedule`: too little history.' }),
  }, closed), { description: 'For a trip in progress, the stops ahead; empty otherwise.' }),
}, { ...closed, description: 'A trip on a service date: its schedule, what was recorded, and the gap between them.' }));
export type Trip = Static<typeof Trip>;

export const TripOfDay = component('TripOfDay', Type.Object({
  kind: StringEnum(['recorded', 'scheduled'] as const, { description: '`recorded`: something was recorded for the trip; `scheduled`: the schedule only.' }),
  id: Type.String({ description: 'The trip_id.' }),
  service_date: Type.String({ format: 'date' }),
  start_time: Nullable(Type.String()),
  route_id: Nullable(Type.String()),
  headsign: Nullable(Type.String()),
  direction_id: Nullable(Type.Integer()),
  block_id: Nullable(Type.String()),
  departure_time: Nullable(Instant('Scheduled first departure.')),
  arrival_time: Nullable(Instant('Scheduled last arrival.')),
  status: TripStatus,
  delay_seconds: Nullable(Type.Number()),
  started_at: Nullable(Instant()),
  ended_at: Nullable(Instant()),
  recorded_stops: Type.Integer(),
  planned_stops: Type.Integer(),
  vehicle_ids: Type.Array(Type.String()),
  driver_ids: Type.Array(Type.String()),
  device_ids: Type.Array(Type.String()),
}, { ...closed, description: 'A trip of a date, recorded or scheduled.' }));
export type TripOfDay = Static<typeof TripOfDay>;

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Seconds = (description: string) => Nullable(Type.Number({ description: `${description}, in seconds; null without stop passages` }));
/** The figures of stats/trip-tracking, for the whole period and for each day, route and team. */
const figures = {
  trips: Count('Trips: scheduled on the dates plus those recorded without being scheduled'),
  ...Object.fromEntries(TRIP_STATUS_VALUES.map((s) => [`${s}_trips`, Count(`Trips of status ${s}`)])) as Record<`${keyof typeof TRIP_STATUSES}_trips`, ReturnType<typeof Count>>,
  missing_trips: Count('= not_done_trips'),
  stop_passages: Count('Stops passed with a scheduled time'),
  early: Count('Stop passages earlier than windows.early_before_seconds'),
  on_time: Count('Stop passages within the windows (inclusive)'),
  late: Count('Stop passages later than windows.late_after_seconds'),
  punctuality_percent: Nullable(Type.Number({ description: 'on_time / stop_passages × 100, one decimal' })),
  average_delay_seconds: Seconds('Average delay'),
  p50_delay_seconds: Seconds('Median delay (nearest rank)'),
  p90_delay_seconds: Seconds('90th percentile of the delay (nearest rank)'),
  p95_delay_seconds: Seconds('95th percentile of the delay (nearest rank)'),
  max_delay_seconds: Seconds('Largest delay'),
  tk: Km('Planned kilometres of the trips not cancelled'),
  vk: Km('Kilometres driven'),
  recorded_commercial_km: Km('Progress along the itineraries'),
  off_itinerary_km: Km('Part of vk off the itineraries'),
  reliable_km: Km('Part of vk between valid fixes close in time'),
  unreliable_km: Km('vk − reliable_km'),
  percent_km: Nullable(Type.Number({ description: 'recorded_commercial_km / tk × 100, one decimal; null when tk is 0' })),
};

export const TripTrackingFigures = component('TripTrackingFigures', Type.Object(figures, { ...closed, description: 'Punctuality, delays, trips by status and kilometres over a set of trips.' }));

export const TripTrackingStats = component('TripTrackingStats', Type.Object({
  start_date: Type.String({ format: 'date' }),
  end_date: Type.String({ format: 'date' }),
  windows: Type.Object({ early_before_seconds: Type.Integer(), late_after_seconds: Type.Integer() }, { ...closed, description: 'The punctuality windows, in seconds of delay.' }),
  total: ref(TripTrackingFigures),
  by_day: Type.Array(Type.Object({ service_date: Type.String({ format: 'date' }), ...figures }, closed)),
  by_route: Type.Array(Type.Object({ route_id: Type.String({ description: 'Empty for trips recorded without a known route.' }), ...figures }, closed)),
  by_team: Type.Optional(Type.Array(Type.Object({ team_id: Type.String(), ...figures }, closed), { description: 'With group_by_team=true: a trip counts for every team of its vehicles and drivers.' })),
}, { ...closed, description: 'stats/trip-tracking: the figures over a period, in total and by day, route and (on request) team.' }));
