/**
 * The three OpenAPI documents of each version (spec: Versioning 2), cut from the one document
 * @fastify/swagger builds from the route schemas: internal = every operation, public = the
 * integration endpoints, datahub = only the CSV exports that feed a data warehouse.
 * v2, v3 and v5 serve the v4 surface; their documents differ only by the path prefix.
 */
import type { FastifyInstance } from 'fastify';
import type { Document } from './route.js';
import { SCOPE_DESCRIPTIONS } from './access.js';
import { MAX_CSV_COLUMNS, MAX_CSV_LINE_BYTES } from '../csv.js';
import { MAX_LISTED_ISSUES } from './errors.js';
import { API_YEARS, MAX_UNIX_SECONDS } from './params.js';
import { MAX_JSON_DEPTH } from './validation.js';

export const VERSIONS = ['v2', 'v3', 'v4', 'v5'] as const;
export type Version = (typeof VERSIONS)[number];
export const DEFAULT_VERSION: Version = 'v4';
export const DOCUMENTS: readonly Document[] = ['public', 'datahub', 'internal'];

type OpenApi = {
  openapi: string;
  info: Record<string, unknown>;
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components?: Record<string, unknown>;
  tags?: { name: string; description?: string }[];
  [k: string]: unknown;
};

const TITLES: Record<Document, string> = {
  public: 'transit-ops: public API (integrations)',
  datahub: 'transit-ops: datahub API (CSV exports for data warehouses)',
  internal: 'transit-ops: internal API (the whole surface used by the operator applications)',
};

export function swaggerOptions(version: string) {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'transit-ops',
        version,
        description: [
          'Operations back office for public transport networks, API v4.',
          '',
          'Errors: every error but 422 answers `{"detail": "<message>", "code": "<ErrorName>"}`; 422 answers FastAPI\'s HTTPValidationError `{"detail": [{"loc": [...], "msg": "...", "type": "..."}]}`.',
          `A 422 lists at most ${MAX_LISTED_ISSUES} problems, then one item of type \`too_many_errors\` saying how many more there were; an \`input\` it quotes is cut at 200 characters (a large object or list is left out).`,
          '',
          `Input bounds: a JSON body nests at most ${MAX_JSON_DEPTH} levels (422 \`json_invalid\`); dates and date-times are real days of the ${API_YEARS}, and UNIX seconds at most ${MAX_UNIX_SECONDS}; ` +
            `a CSV body (imports, planning files) has lines of at most ${MAX_CSV_LINE_BYTES} bytes and ${MAX_CSV_COLUMNS} columns (422 naming the line).`,
          '',
          'Credentials (spec: Authentication), in this order of precedence when several are sent: the `Authorization` header (`Bearer <session_id>`, `Bearer <JWT>` for groups delegated to OpenID Connect, or `Api-Key <key>`), then the `x-api-key` header, then the `session_id` cookie. A credential that is present but invalid answers 401 `Unauthenticated`; the next one is not tried.',
          '',
          `Scopes (login-scoped sessions and API keys): ${Object.entries(SCOPE_DESCRIPTIONS).map(([s, d]) => `\`${s}\`: ${d}`).join('; ')}.`,
          '',
          'Versions: /api/v2, /api/v3, /api/v4 (default, documented) and /api/v5 serve the same surface.',
          '',
          'Caching: the answers of POST /login and /login-scoped and every answer of an operation that takes a credential (errors included) carry `Cache-Control: no-store` (`private, no-cache` when the answer has an ETag). Public operations (the GTFS-Realtime and SIRI feeds) are the same for everyone and keep `public, max-age`, `ETag` and `Last-Modified`.',
          '',
          'Timeouts: a request\'s headers and body must arrive within REQUEST_TIMEOUT_SECONDS (default 60; 408 `RequestTimeout` and the connection is closed); the body of an upload (an operation accepting more than BODY_LIMIT_BYTES or a zip or multipart body: GTFS archives, CSV imports, planning files, device report batches) within UPLOAD_TIMEOUT_SECONDS (default 900). Answers being sent (CSV exports) and the live stream are not bounded by them.',
        ].join('\n'),
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'A session_id from POST /login, or a JWT from the OpenID Connect provider of a delegated group.' },
          apiKeyAuthorization: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`Api-Key <key>`' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          sessionCookie: { type: 'apiKey', in: 'cookie', name: 'session_id' },
        },
      },
      security: [{ bearer: [] }, { apiKeyAuthorization: [] }, { apiKeyHeader: [] }, { sessionCookie: [] }],
      tags: [
        { name: 'auth', description: 'Login, sessions, API keys, roles' },
        { name: 'groups', description: 'Groups, teams and users (provisioning)' },
        { name: 'gtfs', description: 'The scheduled side: GTFS versions and calendars' },
        { name: 'drivers' }, { name: 'vehicles' }, { name: 'devices' }, { name: 'depots' },
        { name: 'planning' }, { name: 'trips' }, { name: 'trip-updates' }, { name: 'trip-events' },
        { name: 'duties' }, { name: 'vehicle-movements' }, { name: 'danger-zones' },
        { name: 'on-demand' }, { name: 'rail' }, { name: 'ratings' }, { name: 'notifications' },
        { name: 'exports', description: 'CSV exports, streamed; `;` separator, RFC 4180 quoting, UTF-8' },
        { name: 'stats', description: 'Aggregates (spec: Versioning 2, "tagged stats")' },
        { name: 'device-api', description: 'What driver applications call: sign-on, sign-off, reports' },
        { name: 'feeds', description: 'Passenger information: GTFS-Realtime and SIRI' },
        { name: 'events', description: 'The live stream (WebSocket)' },
        { name: 'platform', description: 'Health, readiness, metrics, documents' },
      ],
    },
    hideUntagged: false,
    // Components (components.ts) keep their names: `#/components/schemas/<$id>`.
    refResolver: { buildLocalReference: (json: { $id?: unknown }, _base: unknown, _fragment: unknown, i: number) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transform: ({ schema, url }: { schema: Record<string, unknown>; url: string }) => {
      // Only the API surface is documented; health, metrics and the documents themselves are not operations.
      if (!url.startsWith('/api/v4/') && !url.startsWith('/nav-data-processor-api/')) return { schema: { ...schema, hide: true }, url };
      const { 'x-documented-body': documentedBody, ...rest } = schema;
      return { schema: documentedBody ? { ...rest, body: documentedBody } : rest, url };
    },
  };
}

