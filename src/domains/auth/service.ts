/**
 * Credentials: sessions (password login), API keys and OpenID Connect tokens, turned into a
 * Principal; then the caller's standing in a group (GroupScope). Secrets are stored only as
 * hashes; comparisons happen on hashes through the primary key.
 *
 * The accounts, memberships and the login's device are read through auth's own read models
 * (queries/accounts.ts, queries/login-devices.ts): users depends on auth (passwords, bounds), so
 * auth calling users' service would tie the two both ways (test/platform/domain-deps.test.ts).
 */
import type { AppContext } from '../../platform/context.js';
import type { Queryable } from '../../platform/db/index.js';
import { errors, fail, invalid } from '../../platform/http/errors.js';
import type { Access, GroupScope, Principal, Role, Scope } from '../../platform/http/access.js';
import { cachePerDb } from '../../platform/cache.js';
import { hashSecret, newSecret, objectId } from '../../platform/ids.js';
import { delegatedGroups, existingGroupIds, getGroup, groupAuthsOf, unknownTeams, type Group } from '../groups/service.js';
import { deviceTeams } from '../fleet/devices.js';
import type { JWTPayload } from 'jose';
import { emailClaim, issuerFor, unverifiedIssuer, verifyJwt } from './oidc.js';
import { verifyPassword } from './passwords.js';
import { checkLoginThrottle, recordLoginFailure, recordLoginSuccess } from './throttle.js';
import { intersectTeams, keyScopes, keyTeams, requireWithinCaller, teamsOrWhole, teamsWithin } from '../../platform/http/bounds.js';
import { selectAccountSuperuser, selectFirstMembershipGroup, selectLoginAccount, selectMembership, selectMembershipTeams, type MembershipRow } from './queries/accounts.js';
import { insertApiKey, revokeGroupKey, selectGroupKeyTeams, selectGroupKeys, selectKey, selectLiveApiKeyIds, type KeyLookupRow, type KeyRow } from './queries/api-keys.js';
import { insertIdentity, selectLinkCandidate, selectLinkedAccount } from './queries/identities.js';
import { selectLoginDevices } from './queries/login-devices.js';
import { endSession, insertSession, selectLiveSessionHashes, selectOpenSession } from './queries/sessions.js';

const DAY_MS = 86_400_000;
/** The longest life a caller may ask for with `expire`. */
export const MAX_EXPIRE_DAYS = 366;

// ---------------------------------------------------------------- login and sessions

export interface LoginInput {
  email: string;
  password: string;
  address: string;
  deviceId?: string | undefined;
  scopes?: readonly Scope[] | undefined;
  expire?: Date | undefined;
}

export interface LoginResult {
  sessionId: string;
  expiresAt: Date;
  expiresDays: number;
}

export async function login(ctx: AppContext, input: LoginInput): Promise<LoginResult> {
  const now = ctx.clock.now();
  const attempt = { email: input.email, address: input.address };
  await checkLoginThrottle(ctx, attempt, now);

  const user = await selectLoginAccount(ctx.db, input.email);
  // Unknown email and wrong password take the same path and the same time (argon2 either way).
  const ok = await verifyPassword(user?.password_hash ?? null, input.password);
  if (!user || !ok) {
    await recordLoginFailure(ctx, attempt, now);
    throw fail('WrongLogin', 'The email and password do not match');
  }
  await recordLoginSuccess(ctx.db, attempt);

  const groups = await groupAuthsOf(ctx.db, user.user_id);
  if (!user.superuser && groups.length > 0 && groups.every((g) => g.auth.provider === 'auth0')) {
    throw fail('Auth0LoginRequired', 'Your groups log in through their OpenID Connect provider: see GET /auth/provider?group_id=…');
  }

  let device: { group_id: string; device_id: string } | undefined;
  if (input.deviceId !== undefined) {
    const devices = await selectLoginDevices(ctx.db, input.deviceId, user.user_id, user.superuser);
    if (devices.length === 0) throw errors.notFound('DeviceNotFound', `No device ${JSON.stringify(input.deviceId)} in your groups`);
    if (devices.length > 1) throw errors.conflict('DeviceAmbiguous', `Device ${JSON.stringify(input.deviceId)} exists in several of your groups`);
    device = devices[0];
  }

  const expiresAt = input.expire ?? new Date(now.getTime() + ctx.config.sessionTtlDays * DAY_MS);
  checkExpire(expiresAt, now, 'query');
  const sessionId = newSecret('');
  await insertSession(
    ctx.db,
    {
      session_hash: hashSecret(sessionId), user_id: user.user_id, device_group_id: device?.group_id ?? null, device_id: device?.device_id ?? null,
      scopes: input.scopes ? [...input.scopes] : null, expires_at: expiresAt,
    },
    now,
  );
  return { sessionId, expiresAt, expiresDays: roundDays((expiresAt.getTime() - now.getTime()) / DAY_MS) };
}

