import { Type, type Static } from 'typebox';
import { component } from '../../platform/http/components.js';
import { FEATURES } from '../../platform/http/access.js';
import { GroupId, StringEnum } from '../../platform/http/params.js';

export const Feature = StringEnum(FEATURES, { description: 'device_event_sourcing and on_demand enable on-demand routes; rail_data enables rail station links.' });

const Hostname = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$',
  description: 'Host name of the OpenID Connect tenant, without scheme or path (e.g. example.eu.auth0.com).',
});

export const LegacyAuth = Type.Object({ provider: Type.Literal('legacy', { description: 'Users log in with their email and password (POST /login).' }) }, { additionalProperties: false });
export const Auth0Auth = Type.Object(
  {
    provider: Type.Literal('auth0', { description: 'Users log in through an OpenID Connect tenant.' }),
    domain: Hostname,
    connection: Type.String({ minLength: 1, maxLength: 200, description: 'The tenant\'s connection users log in with.' }),
    audience: Type.String({ minLength: 1, maxLength: 500, description: 'The audience (aud) the tokens must carry.' }),
  },
  { additionalProperties: false },
);
export const GroupAuth = Type.Union([LegacyAuth, Auth0Auth], { description: 'How users of the group log in: email and password (legacy), or OpenID Connect (auth0).' });
export type GroupAuth = Static<typeof GroupAuth>;

export const Timezone = Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone of the network; service days are computed in it.', examples: ['Europe/Paris'] });

export const GroupRecord = component('Group', Type.Object({
  group_id: Type.String({ description: 'The group identifier (a network).' }),
  name: Type.String({ description: 'Display name of the network.' }),
  features: Type.Array(Feature, { description: 'The optional features enabled for the group.' }),
  auth: GroupAuth,
  timezone: Type.String({ description: 'IANA time zone of the network; service days are computed in it.' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}, { additionalProperties: false, description: 'An operated network: all data belongs to exactly one group.' }));
export type GroupRecord = Static<typeof GroupRecord>;

export const CreateGroupBody = component('GroupCreateBody', Type.Object(
  {
    group_id: GroupId,
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Display name of the network.' }),
    features: Type.Optional(Type.Array(Feature, { uniqueItems: true })),
    auth: Type.Optional(GroupAuth),
    timezone: Type.Optional(Timezone),
  },
  { additionalProperties: false, description: 'A new group: features default to none, auth to legacy, timezone to the service\'s default.' },
));
export type CreateGroupBody = Static<typeof CreateGroupBody>;

export const PatchGroupBody = component('GroupPatchBody', Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Display name of the network.' })),
    features: Type.Optional(Type.Array(Feature, { uniqueItems: true })),
    auth: Type.Optional(GroupAuth),
    timezone: Type.Optional(Timezone),
  },
  { additionalProperties: false, description: 'The fields to change; the others keep their values.' },
));
export type PatchGroupBody = Static<typeof PatchGroupBody>;

export const TeamId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', description: 'Team identifier (a depot, an area, a subcontractor).' });
export const TeamRecord = component('Team', Type.Object(
  { group_id: Type.String(), team_id: Type.String({ description: 'Team identifier, unique in the group.' }), name: Type.String({ description: 'Display name.' }), created_at: Type.String({ format: 'date-time' }) },
  { additionalProperties: false, description: 'A part of the group (a depot, an area, a subcontractor) that drivers, vehicles and users\' rights are attached to.' },
));
export type TeamRecord = Static<typeof TeamRecord>;
export const CreateTeamBody = component('TeamCreateBody', Type.Object({ team_id: TeamId, name: Type.String({ minLength: 1, maxLength: 200, description: 'Display name.' }) }, { additionalProperties: false, description: 'A new team.' }));