/** Builds and caches the twelve documents from the app's route schemas. */
export function documentBuilder(app: FastifyInstance) {
  const cache = new Map<string, OpenApi>();
  return (version: Version, document: Document): OpenApi => {
    const key = `${version}/${document}`;
    const hit = cache.get(key);
    if (hit) return hit;
    const full = structuredClone(app.swagger() as unknown as OpenApi);
    toJsonSchema2020(full.paths);
    toJsonSchema2020(full.components?.['schemas']);
    const doc = cut(full, version, document);
    cache.set(key, doc);
    return doc;
  };
}

/**
 * OpenAPI 3.1 schemas are JSON Schema 2020-12, where a tuple is `prefixItems`; TypeBox writes
 * tuples in the draft-07 form (`items` as an array) that Fastify's validator reads. The documents
 * get the 2020-12 spelling, so any 3.1 tool reads them.
 */
function toJsonSchema2020(node: unknown): void {
  if (Array.isArray(node)) {
    for (const n of node) toJsonSchema2020(n);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  if (Array.isArray(o['items'])) {
    o['prefixItems'] = o['items'];
    o['items'] = o['additionalItems'] === undefined ? true : o['additionalItems'];
    delete o['additionalItems'];
  }
  for (const v of Object.values(o)) toJsonSchema2020(v);
}

function cut(full: OpenApi, version: Version, document: Document): OpenApi {
  const paths: OpenApi['paths'] = {};
  const usedTags = new Set<string>();
  for (const [path, methods] of Object.entries(full.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const documents = operation['x-documents'] as Document[] | undefined;
      if (!documents?.includes(document)) continue;
      const { 'x-documents': _d, 'x-access': _a, ...rest } = operation;
      const versioned = path.replace(/^\/api\/v4\//, `/api/${version}/`);
      (paths[versioned] ??= {})[method] = rest;
      for (const t of (rest['tags'] as string[] | undefined) ?? []) usedTags.add(t);
    }
  }
  return {
    ...full,
    info: { ...full.info, title: TITLES[document], version: `${version}` },
    paths,
    components: { ...full.components, schemas: usedSchemas(paths, (full.components?.['schemas'] ?? {}) as Record<string, unknown>) },
    tags: (full.tags ?? []).filter((t) => usedTags.has(t.name)),
  };
}

/** The component schemas the operations of a document reach, directly or through other components. */
function usedSchemas(paths: OpenApi['paths'], all: Record<string, unknown>): Record<string, unknown> {
  const used = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    for (const v of Object.values(node)) {
      if (typeof v === 'string' && v.startsWith('#/components/schemas/')) {
        const name = v.slice('#/components/schemas/'.length);
        if (!used.has(name) && name in all) {
          used.add(name);
          visit(all[name]);
        }
      } else visit(v);
    }
  };
  visit(paths);
  return Object.fromEntries(Object.keys(all).filter((n) => used.has(n)).sort().map((n) => [n, all[n]]));
}
