/**
 * The one access hook (onRequest, before the body is read). Credential precedence, documented
 * in the OpenAPI description: the Authorization header (Bearer session or JWT, or Api-Key), then
 * x-api-key, then the session_id cookie. A credential that is present but invalid is a 401:
 * the next one is not tried, so a stale header never silently falls back to a cookie.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors, invalid } from '../../platform/http/errors.js';
import { GROUP_ID } from '../../platform/http/params.js';
import type { Principal } from '../../platform/http/access.js';
import { looksLikeJwt } from './oidc.js';
import { authorizeGroup, cachedGroup, checkScope, principalFromApiKey, principalFromJwt, principalFromSession } from './service.js';

export async function authenticate(req: FastifyRequest): Promise<Principal | null> {
  const ctx = req.server.ctx;
  const pathGroup = (req.params as { group_id?: string } | undefined)?.group_id;
  const authorization = req.headers.authorization;
  if (authorization !== undefined) {
    const m = /^(Bearer|Api-Key)\s+(\S+)\s*$/i.exec(authorization);
    if (!m) throw errors.unauthenticated('The Authorization header must be "Bearer <session_id or JWT>" or "Api-Key <key>"');
    const [, scheme, token] = m as unknown as [string, string, string];
    const p = scheme.toLowerCase() === 'api-key'
      ? await principalFromApiKey(ctx, token)
      : looksLikeJwt(token)
        ? await principalFromJwt(ctx, token, pathGroup)
        : await principalFromSession(ctx, token);
    if (!p) throw errors.unauthenticated('The credential is invalid, expired or revoked');
    return p;
  }
  const apiKey = req.headers['x-api-key'];
  if (apiKey !== undefined) {
    const p = typeof apiKey === 'string' ? await principalFromApiKey(ctx, apiKey) : null;
    if (!p) throw errors.unauthenticated('The API key is invalid, expired or revoked');
    return p;
  }
  const cookie = req.cookies?.['session_id'];
  if (cookie) {
    const p = await principalFromSession(ctx, cookie);
    if (!p) throw errors.unauthenticated('The session is invalid, expired or closed');
    return p;
  }
  return null;
}

export async function authHook(req: FastifyRequest, _reply: FastifyReply): Promise<void> {
  const access = req.routeOptions.config.access;
  if (!access) return;
  const ctx = req.server.ctx;
  const groupId = (req.params as { group_id?: string } | undefined)?.group_id;
  // The hook runs before validation: a group_id that could not be one is refused as validation
  // would, before it reaches a query.
  if (groupId !== undefined && !GROUP_ID.test(groupId)) {
    throw invalid(['path', 'group_id'], `must match ${GROUP_ID.source}, 1 to 64 characters`, 'string_pattern_mismatch', groupId.slice(0, 100));
  }

  if (access.kind === 'public') {
    if (access.group && groupId !== undefined) {
      const g = await cachedGroup(ctx, groupId);
      if (!g) throw errors.groupNotFound(groupId);
      const missing = (access.features ?? []).filter((f) => !g.features.includes(f));
      if (missing.length > 0) throw errors.forbidden('FeatureNotEnabled', `Group ${JSON.stringify(groupId)} does not have the features ${missing.join(', ')}`);
    }
    return;
  }

  if (access.kind === 'group' && access.checkedAfterUpgrade && req.ws) return;
  const principal = await authenticate(req);
  if (!principal) throw errors.unauthenticated();
  req.principal = principal;
  if (access.kind === 'superuser' && !principal.superuser) throw errors.forbidden('SuperuserRequired', 'Only a superuser may call this endpoint');
  if (access.kind === 'group') {
    req.groupScope = await authorizeGroup(ctx, principal, groupId!, access);
    return;
  }
  checkScope(principal, access.scope);
}