function roundDays(d: number): number {
  return Math.round(d * 10_000) / 10_000;
}

export function checkExpire(expiresAt: Date, now: Date, where: 'query' | 'body') {
  if (expiresAt.getTime() <= now.getTime()) throw invalid([where, 'expire'], 'expire must be in the future', 'value_error', expiresAt.toISOString());
  if (expiresAt.getTime() - now.getTime() > MAX_EXPIRE_DAYS * DAY_MS) {
    throw invalid([where, 'expire'], `expire must be within ${MAX_EXPIRE_DAYS} days`, 'value_error', expiresAt.toISOString());
  }
}

/**
 * Of these sessions (hashes) and API keys (ids), those still valid now: long-lived connections
 * (the live stream) ask again from time to time, so a logout or a revocation ends them too.
 */
export async function stillValid(ctx: AppContext, sessionHashes: readonly string[], apiKeyIds: readonly string[]): Promise<Set<string>> {
  const now = ctx.clock.now();
  const valid = new Set<string>();
  if (sessionHashes.length > 0) {
    for (const id of await selectLiveSessionHashes(ctx.db, sessionHashes, now)) valid.add(id);
  }
  if (apiKeyIds.length > 0) {
    for (const id of await selectLiveApiKeyIds(ctx.db, apiKeyIds, now)) valid.add(id);
  }
  return valid;
}

/** Ends the session everywhere (bearer and cookie carry the same id). API keys are revoked by DELETE. */
export async function logout(ctx: AppContext, principal: Principal): Promise<void> {
  if (principal.sessionHash) {
    await endSession(ctx.db, principal.sessionHash, ctx.clock.now());
    // A GET: the write hook leaves the caches alone, and the commit's notification may come after
    // the client's next request. The session must be dead for it at once.
    ctx.db.changes.touch('sessions');
  }
}

const basePrincipal = {
  superuser: false,
  scopes: null,
  sessionHash: null,
  apiKeyId: null,
  device: null,
  groupIds: null,
  role: null,
  teams: null,
  oidc: null,
  key: null,
} as const;

/**
 * The access hook's lookups, cached per instance (src/platform/cache.ts): exact, since any change
 * to these tables, in any instance, invalidates them; only open sessions and unrevoked keys are
 * kept, and their expiry is checked against the clock at each use.
 */
const sessionCache = cachePerDb<{ principal: Principal; expiresAt: Date }>({ only: ['sessions', 'users'] });
const apiKeyCache = cachePerDb<{ principal: Principal; expiresAt: Date | null }>({ only: ['api_keys', 'users'] });
const groupCache = cachePerDb<Group>({ only: ['groups'] });
const delegatedCache = cachePerDb<Group[]>({ only: ['groups'] });
const membershipCache = cachePerDb<MembershipRow | null>({ only: ['memberships'] });

/** getGroup through the instance's cache (the access hook runs it on every request). */
export async function cachedGroup(ctx: AppContext, groupId: string): Promise<Group | null> {
  const cache = groupCache(ctx.db, ctx.clock, ctx.config.caches.authTtlMs);
  const hit = cache.peek(groupId);
  if (hit) return hit;
  const ticket = cache.ticket();
  const g = await getGroup(ctx.db, groupId);
  if (g) cache.store(groupId, ticket, g);
  return g;
}

