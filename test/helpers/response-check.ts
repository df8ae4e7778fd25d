/**
 * Every JSON answer of a test app is checked against the schema its operation documents for that
 * status (issue #18 §1): the value the handler gave, as JSON, before Fastify's serializer (which
 * would drop undocumented fields and coerce types, hiding the drift). A mismatch is recorded and
 * fails the test that made the request (test/helpers/vitest-setup.ts, afterEach); the answer
 * itself is left as it is, so the test runs as it would without the check.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ajvFormats } from '../../src/platform/http/params.js';

export interface ResponseMismatch {
  request: string;
  status: number;
  errors: string[];
}

const mismatches: ResponseMismatch[] = [];

/** The mismatches recorded since the last call. */
export function takeMismatches(): ResponseMismatch[] {
  return mismatches.splice(0);
}

type ResponseSchemas = Record<string, unknown>;

/** The documented schema of a JSON answer with this status, or null when none is documented. */
function schemaFor(response: ResponseSchemas, status: number): object | null | undefined {
  const entry = response[String(status)] ?? response[`${Math.floor(status / 100)}xx`] ?? response['default'];
  if (entry === undefined) return undefined;
  if (entry && typeof entry === 'object' && 'content' in entry) {
    const content = (entry as { content: Record<string, { schema?: object }> }).content;
    return content['application/json']?.schema ?? null;
  }
  return entry as object;
}

/** Adds the check to an app; called before any route is registered (buildApp's beforeRoutes). */
export function checkResponses(app: FastifyInstance): void {
  let ajv: Ajv | null = null;
  const compiled = new WeakMap<object, ValidateFunction>();
  const validator = (schema: object): ValidateFunction => {
    if (!ajv) {
      ajv = new Ajv({ allErrors: true, strict: false, discriminator: false });
      addFormats.default(ajv, { mode: 'full' });
      for (const [name, f] of Object.entries(ajvFormats)) ajv.addFormat(name, f);
      for (const s of Object.values(app.getSchemas())) ajv.addSchema(s as object);
    }
    let v = compiled.get(schema);
    if (!v) compiled.set(schema, (v = ajv.compile(schema)));
    return v;
  };
  const check = (req: FastifyRequest, reply: FastifyReply, value: () => unknown): void => {
    const response = (reply.routeOptions.schema as { response?: ResponseSchemas } | undefined)?.response;
    if (!response) return;
    const request = `${req.method} ${req.url}`;
    const schema = schemaFor(response, reply.statusCode);
    if (schema === undefined) {
      mismatches.push({ request, status: reply.statusCode, errors: [`status ${reply.statusCode} is not documented`] });
      return;
    }
    if (schema === null) return;
    let v: unknown;
    try {
      v = value();
    } catch {
      return;
    }
    const validate = validator(schema);
    if (!validate(v)) {
      const errors = (validate.errors ?? []).slice(0, 10).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`);
      mismatches.push({ request, status: reply.statusCode, errors });
    }
  };
  // An answer given as an object: checked before the serializer.
  const checked = new WeakSet<FastifyReply>();
  app.addHook('preSerialization', async (req, reply, payload) => {
    checked.add(reply);
    if (payload === null && reply.statusCode === 204) return payload;
    check(req, reply, () => JSON.parse(JSON.stringify(payload)));
    return payload;
  });
  // A JSON answer the handler wrote itself (the feeds' ?format=json): checked as sent.
  app.addHook('onSend', async (req, reply, payload) => {
    if (checked.has(reply) || reply.statusCode < 200 || reply.statusCode >= 300) return payload;
    if (!String(reply.getHeader('content-type') ?? '').startsWith('application/json')) return payload;
    if (typeof payload === 'string' && payload !== '') check(req, reply, () => JSON.parse(payload));
    else if (Buffer.isBuffer(payload) && payload.length > 0) check(req, reply, () => JSON.parse(payload.toString('utf8')));
    return payload;
  });
}
