/**
 * The environment as a schema: each variable is declared once (type, default, bounds, allowed
 * values, meaning), validated by env-schema (Ajv) with every problem collected before failing, and
 * written out as the configuration reference of docs/configuration.md (`npm run docs:config`).
 *
 * A problem names the variable and its value (`PORT="eighty": must be a whole number`), except a
 * secret's value (a password) and the password inside a connection string, which are never printed.
 */
import envSchema from 'env-schema';
import { Type, type Static, type TObject, type TOptional, type TSchema } from 'typebox';
import type { ErrorObject } from 'ajv';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const BOOLEAN_WORDS: Record<string, 'true' | 'false'> = { '1': 'true', true: 'true', yes: 'true', on: 'true', '0': 'false', false: 'false', no: 'false', off: 'false' };

/** Checks of text values beyond their type, each with the sentence that names what is wrong. */
const FORMATS: Record<string, { check: (v: string) => boolean; problem: string; allowed: string }> = {
  'postgres-url': { check: (v) => urlWith(v, ['postgres:', 'postgresql:']), problem: 'must be a URL starting with postgres:// or postgresql://', allowed: '`postgres://…` URL' },
  'http-url': { check: (v) => urlWith(v, ['http:', 'https:']), problem: 'must be a URL starting with http:// or https://', allowed: '`http(s)://…` URL' },
  email: { check: (v) => /^[^@\s]+@[^@\s]+$/.test(v), problem: 'is not an email address', allowed: 'email address' },
  'origin-list': {
    check: (v) => v.split(',').map((o) => o.trim()).filter((o) => o !== '').every((o) => o === '*' || isOrigin(o)),
    problem: 'each entry must be an origin such as https://ops.example.org (scheme, host and port only), or *',
    allowed: 'origins, comma-separated',
  },
  'issuer-template': { check: (v) => v.includes('{domain}'), problem: 'must contain {domain}', allowed: 'text holding `{domain}`' },
};

interface Declared<T> {
  default?: T;
  description: string;
}

/** A variable without a default is optional (unset: undefined). */
type Declaration<S extends TSchema, O> = O extends { default: unknown } ? S : TOptional<S>;
const declared = <S extends TSchema, O extends { default?: unknown }>(schema: S, o: O) =>
  (o.default === undefined ? Type.Optional(schema) : schema) as Declaration<S, O>;
const annotations = (o: { default?: unknown; description: string }) => ({ ...(o.default !== undefined && { default: o.default }), description: o.description });

/** The declarations of a variable: JSON schemas with their meaning, for validation and the reference. */
export const env = {
  int: <O extends Declared<number> & { min?: number; max?: number }>(o: O) =>
    declared(Type.Integer({ ...annotations(o), ...(o.min !== undefined && { minimum: o.min }), ...(o.max !== undefined && { maximum: o.max }) }), o),
  str: <O extends Declared<string> & { minLength?: number; secret?: boolean; format?: keyof typeof FORMATS }>(o: O) =>
    declared(Type.String({
      ...annotations(o),
      ...(o.minLength !== undefined && { minLength: o.minLength }),
      ...(o.format !== undefined && { format: o.format }),
      ...(o.secret && { writeOnly: true }),
    }), o),
  bool: <O extends Declared<boolean>>(o: O) => declared(Type.Boolean(annotations(o)), o),
  oneOf: <const T extends readonly string[], O extends Declared<T[number]>>(values: T, o: O) =>
    declared(Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...annotations(o) }), o),
};

/**
 * A reader of `source` against the declared variables: unset or empty variables take their default;
 * unknown variables are ignored. Returns the values and every problem (none when valid). The
 * schema is compiled once per reader (a test suite reads the configuration for each app it builds).
 */