export async function principalFromSession(ctx: AppContext, sessionId: string): Promise<Principal | null> {
  // Keyed by the credential itself: a hit costs no hashing (the process holds it anyway).
  const cache = sessionCache(ctx.db, ctx.clock, ctx.config.caches.authTtlMs);
  let c = cache.peek(sessionId);
  if (!c) {
    const ticket = cache.ticket();
    const found = await sessionByHash(ctx, hashSecret(sessionId));
    if (!found) return null;
    c = found;
    cache.store(sessionId, ticket, c);
  }
  return c.expiresAt <= ctx.clock.now() ? null : c.principal;
}

async function sessionByHash(ctx: AppContext, hash: string): Promise<{ expiresAt: Date; principal: Principal } | null> {
  const s = await selectOpenSession(ctx.db, hash);
  if (!s) return null;
  return {
    expiresAt: s.expires_at,
    principal: {
      ...basePrincipal,
      via: 'session',
      userId: s.user_id,
      email: s.email,
      superuser: s.superuser,
      scopes: s.scopes,
      sessionHash: hash,
      device: s.device_id && s.device_group_id ? { groupId: s.device_group_id, deviceId: s.device_id } : null,
      groupIds: s.device_group_id ? [s.device_group_id] : null,
    },
  };
}

/**
 * The principal of a credential held for a while (an open live stream), read again from the
 * database: what a request made with the same credential now would get. Null once the session
 * ended or expired, the key was revoked or expired, or the JWT's `exp` passed. A superuser flag
 * removed, from the account or from a key's creator, is gone from the answer.
 */
export async function principalNow(ctx: AppContext, p: Principal): Promise<Principal | null> {
  const now = ctx.clock.now();
  if (p.via === 'jwt') return p.oidc?.expiresAt !== undefined && p.oidc.expiresAt <= now ? null : p;
  if (p.via === 'session' && p.sessionHash !== null) {
    const s = await sessionByHash(ctx, p.sessionHash);
    return s && s.expiresAt > now ? s.principal : null;
  }
  if (p.via === 'api_key' && p.apiKeyId !== null) {
    const k = await keyRow(ctx, 'k.api_key_id = $1', p.apiKeyId);
    return k && (k.expires_at === null || k.expires_at > now) ? keyPrincipal(k) : null;
  }
  return p;
}

// ---------------------------------------------------------------- API keys

/** The host's own tools (CLI, demo loader, benchmarks): they make what an operator of the host could. */
export const hostPrincipal: Principal = { ...basePrincipal, via: 'session', userId: null, email: null, superuser: true };

/** The standing of a caller holding the whole group (the host's tools making a key under a group). */
export const wholeGroup = (groupId: string): Pick<GroupScope, 'groupId' | 'teams'> => ({ groupId, teams: null });

export async function principalFromApiKey(ctx: AppContext, key: string): Promise<Principal | null> {
  const cache = apiKeyCache(ctx.db, ctx.clock, ctx.config.caches.authTtlMs);
  let c = cache.peek(key);
  if (!c) {
    const ticket = cache.ticket();
    const k = await keyRow(ctx, 'k.key_hash = $1', hashSecret(key));
    if (!k) return null;
    c = { principal: keyPrincipal(k), expiresAt: k.expires_at };
    cache.store(key, ticket, c);
  }
  return c.expiresAt !== null && c.expiresAt <= ctx.clock.now() ? null : c.principal;
}

/** A key that is not revoked, with its account and its creator. */
function keyRow(ctx: AppContext, where: 'k.key_hash = $1' | 'k.api_key_id = $1', value: string): Promise<KeyLookupRow | undefined> {
  return selectKey(ctx.db, where, value);
}

/**
 * A key acts as a superuser only when its account is a superuser, a superuser made it with
 * POST /api-keys (origin 'instance'; or the host's own tools, with no creator) and that creator is
 * still a superuser. A key made under /groups/{g} is bound to g and never a superuser.
 */
