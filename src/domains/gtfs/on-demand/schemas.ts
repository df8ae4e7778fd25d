import { Type, type Static } from 'typebox';
import { Nullable, StringEnum } from '../../../platform/http/params.js';

export const ON_DEMAND_STATUSES = ['active', 'inactive', 'archived'] as const;
export const OnDemandStatus = StringEnum(ON_DEMAND_STATUSES, {
  description: '`active`: bookable; `inactive`: shown but not bookable (a season, a suspension); `archived`: withdrawn, kept for history and hidden from public reads. Any status may change to any other (archiving is not deletion: a route can be restored).',
});
export const PublicOnDemandStatus = StringEnum(['active', 'inactive'] as const);

export const OnDemandRouteId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$', description: 'Identifier of the on-demand route, chosen by the operator.' });
const Color = Type.String({ pattern: '^[0-9A-Fa-f]{6}$', description: 'Six hexadecimal digits, as GTFS route_color.' });

export const OnDemandStop = Type.Object(
  {
    stop_id: Type.String({ minLength: 1, maxLength: 128, description: 'Identifier of the stop within the route. It never names a stop of the GTFS feed, even when the text is the same.' }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    lat: Type.Number({ minimum: -90, maximum: 90 }),
    lon: Type.Number({ minimum: -180, maximum: 180 }),
  },
  { additionalProperties: false, title: 'OnDemandStop' },
);

const routeFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  short_name: Nullable(Type.String({ maxLength: 50 })),
  description: Nullable(Type.String({ maxLength: 2000 })),
  color: Nullable(Color),
  text_color: Nullable(Color),
};

export const PublicOnDemandRoute = Type.Object(
  {
    route_id: Type.String(),
    ...routeFields,
    status: PublicOnDemandStatus,
    stops: Type.Array(OnDemandStop, { description: 'In the order of the route.' }),
  },
  { title: 'PublicOnDemandRoute' },
);
export type PublicOnDemandRoute = Static<typeof PublicOnDemandRoute>;

export const OnDemandRoute = Type.Object(
  {
    route_id: Type.String(),
    ...routeFields,
    status: OnDemandStatus,
    stops: Type.Array(OnDemandStop),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'OnDemandRoute' },
);
export type OnDemandRoute = Static<typeof OnDemandRoute>;

const Stops = (description: string) => Type.Array(OnDemandStop, { maxItems: 1000, description: `${description} stop_id is unique within the route.` });

export const CreateOnDemandRoute = Type.Object(
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
  { additionalProperties: false, description: 'status defaults to active.' },
);
export type CreateOnDemandRoute = Static<typeof CreateOnDemandRoute>;

export const PatchOnDemandRoute = Type.Object(
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
);
export type PatchOnDemandRoute = Static<typeof PatchOnDemandRoute>;
