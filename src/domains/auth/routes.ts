import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../platform/context.js';
import { ADMIN, anyCredential, groupRoles, publicAccess, superuserOnly, type Scope } from '../../platform/http/access.js';
import { errors, invalid } from '../../platform/http/errors.js';
import { GroupParams } from '../../platform/http/params.js';
import { INTERNAL, PUBLIC, op } from '../../platform/http/route.js';
import { ref } from '../../platform/http/components.js';
import { parseExpire } from './expire.js';
import { ApiKeyCreated, ApiKeyRecord, CreateApiKeyBody, LoginForm, LoginQuery, LoginResponse, LoginScopedQuery, LogoutQuery, ProviderQuery, ProviderResponse } from './schemas.js';
import { createApiKey, listApiKeys, login, logout, providerFor, revokeApiKey } from './service.js';

const FORM = ['application/x-www-form-urlencoded', 'application/json'];

const loginErrors = {
  401: { WrongLogin: 'the email and password do not match a known user (same answer for an unknown email)' },
  403: { Auth0LoginRequired: 'every group of the user is delegated to OpenID Connect' },
  404: { DeviceNotFound: 'device_id names no device of the user\'s groups' },
  409: { DeviceAmbiguous: 'device_id names devices in several of the user\'s groups' },
  429: { TooManyLoginAttempts: 'this address is throttled (see the login throttling in the description), whatever the password; the Retry-After header gives the seconds to wait' },
} as const;

/** The throttling policy (src/domains/auth/throttle.ts), in every login operation's description. */
const THROTTLING = 'Login throttling: failed logins (wrong password or unknown email) are counted over a window (`LOGIN_FAILURE_WINDOW_SECONDS`, ' +
  'default 900 s), and an address is answered 429 `TooManyLoginAttempts` with Retry-After, before its password is checked: for one account, after ' +
  'its failures on that account reach `LOGIN_MAX_FAILURES_PER_ACCOUNT_ADDRESS` (default 5); for every account, after its failures over all accounts ' +
  'reach `LOGIN_MAX_FAILURES_PER_ADDRESS` (default 30); and, once an account has had `LOGIN_MAX_FAILURES_PER_ACCOUNT` failures from all addresses ' +
  '(default 10), for that account after a single failure of the address on it. An account is never locked: the right password from an address that ' +
  'has not failed on the account, and is under its own limit, opens a session. A success forgets the failures of that address on that account, not the others.';

function expireOf(text: string | undefined, where: 'query' | 'body'): Date | undefined {
  if (text === undefined) return undefined;
  const d = parseExpire(text);
  if (!d) throw invalid([where, 'expire'], 'Not a valid time in any of the accepted forms', 'value_error', text);
  return d;
}

const scopedLoginSchema = (operationId: string, description: string) =>
  op(
    {
      operationId,
      summary: 'Log in for automation, bounded by scopes and an expiry',
      description: `${description}\n\n${THROTTLING}`,
      tags: ['auth'], access: publicAccess(), documents: PUBLIC, consumes: FORM, errors: loginErrors, rateLimit: 'login',
    },
    { querystring: LoginScopedQuery, body: ref(LoginForm), response: { 200: ref(LoginResponse) } },
  );

async function doLogin(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, q: { device_id?: string; scopes?: Scope[]; expire?: string }) {
  const body = req.body as { email: string; password: string };
  const result = await login(ctx, {
    email: body.email,
    password: body.password,
    address: req.ip,
    deviceId: q.device_id,
    scopes: q.scopes,
    expire: expireOf(q.expire, 'query'),
  });
  reply.setCookie('session_id', result.sessionId, {
    httpOnly: true,
    secure: true,
    sameSite: 'lax',
    path: '/',
    maxAge: Math.max(1, Math.round(result.expiresDays * 86400)),
  });
  return { session_id: result.sessionId, expires_days: result.expiresDays, expires_at: result.expiresAt.toISOString() };
}