function keyPrincipal(k: KeyLookupRow): Principal {
  const creatorSuperuser = k.creator_superuser === true;
  const common = {
    ...basePrincipal,
    via: 'api_key' as const,
    apiKeyId: k.api_key_id,
    scopes: k.scopes,
    teams: k.teams.length > 0 ? k.teams : null,
    key: { createdBy: k.created_by, origin: k.origin, creatorSuperuser },
  };
  if (k.principal === 'user') {
    const superuser = k.superuser === true && k.origin === 'instance' && (k.created_by === null || creatorSuperuser);
    return { ...common, userId: k.user_id, email: k.email, superuser, groupIds: k.group_ids.length > 0 ? k.group_ids : null };
  }
  if (k.principal === 'device') {
    return { ...common, userId: null, email: null, role: 'driver', groupIds: k.group_ids, device: { groupId: k.group_ids[0]!, deviceId: k.device_id! } };
  }
  return { ...common, userId: null, email: null, role: k.role, groupIds: k.group_ids };
}

export interface CreateKeyInput {
  name?: string | undefined;
  user_id?: string | undefined;
  device_id?: string | undefined;
  role?: Role | undefined;
  group_ids?: string[] | undefined;
  teams?: string[] | undefined;
  scopes?: Scope[] | undefined;
  expire?: Date | undefined;
}

export type KeyRecord = Omit<KeyRow, 'expires_at' | 'created_at' | 'last_used_at'> & {
  expires_at: string | null;
  created_at: string;
  last_used_at: string | null;
};

function keyRecord(k: KeyRow): KeyRecord {
  return {
    ...k,
    expires_at: k.expires_at?.toISOString() ?? null,
    created_at: k.created_at.toISOString(),
    last_used_at: k.last_used_at?.toISOString() ?? null,
  };
}

/**
 * spec: Authentication 7: exactly one principal: user_id, or device_id, or role with group_ids.
 * `where` is the caller's standing in the group of the path (POST /groups/{group_id}/api-keys);
 * null for POST /api-keys (superusers). A key made under a group is bound to it, is never a
 * superuser, and carries no more than its creator: its teams within the creator's, its principal
 * (a user's membership, a device's team) within the creator's teams, its scopes within the
 * creating session's (src/platform/http/bounds.ts). At each request the key is bounded again by
 * what its creator then holds (authorizeGroup).
 */
