/**
 * Schema validation errors (ajv, through Fastify) turned into FastAPI's HTTPValidationError
 * items, so integrators written against the reference API read them the same way.
 */
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import type { ValidationIssue } from './errors.js';
import { FORMAT_HINTS } from './params.js';

const CONTEXT: Record<string, string> = { querystring: 'query', params: 'path', body: 'body', headers: 'header' };

const SENSITIVE = /pass|secret|token/i;

export function toIssues(errors: FastifySchemaValidationError[], context: string | undefined): ValidationIssue[] {
  const where = CONTEXT[context ?? ''] ?? context ?? 'body';
  // A failed anyOf reports each branch too; keep the anyOf line only.
  const unionPaths = new Set(errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => e.instancePath));
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (e.keyword !== 'anyOf' && e.keyword !== 'oneOf' && [...unionPaths].some((p) => e.instancePath === p && e.schemaPath.includes('anyOf'))) continue;
    const issue = toIssue(e, where);
    const key = JSON.stringify(issue.loc) + issue.type;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

function toIssue(e: FastifySchemaValidationError, where: string): ValidationIssue {
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  const loc: (string | number)[] = [where, ...path];
  const params = e.params as Record<string, unknown>;
  const input = (e as { data?: unknown }).data;
  const withInput = (issue: ValidationIssue): ValidationIssue =>
    input === undefined || loc.some((l) => typeof l === 'string' && SENSITIVE.test(l)) ? issue : { ...issue, input };

  switch (e.keyword) {
    case 'required':
      return { loc: [...loc, String(params['missingProperty'])], msg: 'Field required', type: 'missing' };
    case 'additionalProperties':
      return { loc: [...loc, String(params['additionalProperty'])], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' };
    case 'pattern':
      return withInput({ loc, msg: `String should match pattern '${String(params['pattern'])}'`, type: 'string_pattern_mismatch' });
    case 'format': {
      const format = String(params['format']);
      return withInput({ loc, msg: `Input should be a valid ${FORMAT_HINTS[format] ?? format}`, type: 'value_error' });
    }
    case 'minLength':
      return withInput({ loc, msg: `String should have at least ${String(params['limit'])} characters`, type: 'string_too_short' });
    case 'maxLength':
      return withInput({ loc, msg: `String should have at most ${String(params['limit'])} characters`, type: 'string_too_long' });
    case 'minimum':
      return withInput({ loc, msg: `Input should be greater than or equal to ${String(params['limit'])}`, type: 'greater_than_equal' });
    case 'maximum':
      return withInput({ loc, msg: `Input should be less than or equal to ${String(params['limit'])}`, type: 'less_than_equal' });
    case 'exclusiveMinimum':
      return withInput({ loc, msg: `Input should be greater than ${String(params['limit'])}`, type: 'greater_than' });
    case 'exclusiveMaximum':
      return withInput({ loc, msg: `Input should be less than ${String(params['limit'])}`, type: 'less_than' });
    case 'minItems':
      return { loc, msg: `List should have at least ${String(params['limit'])} items`, type: 'too_short' };
    case 'maxItems':
      return { loc, msg: `List should have at most ${String(params['limit'])} items`, type: 'too_long' };
    case 'uniqueItems':
      return withInput({ loc, msg: `Values should be unique (items ${String(params['j'])} and ${String(params['i'])} are equal)`, type: 'value_error' });
    case 'enum': {
      const allowed = (params['allowedValues'] as unknown[]) ?? [];
      return withInput({ loc, msg: `Input should be ${allowed.map((a) => `'${String(a)}'`).join(', ').replace(/, ([^,]*)$/, ' or $1')}`, type: 'enum' });
    }
    case 'const':
      return withInput({ loc, msg: `Input should be '${String(params['allowedValue'])}'`, type: 'literal_error' });
    case 'type': {
      const t = String(params['type']);
      const byType: Record<string, [string, string]> = {
        integer: ['Input should be a valid integer', 'int_parsing'],
        number: ['Input should be a valid number', 'float_parsing'],
        boolean: ['Input should be a valid boolean', 'bool_parsing'],
        string: ['Input should be a valid string', 'string_type'],
        array: ['Input should be a valid list', 'list_type'],
        object: ['Input should be a valid object', 'dict_type'],
        null: ['Input should be null', 'none_required'],
      };
      const [msg, type] = byType[t.split(',')[0]!] ?? [`Input should be of type ${t}`, 'type_error'];
      return withInput({ loc, msg, type });
    }
    case 'not': {
      // Used for mutually exclusive parameters (params.ts, mutuallyExclusive).
      const schema = (e as { schema?: { required?: string[]; description?: string } }).schema;
      return { loc, msg: schema?.description ?? 'Invalid combination of values', type: 'value_error' };
    }
    case 'anyOf':
    case 'oneOf':
      return withInput({ loc, msg: 'Input does not match any of the allowed forms', type: 'union_error' });
    default:
      return withInput({ loc, msg: e.message ?? 'Invalid value', type: 'value_error' });
  }
}

/**
 * How deeply a JSON body may nest (objects and lists): the deepest body of the API is a few
 * levels; a body of 20,000 nested lists made the validation error unserialisable (issue #15).
 * Also the depth findNul looks into.
 */
export const MAX_JSON_DEPTH = 32;

/** Whether JSON text nests deeper than MAX_JSON_DEPTH; one pass over the text, before parsing. */
export function nestsTooDeep(text: string): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // A string: skip to its closing quote, over escaped characters.
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 92) i++;
        else if (s === 34) break;
      }
    } else if (c === 123 || c === 91) {
      if (++depth > MAX_JSON_DEPTH) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/**
 * PostgreSQL text cannot hold the NUL character: a value carrying one would fail in the database.
 * It is refused up front, as a validation error naming where it is (path, query or body).
 */
export function findNul(value: unknown, loc: (string | number)[]): (string | number)[] | null {
  const path = nulPath(value, 0);
  return path ? [...loc, ...path] : null;
}

/** Where the first NUL is below `value`; the path is built only when one is found (every request runs this). */
function nulPath(value: unknown, depth: number): (string | number)[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? [] : null;
  if (depth >= MAX_JSON_DEPTH || value === null || typeof value !== 'object') return null;
  // Parsed JSON and forms only: a streamed body (a GTFS zip) is not a value to look into.
  if (typeof (value as { pipe?: unknown }).pipe === 'function' || ArrayBuffer.isView(value)) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulPath(value[i], depth + 1);
      if (found) return [i, ...found];
    }
    return null;
  }
  for (const k of Object.keys(value)) {
    if (k.includes('\u0000')) return [k];
    const found = nulPath((value as Record<string, unknown>)[k], depth + 1);
    if (found) return [k, ...found];
  }
  return null;
}
