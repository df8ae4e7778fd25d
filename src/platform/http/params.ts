/**
 * Parameter schemas shared by every domain, each format defined once (spec: Limits).
 * Calendar validity (no 2024-02-30) and the range of years are checked by the formats below,
 * registered on the app's ajv instance (app.ts) and on TypeBox's (the device items).
 */
import { Type, type Static, type TSchema, type TUnsafe } from 'typebox';
import { Format } from 'typebox/format';
import { fullFormats } from 'ajv-formats/dist/formats.js';

/**
 * The years of the dates and instants the API takes (the spec is silent; issue #15: a year 0000
 * reached the database and answered 500). Wide enough for any service date or report, narrow
 * enough that a day or a period added stays a 4-digit year everywhere (JavaScript, luxon, SQL).
 */
export const MIN_YEAR = 1900;
export const MAX_YEAR = 2999;
export const API_YEARS = `years ${MIN_YEAR} to ${MAX_YEAR}`;
export const MAX_UNIX_SECONDS = Date.UTC(MAX_YEAR + 1, 0, 1) / 1000 - 1;

const inApiYears = (year: number) => year >= MIN_YEAR && year <= MAX_YEAR;

export function StringEnum<const T extends readonly string[]>(values: T, o: { description?: string; default?: T[number] } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...o });
}

/**
 * `T | null`. A primitive schema becomes one schema with a type list ({type: ["integer","null"]}):
 * with ajv's type coercion, a union would coerce a body's null into its first branch (0, "",
 * false) and keep it. Other schemas stay a union.
 */
export function Nullable<T extends TSchema>(t: T): TUnsafe<Static<T> | null> {
  const type = (t as { type?: unknown }).type;
  if (typeof type === 'string' && ['string', 'integer', 'number', 'boolean'].includes(type)) {
    const enumValues = (t as { enum?: unknown[] }).enum;
    return Type.Unsafe<Static<T> | null>({ ...t, type: [type, 'null'], ...(enumValues ? { enum: [...enumValues, null] } : {}) });
  }
  return Type.Unsafe<Static<T> | null>(Type.Union([t, Type.Null()]));
}

export const IdString = (description: string) => Type.String({ minLength: 1, maxLength: 128, description });

/** A group identifier: 1 to 64 letters, digits, dots, underscores and dashes, not starting with a sign. */
export const GROUP_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const GroupId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', description: 'The group (network) identifier.' });
export const GroupParams = Type.Object({ group_id: GroupId });

/** spec: Limits: date of trips, export/trips and planning: 8 digits YYYYMMDD. */
export const Date8 = (description = 'A date written YYYYMMDD (exactly 8 digits).') =>
  Type.String({ pattern: '^[0-9]{8}$', format: 'yyyymmdd', description, examples: ['20260315'] });

/** spec: Limits: date of a single trip: YYYY-MM-DD. */
export const DateIso = (description = 'A date written YYYY-MM-DD.') =>
  Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', format: 'date', description, examples: ['2026-03-15'] });

/** spec: Limits: date of vehicle movements: YYYY-MM-DD or YYYYMMDD. */
export const DateEither = (description = 'A date written YYYY-MM-DD or YYYYMMDD.') =>
  Type.String({ pattern: '^[0-9]{4}-?[0-9]{2}-?[0-9]{2}$', format: 'date-either', description, examples: ['2026-03-15', '20260315'] });

/** spec: Limits: period: YYYY-MM, month 01 to 12. */
export const Period = Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$', format: 'year-month', description: `A month written YYYY-MM (month 01 to 12, ${API_YEARS}).`, examples: ['2026-03'] });

/** spec: Limits: at: integer UNIX seconds; bounded like the dates (a larger one is no instant JavaScript can write). */
export const UnixSeconds = (description: string) => Type.Integer({ minimum: 0, maximum: MAX_UNIX_SECONDS, description: `${description} (UNIX seconds, at most ${MAX_UNIX_SECONDS}: the end of ${MAX_YEAR}).` });

/** spec: driver_id and before_id: exactly 24 hexadecimal characters. */
export const ObjectIdString = (description: string) =>
  Type.String({ pattern: '^[0-9a-fA-F]{24}$', description: `${description} (exactly 24 hexadecimal characters).` });

/**
 * A link shown to people (a passenger message's url): http or https only. `format: uri` alone
 * accepts `javascript:…` and `data:…`, which a page rendering the feed would run or open.
 */
export const HTTP_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+';
export const HttpUrl = (o: { maxLength: number; description?: string }) =>
  Type.String({ format: 'uri', pattern: HTTP_URL_PATTERN, maxLength: o.maxLength, description: `${o.description ? `${o.description} ` : ''}An http:// or https:// URL (other schemes, e.g. javascript:, are refused).` });

/** Both date forms normalised to YYYY-MM-DD. */
export function isoDate(d: string): string {
  return d.length === 8 ? `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}` : d;
}

/** A day of the calendar: year 0 does not exist for PostgreSQL (1 BC), nor years beyond 9999 in 4 digits. */
export function isRealDate(y: number, m: number, d: number): boolean {
  if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1) return false;
  const days = [31, (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return d <= days[m - 1]!;
}


/** YYYY-MM-DD or YYYYMMDD, a real day of the API's years. */
export function isRealDateString(s: string): boolean {
  const m = /^([0-9]{4})-?([0-9]{2})-?([0-9]{2})$/.exec(s);
  return !!m && inApiYears(Number(m[1])) && isRealDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** An RFC 3339 date-time with its offset, of the API's years (the year read as written). */
const rfc3339 = (fullFormats['date-time'] as { validate: (s: string) => boolean }).validate;

export function isApiDateTime(s: string): boolean {
  return rfc3339(s) && inApiYears(Number(s.slice(0, 4))) && Number.isFinite(Date.parse(s));
}

/**
 * The formats of dates, registered on the app's ajv instance (after ajv-formats: `date` and
 * `date-time` replace its own) and on TypeBox's (device items).
 */
export const ajvFormats = {
  yyyymmdd: (s: string) => /^[0-9]{8}$/.test(s) && isRealDateString(s),
  'date-either': (s: string) => /^[0-9]{4}(-[0-9]{2}-[0-9]{2}|[0-9]{4})$/.test(s) && isRealDateString(s),
  date: (s: string) => /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(s) && isRealDateString(s),
  'date-time': isApiDateTime,
  'year-month': (s: string) => /^[0-9]{4}-(0[1-9]|1[0-2])$/.test(s) && inApiYears(Number(s.slice(0, 4))),
};
for (const name of ['date', 'date-time'] as const) Format.Set(name, ajvFormats[name]);

/** What each format of ajvFormats takes, for the messages of the 422. */
export const FORMAT_HINTS: Record<string, string> = {
  yyyymmdd: `date written YYYYMMDD, a real day of the ${API_YEARS}`,
  'date-either': `date written YYYY-MM-DD or YYYYMMDD, a real day of the ${API_YEARS}`,
  date: `date written YYYY-MM-DD, a real day of the ${API_YEARS}`,
  'date-time': `date-time written as RFC 3339 with an offset (2026-03-15T08:00:00+01:00), ${API_YEARS}`,
  'year-month': `month written YYYY-MM of the ${API_YEARS}`,
};

/** A querystring fragment: the two parameters cannot be sent together (422 value_error). */
export function mutuallyExclusive(a: string, b: string) {
  return { not: { required: [a, b], description: `${a} and ${b} are mutually exclusive: send one or the other` } };
}