export async function authRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/auth/provider', {
    schema: op(
      { operationId: 'getAuthProvider', summary: 'How users of a group log in', tags: ['auth'], access: publicAccess(), documents: PUBLIC, errors: { 404: { GroupNotFound: 'unknown group_id' } } },
      { querystring: ProviderQuery, response: { 200: ref(ProviderResponse) } },
    ),
  }, async (req) => providerFor(app.ctx.db, req.query.group_id));

  app.post('/login', {
    schema: op(
      {
        operationId: 'login',
        summary: 'Log in with email and password',
        description: `Opens a session: the answer carries session_id and expires_days, and sets the session_id cookie (HttpOnly, Secure, SameSite=Lax). With device_id, a driver session bound to that device.\n\n${THROTTLING}`,
        tags: ['auth'], access: publicAccess(), documents: PUBLIC, consumes: FORM, errors: loginErrors, rateLimit: 'login',
      },
      { querystring: LoginQuery, body: ref(LoginForm), response: { 200: ref(LoginResponse) } },
    ),
  }, async (req, reply) => doLogin(app.ctx, req, reply, req.query));

  app.post('/login-scoped', { schema: scopedLoginSchema('loginScoped', 'Same body and answer as POST /login; the session can do nothing outside its scopes and dies at expire.') }, async (req, reply) => doLogin(app.ctx, req, reply, req.query));

  app.get('/logout', {
    schema: op(
      { operationId: 'logout', summary: 'Close the session', description: 'The session dies everywhere (bearer and cookie). With an API key, nothing is closed (revoke keys with DELETE).', tags: ['auth'], access: anyCredential(), documents: PUBLIC },
      { querystring: LogoutQuery, response: { 204: Type.Null({ description: 'Closed' }) } },
    ),
  }, async (req, reply) => {
    await logout(app.ctx, req.principal!);
    reply.clearCookie('session_id', { path: '/', httpOnly: true, secure: true, sameSite: 'lax' });
    return reply.status(204).send(null);
  });

  app.post('/groups/:group_id/api-keys', {
    schema: op(
      {
        operationId: 'createGroupApiKey', summary: 'Create an API key bound to the group',
        description:
          'Needs a session (not an API key) holding the admin role. The key is returned once, in `value`. ' +
          'The key is bound to this group and is never a superuser. It carries no more than its creator holds here: a user key needs a membership of the group ' +
          'no wider than the creator\'s teams; a device key, a device of the creator\'s teams; `teams` must lie within the creator\'s (absent: the creator\'s teams); ' +
          '`scopes` within the creating session\'s (absent: the session\'s). At each request the key is bounded again by what its creator then holds: ' +
          'when the creator no longer administers the group, the key carries no role there (403 NoRole). See the authorization model in docs/security.md.',
        tags: ['auth'], access: groupRoles(ADMIN, 'CreateApiKeyRoleRequired', 'admin'), documents: PUBLIC, rateLimit: 'credentials',
        errors: { 403: { SessionRequired: 'API keys are created from a session, not from another key', ForbiddenDifferentTeam: 'the key, its user or its device reaches beyond the creator\'s teams', ScopeNotAllowed: 'the scopes asked reach beyond the creating session\'s' } },
      },
      { params: GroupParams, body: ref(CreateApiKeyBody), response: { 201: ref(ApiKeyCreated) } },
    ),
  }, async (req, reply) => {
    requireSession(req);
    const b = req.body;
    const key = await createApiKey(app.ctx, req.principal!, req.groupScope!, { ...b, expire: keyExpire(b.expire) });
    return reply.status(201).send(key);
  });

  app.get('/groups/:group_id/api-keys', {
    schema: op(
      { operationId: 'listGroupApiKeys', summary: 'List the group\'s API keys (never their secrets)', description: 'A team-limited admin sees only the keys within its teams.', tags: ['auth'], access: groupRoles(ADMIN, 'ListApiKeysRoleRequired', 'admin'), documents: PUBLIC },
      { params: GroupParams, response: { 200: Type.Array(ref(ApiKeyRecord)) } },
    ),
  }, async (req) => listApiKeys(app.ctx.db, req.groupScope!));

  app.delete('/groups/:group_id/api-keys/:api_key_id', {
    schema: op(
      { operationId: 'deleteGroupApiKey', summary: 'Revoke an API key at once', description: 'A team-limited admin revokes only keys within its teams.', tags: ['auth'], access: groupRoles(ADMIN, 'DeleteApiKeyRoleRequired', 'admin'), documents: PUBLIC, errors: { 403: { ForbiddenDifferentTeam: 'the key reaches beyond the caller\'s teams' }, 404: { ApiKeyNotFound: 'no such key in the group' } } },
      { params: Type.Object({ group_id: GroupParams.properties.group_id, api_key_id: Type.String({ minLength: 1, maxLength: 64 }) }), response: { 204: Type.Null({ description: 'Revoked' }) } },
    ),
  }, async (req, reply) => {
    await revokeApiKey(app.ctx, req.groupScope!, req.params.api_key_id);
    return reply.status(204).send(null);
  });

  app.post('/api-keys', {
    schema: op(
      { operationId: 'createApiKey', summary: 'Create an API key spanning several groups, or a superuser key', description: 'A superuser key is a key whose user_id is a superuser; it acts as a superuser while its creator is one. Keys made here have origin `instance`.', tags: ['auth'], access: superuserOnly('admin'), documents: INTERNAL, rateLimit: 'credentials' },
      { body: ref(CreateApiKeyBody), response: { 201: ref(ApiKeyCreated) } },
    ),
  }, async (req, reply) => {
    const b = req.body;
    const key = await createApiKey(app.ctx, req.principal!, null, { ...b, expire: keyExpire(b.expire) });
    return reply.status(201).send(key);
  });
}

/** spec: Authentication 7: creation requires a session holding the admin role (a JWT is a session of the provider). */
function requireSession(req: FastifyRequest) {
  if (req.principal?.via === 'api_key') throw errors.forbidden('SessionRequired', 'API keys are created from a session, not from another API key');
}

function keyExpire(e: string | number | undefined): Date | undefined {
  if (e === undefined) return undefined;
  return typeof e === 'number' ? new Date(Math.round(e * 1000)) : expireOf(e, 'body');
}

/** POST /nav-data-processor-api/v4/login-scoped (spec: Versioning 1), outside /api/v4. */
export async function navDataProcessorRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/nav-data-processor-api/v4/login-scoped', {
    schema: scopedLoginSchema('loginScopedNavDataProcessor', 'The same as POST /api/v4/login-scoped, under the nav-data-processor prefix.'),
  }, async (req, reply) => doLogin(app.ctx, req, reply, req.query));
}
