/**
 * The timestamptz parser of the PostgreSQL path (platform/db/timestamps.ts) gives what pg's own
 * parser gives, for every form the server writes and for those it leaves to pg's.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { parseTimestamptz, TIMESTAMPTZ } from '../../src/platform/db/timestamps.js';

const pgParser = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (text: string) => Date | number | null;
const same = (text: string) => {
  const ours = parseTimestamptz(text);
  const theirs = pgParser(text);
  expect(ours instanceof Date ? ours.getTime() : ours, text).toEqual(theirs instanceof Date ? theirs.getTime() : theirs);
};

/** A seeded generator (the cases are the same at each run). */
function random(seed: number) {
  let x = seed;
  return (n: number) => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x % n;
  };
}
const pad = (n: number, w: number) => String(n).padStart(w, '0');

describe('timestamptz as the server writes it', () => {
  it('equals pg\'s parser on 20,000 generated values: years 100–9999, fractions of 0–6 digits, offsets in hours, minutes and seconds', () => {
    const r = random(7);
    for (let k = 0; k < 20_000; k++) {
      const fractionDigits = r(7);
      const fraction = fractionDigits === 0 ? '' : `.${Array.from({ length: fractionDigits }, () => r(10)).join('')}`;
      const offset = [`+${pad(r(15), 2)}`, `-${pad(r(13), 2)}`, `+${pad(r(15), 2)}:${pad(r(60), 2)}`, `-${pad(r(13), 2)}:${pad(r(60), 2)}:${pad(r(60), 2)}`, '+00'][r(5)];
      same(`${pad(100 + r(9900), 4)}-${pad(1 + r(12), 2)}-${pad(1 + r(28), 2)} ${pad(r(24), 2)}:${pad(r(60), 2)}:${pad(r(60), 2)}${fraction}${offset}`);
    }
  });

  it('equals pg\'s parser on the forms it leaves to it: infinity, BC, years before 100 and past 9999, and malformed text', () => {
    for (const text of [
      'infinity', '-infinity', '0044-03-15 12:00:00+00 BC', '0050-06-01 00:00:00+00', '0099-12-31 23:59:59.999+00', '12345-01-01 00:00:00+00',
      '2026-12-03 13:03:40+00', '2026-12-03 13:03:40.+00', '2026-12-03 13:03:40.5', '2026-12-03 13:03:40.5+0', '2026-12-03 13:03:40.5+00:3', '2026-12-03T13:03:40Z',
      '2026-12-03 13:03:40.123456789-05', '2026-12-03 13:03:40+05:30:15:00', '2026-1x-03 13:03:40+00',
    ]) same(text);
  });
});

describe('timestamptz read from the server', () => {
  it.runIf(process.env['DATABASE_URL'])('every instant read in several session time zones is the instant written (as pg\'s parser reads it)', async () => {
    const client = new pg.Client({ connectionString: process.env['DATABASE_URL'], types: { getTypeParser: (oid: number, format?: string) => (oid === TIMESTAMPTZ ? (v: string) => v : pg.types.getTypeParser(oid, format as 'text')) } });
    await client.connect();
    try {
      const instants = ['2026-12-03T13:03:40.377Z', '2026-03-29T01:00:00Z', '1970-01-01T00:00:00Z', '1883-11-18T16:59:59.999Z', '2099-10-31T23:30:00.5Z'];
      for (const zone of ['UTC', 'America/New_York', 'Asia/Kolkata', 'Europe/Amsterdam', 'Australia/Lord_Howe']) {
        await client.query(`SET TimeZone = '${zone}'`);
        const rows = (await client.query<{ t: string }>('SELECT unnest($1::timestamptz[]) AS t', [instants])).rows;
        rows.forEach((row, i) => {
          same(row.t);
          expect((parseTimestamptz(row.t) as Date).toISOString(), `${zone} ${row.t}`).toBe(new Date(instants[i]!).toISOString());
        });
      }
    } finally {
      await client.end();
    }
  });
});
