import { Type, type Static } from 'typebox';
import { Nullable } from '../../../platform/http/params.js';
import { component, ref } from '../../../platform/http/components.js';

export const StationId = Type.String({ minLength: 1, maxLength: 64, description: 'Identifier of the station in the referential (as imported).' });

export const RailStation = component('RailStation', Type.Object(
  {
    station_id: Type.String({ description: 'Identifier of the station in the referential.' }),
    name: Type.String({ description: 'The station\'s name.' }),
    code: Nullable(Type.String({ description: 'The station code of the open data set (UIC code, or another code the data set uses).' })),
    country: Nullable(Type.String({ description: 'ISO 3166-1 alpha-2 country code.' })),
    lat: Nullable(Type.Number({ minimum: -90, maximum: 90, description: 'Latitude (WGS 84 degrees), when the data set gives it.' })),
    lon: Nullable(Type.Number({ minimum: -180, maximum: 180, description: 'Longitude (WGS 84 degrees), when the data set gives it.' })),
  },
  { additionalProperties: false, title: 'RailStation', description: 'A station of the rail-station referential: open data, attached to no group.' },
));
export type RailStation = Static<typeof RailStation>;

export const RailStationLink = component('RailStationLink', Type.Object(
  {
    stop_id: Type.String({ description: 'A stop of the network (GTFS stop_id).' }),
    stop_name: Nullable(Type.String({ description: 'The stop name in the published GTFS; null when the stop is absent from it.' })),
    station_id: Type.String({ description: 'The linked rail station.' }),
    station: ref(RailStation),
    is_orphan: Type.Boolean({ description: 'The stop is absent from the currently published GTFS (or no GTFS is published). Recomputed at each publication.' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false, title: 'RailStationLink', description: 'Links a stop of the network to a rail station.' },
));
export type RailStationLink = Static<typeof RailStationLink>;

export const CreateRailStationLink = component('RailStationLinkCreateBody', Type.Object(
  {
    stop_id: Type.String({ minLength: 1, maxLength: 255, description: 'A GTFS stop_id of the network; a stop absent from the published GTFS is accepted and flagged is_orphan.' }),
    station_id: StationId,
  },
  { additionalProperties: false, description: 'A new link between a stop and a rail station.' },
));
export type CreateRailStationLink = Static<typeof CreateRailStationLink>;
