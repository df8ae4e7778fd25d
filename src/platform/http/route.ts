/**
 * `op()` completes a route schema from what the route declares: its access list, the
 * documents it belongs to, and the errors it can answer. The access list becomes the enforced
 * rule (auth hook), the documented roles (x-roles) and the 401/403/404 responses; the 422
 * HTTPValidationError response is added to every operation that takes input.
 */
import type { TSchema } from 'typebox';
import { ErrorBody, HTTPValidationError, errors as httpErrors } from './errors.js';
import type { CodeOf, ErrorStatus } from './error-codes.js';
import type { Access } from './access.js';
import { ref } from './components.js';
import type { CacheReads } from './read-cache.js';

/** The rate-limited kinds of operation; their budgets come from the configuration. */
export type RateLimitKind = 'login' | 'credentials' | 'exports';

/** The three documents of each version (spec: Versioning 2). */
export type Document = 'public' | 'datahub' | 'internal';
export const PUBLIC: readonly Document[] = ['public', 'internal'];
export const INTERNAL: readonly Document[] = ['internal'];
export const DATAHUB: readonly Document[] = ['datahub', 'public', 'internal'];

interface SchemaParts {
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  headers?: TSchema;
  response?: Record<number | string, unknown>;
}

export interface OpMeta {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  access: Access;
  documents: readonly Document[];
  deprecated?: boolean;
  /**
   * Endpoint-specific errors: status → codes of the registry (error-codes.ts) with what they mean
   * here; a code listed under another status than its own does not compile.
   */
  errors?: OpErrors;
  /** Content types of the request body, when not JSON. */
  consumes?: string[];
  /** Content types of the 200 answer, when not JSON. */
  produces?: string[];
  /** Still to be built: answers 501 NotImplemented and says so in the document. */
  notImplemented?: string;
  /**
   * The rate limit this operation falls under (src/platform/http/security.ts). Operations tagged
   * `exports` are limited as `exports` without saying so.
   */
  rateLimit?: RateLimitKind;
  /**
   * Answers kept per instance and caller standing, exact through the change feed
   * (src/platform/http/read-cache.ts): what tables the handler reads.
   */
  cache?: CacheReads;
  /**
   * The request body as the documents show it, when the route validates a looser one and checks
   * the parts itself (the device batch: each item alone, so one bad item is rejected alone).
   */
  documentedBody?: TSchema;
}

export type OpErrors = { [S in ErrorStatus]?: Partial<Record<CodeOf<S>, string>> };

export type OpSchema<S> = S & { 'x-access': Access; 'x-documents': readonly Document[] };

const errorResponse = (errors: Record<string, string>) => ({
  description: Object.entries(errors)
    .map(([code, what]) => `\`${code}\`: ${what}`)
    .join('; '),
  content: { 'application/json': { schema: ref(ErrorBody) } },
});

const CACHE_SENTENCE = 'Served from a cache of each instance (header `x-cache`: `hit`, `stale` or `miss`): exact after any write, in any instance; ' +
  'only what time alone changes (a status as the clock passes a scheduled end) may be up to `CACHE_READ_TTL_MS` (5 s by default) late, ' +
  'plus the time to read it again (`stale`: the previous answer, given while one request reads the new one). Answers of 1 KiB or more come gzipped to clients that accept it.';

