import { Type } from 'typebox';
import { component } from '../../platform/http/components.js';
import { ROLES, SCOPES } from '../../platform/http/access.js';
import { GroupId, StringEnum } from '../../platform/http/params.js';
import { EXPIRE_DESCRIPTION, EXPIRE_PATTERN } from './expire.js';

export const Role = StringEnum(ROLES);
export const ScopeName = StringEnum(SCOPES, { description: 'read, export, write, device, admin (see the document description).' });

export const Expire = Type.String({ pattern: EXPIRE_PATTERN, description: EXPIRE_DESCRIPTION });

export const LoginForm = component('LoginForm', Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320, description: 'The account\'s email address.' }),
    password: Type.String({ minLength: 1, maxLength: 1024, description: 'The account\'s password.' }),
  },
  { additionalProperties: false, description: 'Email and password (a form or JSON).' },
));

export const LoginQuery = Type.Object({
  device_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Opens a driver session bound to this device of one of your groups.' })),
  scopes: Type.Optional(Type.Array(ScopeName, { description: 'Bound the session to these scopes (repeat the parameter).' })),
  expire: Type.Optional(Expire),
});

export const LoginScopedQuery = Type.Object({
  scopes: Type.Array(ScopeName, { minItems: 1, description: 'The scopes the session is bounded to (repeat the parameter).' }),
  expire: Expire,
});

export const LoginResponse = component('Session', Type.Object({
  session_id: Type.String({ description: 'Send it as `Authorization: Bearer <session_id>`; also set as the session_id cookie.' }),
  expires_days: Type.Number({ minimum: 0, description: 'Days until the session expires (fractional for a scoped session).' }),
  expires_at: Type.String({ format: 'date-time', description: 'When the session expires.' }),
}, { additionalProperties: false, description: 'An open session.' }));

export const ProviderQuery = Type.Object({ group_id: Type.Optional(GroupId) });
export const ProviderResponse = component('AuthProvider', Type.Union([
  Type.Object({ provider: Type.Literal('legacy', { description: 'Log in with email and password (POST /login).' }) }, { additionalProperties: false }),
  Type.Object({
    provider: Type.Literal('auth0', { description: 'Log in through the OpenID Connect tenant below.' }),
    auth0: Type.Object({
      domain: Type.String({ description: 'Host name of the tenant (e.g. example.eu.auth0.com).' }),
      connection: Type.String({ description: 'The tenant\'s connection to log in with.' }),
    }, { additionalProperties: false }),
  }, { additionalProperties: false }),
], { description: 'How users of a group log in (legacy when no group is given).' }));

export const LogoutQuery = Type.Object({ group_id: Type.Optional(GroupId) });

export const CreateApiKeyBody = component('ApiKeyCreateBody', Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200, description: 'A label to recognise the key by.' })),
    user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Principal: the key acts as this user.' })),
    device_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Principal: the key acts as this device (driver role, bound to the device).' })),
    role: Type.Optional(Role),
    group_ids: Type.Optional(Type.Array(GroupId, { minItems: 1, uniqueItems: true, description: 'With role: the groups the key holds that role in.' })),
    teams: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { uniqueItems: true, description: 'Limit the key to these teams of its group.' })),
    scopes: Type.Optional(Type.Array(ScopeName, { uniqueItems: true })),
    expire: Type.Optional(Type.Union([Expire, Type.Number({ minimum: 0 })], { description: EXPIRE_DESCRIPTION })),
  },
  { additionalProperties: false, description: 'Exactly one principal: user_id, or device_id, or role together with group_ids.' },
));

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const apiKeyFields = {
  api_key_id: Type.String({ description: 'The key\'s identifier (not its secret).' }),
  name: Nullable(Type.String({ description: 'The label given at creation.' })),
  principal: StringEnum(['user', 'device', 'role'] as const, { description: 'Who the key acts as: a user (user_id), a device (device_id, driver role), or a role in groups (role, group_ids).' }),
  user_id: Nullable(Type.String()),
  device_id: Nullable(Type.String()),
  role: Type.Union([Role, Type.Null()]),
  group_ids: Type.Array(Type.String(), { description: 'The groups the key reaches.' }),
  teams: Type.Array(Type.String(), { description: 'Teams the key is limited to; empty: the whole group. A key made by a team-limited admin is limited to that admin\'s teams (absent in the request: the admin\'s teams).' }),
  scopes: Type.Union([Type.Array(ScopeName), Type.Null()], { description: 'null: not bounded by scopes. A key made from a scoped session is bounded by its scopes.' }),
  expires_at: Nullable(Type.String({ format: 'date-time' })),
  created_by: Nullable(Type.String({ description: 'The account that made the key (null: the host\'s own tools). The key never carries more than this account holds in the group at the time of each request: when its creator loses the admin role there, the key stops working.' })),
  origin: StringEnum(['group', 'instance'] as const, { description: "'group': made under /groups/{group_id}/api-keys, bound to that group, never a superuser; 'instance': made by a superuser with POST /api-keys." }),
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: Nullable(Type.String({ format: 'date-time' })),
};
export const ApiKeyRecord = component('ApiKey', Type.Object(apiKeyFields, { additionalProperties: false, description: 'An API key, without its secret.' }));
export const ApiKeyCreated = component('ApiKeyCreated', Type.Object(
  { ...apiKeyFields, value: Type.String({ description: 'The key itself, shown once: it is stored only hashed.' }) },
  { additionalProperties: false, description: 'A new API key with its secret, shown once.' },
));