export async function createApiKey(ctx: AppContext, creator: Principal, where: Pick<GroupScope, 'groupId' | 'teams'> | null, input: CreateKeyInput): Promise<KeyRecord & { value: string }> {
  const groupId = where?.groupId ?? null;
  const principals = [input.user_id !== undefined, input.device_id !== undefined, input.role !== undefined].filter(Boolean).length;
  if (principals !== 1) throw invalid(['body'], 'Declare exactly one principal: user_id, or device_id, or role with group_ids', 'value_error');
  if (input.role === undefined && input.group_ids !== undefined && groupId !== null) {
    throw invalid(['body', 'group_ids'], 'group_ids goes with role; a user or device key is bound to the group of the path', 'value_error');
  }
  let groupIds: string[];
  let principal: KeyRow['principal'];
  if (input.role !== undefined) {
    principal = 'role';
    if (!input.group_ids || input.group_ids.length === 0) throw invalid(['body', 'group_ids'], 'A role key names the groups it holds the role in', 'missing');
    groupIds = [...new Set(input.group_ids)];
    if (groupId !== null && (groupIds.length !== 1 || groupIds[0] !== groupId)) {
      throw invalid(['body', 'group_ids'], `A key created under group ${JSON.stringify(groupId)} can only name that group; use POST /api-keys (superuser) for several groups`, 'value_error', input.group_ids);
    }
  } else if (input.device_id !== undefined) {
    principal = 'device';
    const scopeGroup = groupId ?? input.group_ids?.[0];
    if (!scopeGroup || (input.group_ids && input.group_ids.length !== 1)) throw invalid(['body', 'group_ids'], 'A device key names the one group of the device', 'value_error');
    const teams = await deviceTeams(ctx.db, scopeGroup, input.device_id);
    if (!teams) throw invalid(['body', 'device_id'], `No device ${JSON.stringify(input.device_id)} in group ${JSON.stringify(scopeGroup)}`, 'value_error', input.device_id);
    if (where) requireWithinCaller(where, teams, `Device ${JSON.stringify(input.device_id)}`);
    groupIds = [scopeGroup];
  } else {
    principal = 'user';
    const u = await selectAccountSuperuser(ctx.db, input.user_id);
    if (!u) throw invalid(['body', 'user_id'], `No user ${JSON.stringify(input.user_id)}`, 'value_error', input.user_id);
    groupIds = groupId !== null ? [groupId] : [...new Set(input.group_ids ?? [])];
    if (where) {
      // Under a group, the account must hold a role there (a superuser's implicit admin does not
      // count: that power is the superuser's own), no wider than the creator's teams.
      const m = await selectMembershipTeams(ctx.db, where.groupId, input.user_id);
      if (!m) throw invalid(['body', 'user_id'], `User ${JSON.stringify(input.user_id)} has no role in group ${JSON.stringify(where.groupId)}`, 'value_error', input.user_id);
      requireWithinCaller(where, m.teams, `User ${JSON.stringify(input.user_id)}`);
    }
  }
  if (groupIds.length > 0) {
    const known = await existingGroupIds(ctx.db, groupIds);
    const missing = groupIds.filter((g) => !known.includes(g));
    if (missing.length > 0) throw invalid(['body', 'group_ids'], `Unknown groups: ${missing.join(', ')}`, 'value_error', missing);
  }
  const teams = where ? keyTeams(where, input.teams) : [...(input.teams ?? [])];
  if (teams.length > 0) {
    if (groupIds.length !== 1) throw invalid(['body', 'teams'], 'teams restrict a key bound to exactly one group', 'value_error');
    const missing = await unknownTeams(ctx.db, groupIds[0]!, teams);
    if (missing.length > 0) throw invalid(['body', 'teams'], `Unknown teams in group ${groupIds[0]}: ${missing.join(', ')}`, 'value_error', missing);
  }
  const scopes = keyScopes(creator, input.scopes);
  const now = ctx.clock.now();
  if (input.expire) checkExpire(input.expire, now, 'body');
  const value = newSecret('tko_');
  const row = await insertApiKey(
    ctx.db,
    {
      api_key_id: objectId(now.getTime()), key_hash: hashSecret(value), name: input.name ?? null, principal, user_id: input.user_id ?? null, device_id: input.device_id ?? null,
      role: input.role ?? (principal === 'device' ? 'driver' : null), group_ids: groupIds, teams, scopes, expires_at: input.expire ?? null,
      created_by: creator.userId, origin: where ? 'group' : 'instance',
    },
    now,
  );
  return { ...keyRecord(row), value };
}

/** The group's keys; a team-limited admin sees only the keys within its teams. */
export async function listApiKeys(db: Queryable, scope: Pick<GroupScope, 'groupId' | 'teams'>): Promise<KeyRecord[]> {
  const rows = await selectGroupKeys(db, scope.groupId);
  return rows.filter((k) => teamsWithin(teamsOrWhole(k.teams), scope.teams)).map(keyRecord);
}

/** Revokes a key of the group; a team-limited admin, only a key within its teams. */
export async function revokeApiKey(ctx: AppContext, scope: Pick<GroupScope, 'groupId' | 'teams'>, apiKeyId: string): Promise<void> {
  const { groupId } = scope;
  const teams = await selectGroupKeyTeams(ctx.db, groupId, apiKeyId);
  if (!teams) throw errors.notFound('ApiKeyNotFound', `No API key ${JSON.stringify(apiKeyId)} in group ${JSON.stringify(groupId)}`);
  requireWithinCaller(scope, teams, `API key ${JSON.stringify(apiKeyId)}`);
  await revokeGroupKey(ctx.db, groupId, apiKeyId, ctx.clock.now());
}

// ---------------------------------------------------------------- OpenID Connect

/**
 * A JWT is verified against the group of the path when it is delegated; on a path without a
 * group, against the delegated groups whose issuer the token names. The identity is the token's
 * (issuer, subject), mapped to an account (identitiesAccount); the principal is bound to the
 * delegated groups of that issuer and audience, and is never a superuser: a group's provider
 * grants only that group's memberships.
 */
