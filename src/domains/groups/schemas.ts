import { Type, type Static } from 'typebox';
import { FEATURES } from '../../platform/http/access.js';
import { GroupId, StringEnum } from '../../platform/http/params.js';

export const Feature = StringEnum(FEATURES, { description: 'device_event_sourcing and on_demand enable on-demand routes; rail_data enables rail station links.' });

const Hostname = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$',
  description: 'Host name of the OpenID Connect tenant, without scheme or path (e.g. example.eu.auth0.com).',
});

export const LegacyAuth = Type.Object({ provider: Type.Literal('legacy') }, { additionalProperties: false });
export const Auth0Auth = Type.Object(
  {
    provider: Type.Literal('auth0'),
    domain: Hostname,
    connection: Type.String({ minLength: 1, maxLength: 200 }),
    audience: Type.String({ minLength: 1, maxLength: 500, description: 'The audience (aud) the tokens must carry.' }),
  },
  { additionalProperties: false },
);
export const GroupAuth = Type.Union([LegacyAuth, Auth0Auth], { description: 'How users of the group log in: email and password (legacy), or OpenID Connect (auth0).' });
export type GroupAuth = Static<typeof GroupAuth>;

export const Timezone = Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone of the network; service days are computed in it.', examples: ['Europe/Paris'] });

export const GroupRecord = Type.Object({
  group_id: Type.String(),
  name: Type.String(),
  features: Type.Array(Feature),
  auth: GroupAuth,
  timezone: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type GroupRecord = Static<typeof GroupRecord>;

export const CreateGroupBody = Type.Object(
  {
    group_id: GroupId,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    features: Type.Optional(Type.Array(Feature, { uniqueItems: true })),
    auth: Type.Optional(GroupAuth),
    timezone: Type.Optional(Timezone),
  },
  { additionalProperties: false },
);
export type CreateGroupBody = Static<typeof CreateGroupBody>;

export const PatchGroupBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    features: Type.Optional(Type.Array(Feature, { uniqueItems: true })),
    auth: Type.Optional(GroupAuth),
    timezone: Type.Optional(Timezone),
  },
  { additionalProperties: false },
);
export type PatchGroupBody = Static<typeof PatchGroupBody>;

export const TeamId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', description: 'Team identifier (a depot, an area, a subcontractor).' });
export const TeamRecord = Type.Object({ group_id: Type.String(), team_id: Type.String(), name: Type.String(), created_at: Type.String({ format: 'date-time' }) });
export type TeamRecord = Static<typeof TeamRecord>;
export const CreateTeamBody = Type.Object({ team_id: TeamId, name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
