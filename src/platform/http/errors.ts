/**
 * The one error module. Every error answer but 422 is `{"detail": "<message>", "code": "<Name>"}`
 * with the spec's names; 422 keeps FastAPI's HTTPValidationError shape
 * `{"detail": [{"loc": [...], "msg": "...", "type": "..."}]}`.
 * Services throw these; routes never build error bodies by hand.
 */
import { Type, type Static } from 'typebox';
import { component } from './components.js';
import { ERROR_CODES, type CodeOf, type ErrorCode } from './error-codes.js';

/** An error answer of a registry code (error-codes.ts): its status comes from there. Throw `fail(code, detail)`. */
export class HttpError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string = ERROR_CODES[code].description,
    readonly headers: Record<string, string> = {},
    /** Extra machine-readable fields added to the body (e.g. a list of import errors). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.status = ERROR_CODES[code].status;
  }

  body(): ErrorBody {
    return { ...this.extra, detail: this.message, code: this.code };
  }
}

/** The error to throw for a registry code; `detail` (default: the code's description) says what happened. */
export const fail = (code: ErrorCode, detail?: string, headers?: Record<string, string>, extra?: Record<string, unknown>): HttpError => new HttpError(code, detail, headers, extra);

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
  input?: unknown;
}

/** A 422 raised by our own checks, in the same shape as schema validation errors. */
export class ValidationError extends Error {
  readonly status = 422;
  constructor(readonly issues: ValidationIssue[]) {
    // The first issues only: a file can have hundreds of thousands.
    super(issues.slice(0, 10).map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ') + (issues.length > 10 ? `; and ${issues.length - 10} more` : ''));
    this.name = 'ValidationError';
  }
}

/** At most this many issues are listed in one 422; a last item says how many more there were. */
export const MAX_LISTED_ISSUES = 1000;
/** An input longer than this is cut in the 422 (its length said); a larger object or list is left out. */
const MAX_INPUT_CHARS = 200;

/**
 * The issues of a 422 as sent: bounded in number and size, and always serialisable (issue #15: a
 * 1,000,000-column CSV header answered 174 MB; a deeply nested body echoed as `input` could not
 * be serialised and answered 500).
 */
export function listedIssues(issues: readonly ValidationIssue[]): ValidationIssue[] {
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map(bounded);
  if (issues.length > MAX_LISTED_ISSUES) {
    listed.push({ loc: [issues[0]!.loc[0] ?? 'body'], msg: `${issues.length - MAX_LISTED_ISSUES} more problems are not listed`, type: 'too_many_errors' });
  }
  return listed;
}

/** A message quoting values (a trip_id of the file…) is cut at this length. */
const MAX_MSG_CHARS = 1000;

const cut = (s: string, max = MAX_INPUT_CHARS) => (s.length <= max ? s : `${s.slice(0, max)}… (${s.length} characters)`);

function bounded(issue: ValidationIssue): ValidationIssue {
  const loc = issue.loc.map((l) => (typeof l === 'string' ? cut(l) : l));
  const { input, ...rest } = issue;
  rest.msg = cut(rest.msg, MAX_MSG_CHARS);
  if (input === undefined || input === null || typeof input === 'number' || typeof input === 'boolean') return { ...rest, loc, ...(input !== undefined ? { input } : {}) };
  if (typeof input === 'string') return { ...rest, loc, input: cut(input) };
  let text: string | undefined;
  try {
    text = JSON.stringify(input);
  } catch {
    // Too deep to write (or a cycle): left out.
  }
  return text !== undefined && text.length <= MAX_INPUT_CHARS ? { ...rest, loc, input } : { ...rest, loc };
}

export const invalid = (loc: (string | number)[], msg: string, type = 'value_error', input?: unknown) =>
  new ValidationError([{ loc, msg, type, ...(input !== undefined ? { input } : {}) }]);

export const ErrorBody = component('Error', Type.Object(
  {
    detail: Type.String({ description: 'A message for humans.' }),
    code: Type.String({ description: 'The error name, stable for machines (e.g. GroupNotFound, NoRole, WrongLogin).' }),
    request_id: Type.Optional(Type.String({ description: 'Present on 500 answers: quote it when reporting the problem.' })),
    notification: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: '502 `SmsNotSent`: the notification as recorded, with its failed status (the record of POST …/notifications).' })),
    errors: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: '422 `InvalidGtfsFeed`: the first errors of the feed, each naming its file, line, field and rule.' })),
    error_count: Type.Optional(Type.Integer({ description: '422 `InvalidGtfsFeed`: how many errors the feed has.' })),
    error_counts: Type.Optional(Type.Record(Type.String(), Type.Integer(), { description: '422 `InvalidGtfsFeed`: the number of errors by rule code.' })),
    warnings: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: '422 `InvalidGtfsFeed`: the first warnings of the feed.' })),
    warning_count: Type.Optional(Type.Integer({ description: '422 `InvalidGtfsFeed`: how many warnings the feed has.' })),
  },
  { additionalProperties: false, title: 'Error', description: 'Every error answer but a schema validation 422. The optional fields are present only on the answers their descriptions name.' },
));
export type ErrorBody = Static<typeof ErrorBody>;

export const HTTPValidationError = component('HTTPValidationError', Type.Object(
  {
    detail: Type.Array(
      Type.Object({
        loc: Type.Array(Type.Union([Type.String(), Type.Integer()]), { description: 'Where the bad value is: ["query","date"], ["body","assignments",3,"trip_id"]…' }),
        msg: Type.String(),
        type: Type.String({ description: 'missing, string_pattern_mismatch, int_parsing, bool_parsing, enum, value_error, extra_forbidden, json_invalid…' }),
        input: Type.Optional(Type.Unknown({ description: 'The bad value (cut at 200 characters; a large object or list is left out; never a password or secret).' })),
      }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false, title: 'HTTPValidationError', description: 'A 422: the problems found in the request, FastAPI\'s shape.' },
));

// Common errors, one constructor each, so the names stay consistent everywhere.
// Common errors, one constructor each, so the messages stay consistent everywhere; the codes are
// the registry's, checked against the status the helper names.
export const errors = {
  unauthenticated: (why = 'A valid credential is required') => fail('Unauthenticated', why, { 'www-authenticate': 'Bearer' }),
  groupNotFound: (groupId: string) => fail('GroupNotFound', `Group ${JSON.stringify(groupId)} does not exist`),
  noRole: (groupId: string) => fail('NoRole', `You have no role in group ${JSON.stringify(groupId)}`),
  notFound: (code: CodeOf<404>, what: string) => fail(code, what),
  forbidden: (code: CodeOf<403>, why: string) => fail(code, why),
  conflict: (code: CodeOf<409>, why: string) => fail(code, why),
  notImplemented: (what: string) => fail('NotImplemented', `Not implemented yet: ${what}. The endpoint is registered with its parameters, which are already validated.`),
};