export function environmentReader<S extends TObject>(schema: S): (source: NodeJS.ProcessEnv) => { values: Static<S>; problems: string[] } {
  const properties = schema.properties as Record<string, TSchema & Record<string, unknown>>;
  // A copy: env-schema marks the schema closed, and the declarations are shared with the reference.
  const closed = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  // env-schema builds an Ajv with its options through customOptions (about 50 ms): the first one is
  // kept, with the compiled schema, and handed back to env-schema as the instance to use.
  let ajv: Parameters<typeof withFormats>[0] | undefined;
  const customOptions = <A extends Parameters<typeof withFormats>[0]>(fresh: A): A => (ajv = withFormats(fresh));
  return (source) => {
    const data: Record<string, unknown> = {};
    for (const [name, s] of Object.entries(properties)) {
      const v = source[name];
      if (v === undefined || v === '') continue;
      data[name] = s['type'] === 'boolean' ? (BOOLEAN_WORDS[v.toLowerCase()] ?? v) : v;
    }
    try {
      const values = envSchema({ schema: closed, data, env: false, dotenv: false, ajv: (ajv as never) ?? { customOptions } });
      return { values: values as Static<S>, problems: [] };
    } catch (e) {
      const errors = (e as { errors?: ErrorObject[] }).errors;
      if (!errors) throw e;
      const problems = errors.map((err) => problemOf(err, properties, source));
      return { values: data as Static<S>, problems: [...new Set(problems)] };
    }
  };
}

function withFormats<A extends { addFormat: (name: string, f: (v: string) => boolean) => unknown }>(ajv: A): A {
  for (const [name, f] of Object.entries(FORMATS)) ajv.addFormat(name, f.check);
  return ajv;
}

function problemOf(err: ErrorObject, properties: Record<string, Record<string, unknown>>, source: NodeJS.ProcessEnv): string {
  const name = err.instancePath.replace(/^\//, '');
  const s = properties[name] ?? {};
  const raw = source[name] ?? '';
  const why = (() => {
    switch (err.keyword) {
      case 'type':
        if (s['type'] === 'integer') return 'must be a whole number';
        if (s['type'] === 'boolean') return `must be one of ${Object.keys(BOOLEAN_WORDS).join(', ')}`;
        return `must be ${String(s['type'])}`;
      case 'minimum': return `must be at least ${String(err.params['limit'])}`;
      case 'maximum': return `must be at most ${String(err.params['limit'])}`;
      case 'minLength': return `must be at least ${String(err.params['limit'])} characters long`;
      case 'enum': return `must be one of ${(err.params['allowedValues'] as string[]).join(', ')}`;
      case 'format': return FORMATS[String(err.params['format'])]?.problem ?? `must be a ${String(err.params['format'])}`;
      default: return err.message ?? 'is not valid';
    }
  })();
  return s['writeOnly'] ? `${name}: ${why}` : `${name}=${JSON.stringify(redact(raw))}: ${why}`;
}

/** The reference of the declared variables, as the rows of a Markdown table. */
export function referenceTable(schema: TObject): string {
  const rows = ['| variable | default | allowed | meaning |', '|---|---|---|---|'];
  for (const [name, s] of Object.entries(schema.properties as Record<string, Record<string, unknown>>)) {
    rows.push(`| \`${name}\` | ${defaultOf(s)} | ${allowedOf(s)} | ${String(s['description']).replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`);
  }
  return rows.join('\n');
}

function defaultOf(s: Record<string, unknown>): string {
  if (!('default' in s)) return 'unset';
  const d = s['default'];
  if (typeof d === 'boolean') return d ? '`1`' : '`0`';
  return d === '' ? 'empty' : `\`${String(d)}\``;
}

function allowedOf(s: Record<string, unknown>): string {
  if (Array.isArray(s['enum'])) return (s['enum'] as string[]).map((v) => `\`${v}\``).join(', ');
  if (s['type'] === 'boolean') return '`1`/`0` (or true/false, yes/no, on/off)';
  if (s['type'] === 'integer') {
    const min = s['minimum'] as number | undefined;
    const max = s['maximum'] as number | undefined;
    if (min !== undefined && max !== undefined) return `${min}–${max}`;
    if (min !== undefined) return `≥ ${min}`;
    return max !== undefined ? `≤ ${max}` : 'whole number';
  }
  if (s['minLength'] !== undefined) return `at least ${String(s['minLength'])} characters`;
  const format = s['format'] as string | undefined;
  return format ? FORMATS[format]!.allowed : 'text';
}

function urlWith(v: string, protocols: string[]): boolean {
  try {
    return protocols.includes(new URL(v).protocol);
  } catch {
    return false;
  }
}

function isOrigin(o: string): boolean {
  try {
    const u = new URL(o);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === o;
  } catch {
    return false;
  }
}

/** Never print a password that sits in a connection string. */
function redact(v: string): string {
  return v.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
}
