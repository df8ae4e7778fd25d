/**
 * PostgreSQL's `timestamptz` text as a Date, the same Date pg's own parser (postgres-date) gives,
 * read without regular expressions in the form the server writes with DateStyle ISO (its
 * default): `2026-12-03 13:03:40.377123+00`, the offset `-05`, `+05:30` or `+00:53:28`. Any other
 * form (a year before 100 or past 9999, BC, infinity) is left to pg's parser.
 *
 * Why: the feeds' thread parses a city's open trips' stop rows at each rebuild (five timestamps a
 * row, a quarter of a million rows), and pg's parser, three regular expressions and a split per
 * value, took 5 % of that thread's time (bench/RESULTS.md, 2026-12-03).
 */
import pg from 'pg';

export const TIMESTAMPTZ = 1184;

const fallback = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (text: string) => Date | number | null;

const ZERO = 48;
const COLON = 58;

/** The number written by the `n` digits at `from`, or -1 when one is not a digit. */
function digits(s: string, from: number, n: number): number {
  let v = 0;
  for (let i = from; i < from + n; i++) {
    // Past the end, charCodeAt gives NaN: not a digit either.
    const d = s.charCodeAt(i) - ZERO;
    if (!(d >= 0 && d <= 9)) return -1;
    v = v * 10 + d;
  }
  return v;
}

export function parseTimestamptz(s: string): Date | number | null {
  // YYYY-MM-DD HH:MM:SS, then the fraction and the offset.
  if (s.length < 22 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 32 || s.charCodeAt(13) !== COLON || s.charCodeAt(16) !== COLON) return fallback(s);
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 2);
  const day = digits(s, 8, 2);
  const hour = digits(s, 11, 2);
  const minute = digits(s, 14, 2);
  const second = digits(s, 17, 2);
  // Date.UTC reads years 0–99 as 1900–1999: those are pg's parser's.
  if (year < 100 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return fallback(s);
  let i = 19;
  let ms = 0;
  if (s.charCodeAt(i) === 46) {
    let j = i + 1;
    while (j < s.length && s.charCodeAt(j) >= ZERO && s.charCodeAt(j) <= ZERO + 9) j++;
    if (j === i + 1) return fallback(s);
    // As pg's parser reads it (Date.UTC then drops what is below the millisecond).
    ms = 1000 * parseFloat(s.slice(i, j));
    i = j;
  }
  // The offset: hours, then minutes and seconds when written.
  const sign = s.charCodeAt(i);
  if (sign !== 43 && sign !== 45) return fallback(s);
  const hours = digits(s, i + 1, 2);
  if (hours < 0) return fallback(s);
  let offset = hours * 3600;
  i += 3;
  for (let unit = 60; unit >= 1 && i < s.length; unit /= 60) {
    const n = s.charCodeAt(i) === COLON ? digits(s, i + 1, 2) : -1;
    if (n < 0) return fallback(s);
    offset += n * unit;
    i += 3;
  }
  if (i !== s.length) return fallback(s);
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms) - (sign === 45 ? -offset : offset) * 1000);
}