export async function principalFromJwt(ctx: AppContext, token: string, pathGroupId: string | undefined): Promise<Principal | null> {
  const candidates: Group[] = [];
  if (pathGroupId !== undefined) {
    const g = await cachedGroup(ctx, pathGroupId);
    if (!g) throw errors.groupNotFound(pathGroupId);
    if (g.auth.provider === 'auth0') candidates.push(g);
  } else {
    const iss = unverifiedIssuer(token);
    if (iss) candidates.push(...(await delegatedGroupsOf(ctx, iss)));
  }
  for (const g of candidates) {
    if (g.auth.provider !== 'auth0') continue;
    const issuer = issuerFor(ctx.config.oidcIssuerTemplate, g.auth.domain);
    let payload: JWTPayload;
    try {
      payload = await verifyJwt(token, issuer, g.auth.audience, ctx.clock.now(), ctx.config);
    } catch (err) {
      ctx.log.debug({ err, group_id: g.group_id }, 'JWT rejected');
      continue;
    }
    const audience = g.auth.audience;
    const groupIds = (await delegatedGroupsOf(ctx, issuer)).filter((d) => d.auth.provider === 'auth0' && d.auth.audience === audience).map((d) => d.group_id);
    const user = await identitiesAccount(ctx, issuer, payload, groupIds);
    if (!user) return null;
    const oidc = { issuer, audience, ...(typeof payload.exp === 'number' ? { expiresAt: new Date(payload.exp * 1000) } : {}) };
    return { ...basePrincipal, via: 'jwt', userId: user.user_id, email: user.email, superuser: false, groupIds, oidc };
  }
  return null;
}

/** The delegated groups whose provider is this issuer, through the instance's cache (every JWT request asks). */
async function delegatedGroupsOf(ctx: AppContext, issuer: string): Promise<Group[]> {
  return delegatedCache(ctx.db, ctx.clock, ctx.config.caches.authTtlMs).get(issuer, async () => {
    const all = await delegatedGroups(ctx.db);
    return all.filter((g) => g.auth.provider === 'auth0' && issuerFor(ctx.config.oidcIssuerTemplate, g.auth.domain) === issuer);
  });
}

/**
 * The account of an external identity. Linked once by (issuer, subject); the first time, the
 * token's email may link it to an account only when that account lives inside the delegated
 * groups of this provider: it holds a role in one of them and in no other group, it is not a
 * superuser, it has no password (it was made for these groups, not for a password login), and it
 * has no other identity of this issuer. An email the provider says is unverified never links.
 * Anything else is no account (401): an administrator of another group or a superuser can never
 * be reached through a delegated group's provider.
 */
async function identitiesAccount(ctx: AppContext, issuer: string, payload: JWTPayload, groupIds: readonly string[]): Promise<{ user_id: string; email: string } | null> {
  const subject = typeof payload.sub === 'string' && payload.sub.length > 0 ? payload.sub : null;
  if (!subject) return null;
  const linked = await selectLinkedAccount(ctx.db, issuer, subject);
  if (linked) return linked.superuser ? null : linked;

  const email = emailClaim(payload);
  if (!email || payload['email_verified'] === false) return null;
  const account = await selectLinkCandidate(ctx.db, email, groupIds, issuer);
  if (!account || account.superuser || account.has_password || account.inside === 0 || account.outside > 0 || account.identities > 0) {
    ctx.log.info({ issuer, subject }, 'OpenID Connect identity not linked: no account of this provider\'s groups has its email');
    return null;
  }
  const home = (await selectFirstMembershipGroup(ctx.db, account.user_id, groupIds))!;
  await insertIdentity(ctx.db, { issuer, subject, user_id: account.user_id, group_id: home.group_id }, ctx.clock.now());
  return { user_id: account.user_id, email: account.email };
}

// ---------------------------------------------------------------- authorization

type GroupAccess = Extract<Access, { kind: 'group' }>;

/**
 * The caller's standing in the group of the path, in the documented order: group exists (404)
 * → the credential reaches this group → role in the group (403 NoRole) → role allowed (403 with
 * the endpoint's error) → features → scope. Superusers pass every role check.
 */
