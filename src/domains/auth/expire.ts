/**
 * spec: Authentication 4: `expire` accepts an ISO date-time without zone, a day/month/year
 * hour:minute:second text, an integer UNIX timestamp, a decimal UNIX timestamp, or a date
 * YYYY-MM-DD. Texts without a zone are read as UTC.
 */
import { isRealDate } from '../../platform/http/params.js';

export const EXPIRE_PATTERN =
  '^([0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,6})?)?)?|[0-9]{2}/[0-9]{2}/[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}|[0-9]{1,12}(\\.[0-9]+)?)$';

export const EXPIRE_DESCRIPTION =
  'When the credential dies. One of: an ISO date-time without zone (2026-12-31T18:00:00, read as UTC), ' +
  'a day/month/year text (31/12/2026 18:00:00, UTC), an integer UNIX timestamp in seconds (1798740000), ' +
  'a decimal UNIX timestamp (1798740000.5), or a date (2026-12-31, midnight UTC).';

/** Parses one of the five forms; returns null when the text is none of them or not a real time. */
export function parseExpire(text: string): Date | null {
  let m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(\.[0-9]{1,6})?)?)?$/.exec(text);
  if (m) return utc(+m[1]!, +m[2]!, +m[3]!, +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0), Number(m[7] ?? 0));
  m = /^([0-9]{2})\/([0-9]{2})\/([0-9]{4}) ([0-9]{2}):([0-9]{2}):([0-9]{2})$/.exec(text);
  if (m) return utc(+m[3]!, +m[2]!, +m[1]!, +m[4]!, +m[5]!, +m[6]!, 0);
  if (/^[0-9]{1,12}(\.[0-9]+)?$/.test(text)) return new Date(Math.round(Number(text) * 1000));
  return null;
}

function utc(y: number, mo: number, d: number, h: number, mi: number, s: number, frac: number): Date | null {
  if (!isRealDate(y, mo, d) || h > 23 || mi > 59 || s > 59) return null;
  return new Date(Date.UTC(y, mo - 1, d, h, mi, s) + Math.round(frac * 1000));
}