export function op<const S extends SchemaParts>(meta: OpMeta, schema: S): OpSchema<S> {
  const { access } = meta;
  const errors: Record<string, Record<string, string>> = {};
  const add = (status: number, code: string, what: string) => {
    (errors[status] ??= {})[code] = what;
  };
  if (access.kind !== 'public') {
    add(401, 'Unauthenticated', 'no credential, or an invalid, expired or revoked one');
    if (access.kind === 'superuser') add(403, 'SuperuserRequired', 'only a superuser may call this endpoint');
    if (access.scope) add(403, 'ScopeNotAllowed', `the credential is bounded to scopes that do not include \`${access.scope}\``);
  }
  if (access.kind === 'group') {
    add(404, 'GroupNotFound', 'unknown group_id');
    add(403, 'NoRole', 'the caller has no role in the group');
    add(403, access.roleError, `the caller's role is not one of: ${access.roles.join(', ')}`);
    add(403, 'Auth0LoginRequired', 'a password session was used on a group delegated to OpenID Connect');
  }
  if (access.kind === 'public' && access.group) add(404, 'GroupNotFound', 'unknown group_id');
  const features = access.kind === 'group' || access.kind === 'public' ? access.features : undefined;
  if (features?.length) add(403, 'FeatureNotEnabled', `the group does not have the features ${features.join(' and ')}`);
  for (const [status, byCode] of Object.entries(meta.errors ?? {})) {
    for (const [code, what] of Object.entries(byCode ?? {})) add(Number(status), code, what);
  }
  if (schema.body || meta.consumes) {
    // Fastify's own answers to a body it cannot take (app.ts, FASTIFY_CODES).
    const unless = (status: number, code: string, what: string) => (errors[status]?.[code] ? undefined : add(status, code, what));
    unless(413, 'PayloadTooLarge', 'the body is larger than the operation takes');
    unless(415, 'UnsupportedMediaType', 'a body of a content type the operation does not take');
    unless(400, 'EmptyBody', 'a JSON content type with an empty body');
  }
  const rateLimit = meta.rateLimit ?? (meta.tags.includes('exports') ? 'exports' : undefined);
  if (rateLimit) add(429, 'TooManyRequests', `over the \`${rateLimit}\` rate limit; the Retry-After header gives the seconds to wait`);
  if (meta.notImplemented) add(501, 'NotImplemented', `not built yet (${meta.notImplemented})`);
  add(500, 'InternalError', 'an unexpected failure; the body carries a request_id');

  const response: Record<string, unknown> = { ...(schema.response ?? {}) };
  for (const [status, byCode] of Object.entries(errors)) {
    if (status === '422') continue;
    response[status] = errorResponse(byCode);
  }
  const takesInput = schema.params || schema.querystring || schema.body || schema.headers;
  if (takesInput || errors['422']) {
    response[422] = {
      description: ['a parameter or the body fails validation (HTTPValidationError)', ...Object.entries(errors['422'] ?? {}).map(([c, w]) => `\`${c}\`: ${w}`)].join('; '),
      content: { 'application/json': { schema: errors['422'] ? { anyOf: [ref(HTTPValidationError), ref(ErrorBody)] } : ref(HTTPValidationError) } },
    };
  }

  const roles = access.kind === 'group' ? access.roles : undefined;
  const description = [
    meta.description,
    meta.cache ? CACHE_SENTENCE : undefined,
    meta.notImplemented ? `**Not implemented yet** (${meta.notImplemented}): answers 501 \`NotImplemented\` after validating its parameters.` : undefined,
    accessSentence(access),
  ]
    .filter(Boolean)
    .join('\n\n');

  return {
    ...schema,
    operationId: meta.operationId,
    summary: meta.summary,
    description,
    tags: meta.tags,
    ...(meta.deprecated ? { deprecated: true } : {}),
    ...(meta.consumes ? { consumes: meta.consumes } : {}),
    ...(meta.produces ? { produces: meta.produces } : {}),
    ...(access.kind === 'public' ? { security: [] } : {}),
    response,
    'x-access': access,
    'x-documents': meta.documents,
    ...(roles ? { 'x-roles': roles } : {}),
    ...(access.kind !== 'public' && access.scope ? { 'x-scope': access.scope } : {}),
    ...(meta.notImplemented ? { 'x-not-implemented': meta.notImplemented } : {}),
    ...(rateLimit ? { 'x-rate-limit': rateLimit } : {}),
    ...(meta.cache ? { 'x-cache': meta.cache } : {}),
    ...(meta.documentedBody ? { 'x-documented-body': meta.documentedBody } : {}),
  } as OpSchema<S>;
}

function accessSentence(access: Access): string {
  switch (access.kind) {
    case 'public':
      return 'Access: no credential.';
    case 'credential':
      return 'Access: any valid credential.';
    case 'superuser':
      return 'Access: superuser.';
    case 'group':
      return `Access: roles ${access.roles.join(', ')} in the group (superusers too); scope \`${access.scope}\`.${access.features?.length ? ` Requires the group features ${access.features.join(', ')}.` : ''}`;
  }
}

/** The handler of an endpoint whose behaviour a later issue builds: 501, saying so. */
export function notImplemented(what: string) {
  return async (): Promise<never> => {
    throw httpErrors.notImplemented(what);
  };
}

/** Loose record shapes for endpoints not built yet; each domain replaces them with its own. */
export const AnyRecord = { type: 'object', additionalProperties: true } as const;