export async function authorizeGroup(ctx: AppContext, p: Principal, groupId: string, access: GroupAccess): Promise<GroupScope> {
  const group = await cachedGroup(ctx, groupId);
  if (!group) throw errors.groupNotFound(groupId);
  if (p.groupIds && !p.groupIds.includes(groupId)) throw errors.noRole(groupId);
  if (p.via === 'jwt') {
    const ok = group.auth.provider === 'auth0' && issuerFor(ctx.config.oidcIssuerTemplate, group.auth.domain) === p.oidc?.issuer && group.auth.audience === p.oidc.audience;
    if (!ok) throw errors.unauthenticated(`This token was not issued for group ${JSON.stringify(groupId)}`);
  }
  if (p.via === 'session' && group.auth.provider === 'auth0' && !p.superuser) {
    throw fail('Auth0LoginRequired', `Group ${JSON.stringify(groupId)} logs in through OpenID Connect: send the provider's JWT as a bearer token`);
  }

  let role: Role;
  let teams: readonly string[] | null = null;
  let driverId: string | null = null;
  if (p.role) {
    role = p.role;
    teams = p.teams;
  } else {
    const m = p.userId ? await membershipOf(ctx, groupId, p.userId) : null;
    if (m) {
      role = m.role;
      // A superuser's own credential sees the whole group whatever a membership says.
      teams = p.superuser ? null : teamsOrWhole(m.teams);
      driverId = m.driver_id;
    } else if (p.superuser) {
      role = 'admin';
    } else {
      throw errors.noRole(groupId);
    }
    teams = intersectTeams(teams, p.teams);
  }
  if (p.key) teams = await boundByCreator(ctx, p.key, groupId, teams);
  if (teams !== null && teams.length === 0) throw errors.forbidden('NoRole', `This credential's teams and those of its holder in group ${JSON.stringify(groupId)} have none in common`);
  if (!access.roles.includes(role) && !p.superuser) {
    throw errors.forbidden(access.roleError, `Your role ${role} may not call this endpoint; allowed: ${access.roles.join(', ')}`);
  }
  const missing = (access.features ?? []).filter((f) => !group.features.includes(f));
  if (missing.length > 0) throw errors.forbidden('FeatureNotEnabled', `Group ${JSON.stringify(groupId)} does not have the features ${missing.join(', ')}`);
  checkScope(p, access.scope);
  return { groupId, role, teams, driverId, timezone: group.timezone, features: group.features };
}

function membershipOf(ctx: AppContext, groupId: string, userId: string): Promise<MembershipRow | null> {
  return membershipCache(ctx.db, ctx.clock, ctx.config.caches.authTtlMs).get(`${groupId}\u0000${userId}`, () => selectMembership(ctx.db, groupId, userId));
}

/**
 * An API key carries at most what its creator holds in the group now: a creator who no longer
 * administers the group leaves its keys without a role there, and the creator's teams bound the
 * key's. Keys made by the host's tools (no creator) and keys a superuser made stay as made.
 */
async function boundByCreator(ctx: AppContext, key: NonNullable<Principal['key']>, groupId: string, teams: readonly string[] | null): Promise<readonly string[] | null> {
  if (key.createdBy === null || key.creatorSuperuser) return teams;
  const m = await membershipOf(ctx, groupId, key.createdBy);
  if (!m || m.role !== 'admin') {
    throw errors.forbidden('NoRole', `The account that made this API key no longer administers group ${JSON.stringify(groupId)}: the key carries no role there`);
  }
  return intersectTeams(teams, teamsOrWhole(m.teams));
}

export function checkScope(p: Principal, scope: Scope | undefined) {
  if (scope && p.scopes && !p.scopes.includes(scope)) {
    throw errors.forbidden('ScopeNotAllowed', `This credential is limited to the scopes ${p.scopes.join(', ') || '(none)'}; this endpoint needs ${scope}`);
  }
}

export async function providerFor(db: Queryable, groupId: string | undefined): Promise<{ provider: 'legacy' } | { provider: 'auth0'; auth0: { domain: string; connection: string } }> {
  if (groupId === undefined) return { provider: 'legacy' };
  const g = await getGroup(db, groupId);
  if (!g) throw errors.groupNotFound(groupId);
  if (g.auth.provider === 'auth0') return { provider: 'auth0', auth0: { domain: g.auth.domain, connection: g.auth.connection } };
  return { provider: 'legacy' };
}
