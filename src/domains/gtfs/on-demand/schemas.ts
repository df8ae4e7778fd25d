import { Type, type Static } from 'typebox';
import { Nullable, StringEnum } from '../../../platform/http/params.js';
import { component, ref } from '../../../platform/http/components.js';

export const ON_DEMAND_STATUSES = ['active', 'inactive', 'archived'] as const;
export const OnDemandStatus = StringEnum(ON_DEMAND_STATUSES, {
  description: '`active`: bookable; `inactive`: shown but not bookable (a season, a suspension); `archived`: withdrawn, kept for history and hidden from public reads. Any status may change to any other (archiving is not deletion: a route can be restored).',
});
export const PublicOnDemandStatus = StringEnum(['active', 'inactive'] as const, { description: '`active`: bookable; `inactive`: shown but not bookable.' });

export const OnDemandRouteId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$', description: 'Identifier of the on-demand route, chosen by the operator.' });
const Color = Type.String({ pattern: '^[0-9A-Fa-f]{6}$', description: 'Six hexadecimal digits, as GTFS route_color.' });

export const OnDemandStop = component('OnDemandStop', Type.Object(
  {
    stop_id: Type.String({ minLength: 1, maxLength: 128, description: 'Identifier of the stop within the route. It never names a stop of the GTFS feed, even when the text is the same.' }),
    name: Type.String({ minLength: 1, maxLength: 200, description: 'The stop\'s name, for passengers.' }),
    lat: Type.Number({ minimum: -90, maximum: 90, description: 'Latitude (WGS 84 degrees).' }),
    lon: Type.Number({ minimum: -180, maximum: 180, description: 'Longitude (WGS 84 degrees).' }),
  },
  { additionalProperties: false, title: 'OnDemandStop', description: 'A stop of an on-demand route.' },
));

const routeFields = {
  name: Type.String({ minLength: 1, maxLength: 200, description: 'The route\'s name, for passengers.' }),
  short_name: Nullable(Type.String({ maxLength: 50, description: 'A short name (as GTFS route_short_name).' })),
  description: Nullable(Type.String({ maxLength: 2000, description: 'How the service works, for passengers.' })),
  color: Nullable(Color),
  text_color: Nullable(Color),
};

export const PublicOnDemandRoute = component('PublicOnDemandRoute', Type.Object(
  {
    route_id: Type.String({ description: 'Identifier of the on-demand route.' }),
    ...routeFields,
    status: PublicOnDemandStatus,
    stops: Type.Array(ref(OnDemandStop), { description: 'In the order of the route.' }),
  },
  { additionalProperties: false, title: 'PublicOnDemandRoute', description: 'What anyone may read of an on-demand route (never an archived one).' },
));
export type PublicOnDemandRoute = Static<typeof PublicOnDemandRoute>;

export const OnDemandRoute = component('OnDemandRoute', Type.Object(
  {
    route_id: Type.String({ description: 'Identifier of the on-demand route.' }),
    ...routeFields,
    status: OnDemandStatus,
    stops: Type.Array(ref(OnDemandStop), { description: 'In the order of the route.' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false, title: 'OnDemandRoute', description: 'A route served on demand, with its own stops (never stops of the GTFS feed).' },
));
export type OnDemandRoute = Static<typeof OnDemandRoute>;

const Stops = (description: string) => Type.Array(ref(OnDemandStop), { maxItems: 1000, description: `${description} stop_id is unique within the route.` });

export const CreateOnDemandRoute = component('OnDemandRouteCreateBody', Type.Object(
  {
    route_id: OnDemandRouteId,
    name: routeFields.name,
    short_name: Type.Optional(routeFields.short_name),
    description: Type.Optional(routeFields.description),
    color: Type.Optional(routeFields.color),
    text_color: Type.Optional(routeFields.text_color),
    status: Type.Optional(OnDemandStatus),
    stops: Stops('The stops in route order.'),
  },
  { additionalProperties: false, description: 'A new on-demand route; status defaults to active.' },
));
export type CreateOnDemandRoute = Static<typeof CreateOnDemandRoute>;

export const PatchOnDemandRoute = component('OnDemandRoutePatchBody', Type.Object(
  {
    name: Type.Optional(routeFields.name),
    short_name: Type.Optional(routeFields.short_name),
    description: Type.Optional(routeFields.description),
    color: Type.Optional(routeFields.color),
    text_color: Type.Optional(routeFields.text_color),
    status: Type.Optional(OnDemandStatus),
    stops: Type.Optional(Stops('Replaces the whole list of stops, in route order.')),
  },
  { additionalProperties: false, description: 'Only the fields sent change; null clears an optional field.' },
));
export type PatchOnDemandRoute = Static<typeof PatchOnDemandRoute>;
