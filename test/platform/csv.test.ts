import { describe, expect, it } from 'vitest';
import { CSV_DELIMITER, csvCell, csvDecimalComma, csvList, csvStream, csvText, DecimalComma, readCsv } from '../../src/platform/csv.js';

async function text(stream: NodeJS.ReadableStream): Promise<string> {
  let s = '';
  for await (const c of stream) s += c.toString();
  return s;
}

describe('CSV', () => {
  it('writes ; separated RFC 4180 CSV with a header and CRLF', async () => {
    const out = await text(csvStream(['id', 'name', 'teams', 'archived', 'n'], [[['a', 'plain', ['north', 'south'], false, 3]], [['b', 'semi;colon "quoted"\nline', [], true, null]]]));
    expect(out).toBe('id;name;teams;archived;n\r\na;plain;north,south;False;3\r\nb;"semi;colon ""quoted""\nline";;True;\r\n');
  });

  it('neutralises formula cells in text but never in numbers, and reads them back', async () => {
    expect(csvCell('=HYPERLINK("x")')).toBe(`'=HYPERLINK("x")`);
    expect(csvCell('-done')).toBe(`'-done`);
    expect(csvCell('@home')).toBe(`'@home`);
    expect(csvCell(-42)).toBe('-42');
    expect(csvCell("'quoted already")).toBe("'quoted already");
    const out = await text(csvStream(['v', 'k'], [[['=1+1', 1], ['-x', 2], ["'plain", 3], ['', 4]]]));
    const back = await readCsv(out);
    expect(back.records.map((r) => r.values['v'])).toEqual(['=1+1', '-x', "'plain", '']);
    expect(back.records.map((r) => r.line)).toEqual([2, 3, 4, 5]);
  });

  it('round-trips bytes: write → read → write', async () => {
    const rows = [['x1', 'Ça va; "oui"', ['t1', 't2'], true, 12.5], ['x2', '', [], false, null]] as const;
    const first = await text(csvStream(['id', 'label', 'teams', 'flag', 'num'], [rows.map((r) => [...r])]));
    const read = await readCsv(first);
    const again = await text(
      csvStream(['id', 'label', 'teams', 'flag', 'num'], [read.records.map((r) => [r.values['id'], r.values['label'], csvList(r.values['teams']!), r.values['flag'] === 'True', r.values['num'] === '' ? null : Number(r.values['num'])])]),
    );
    expect(again).toBe(first);
  });

  it('writes records written as text (csvText, csvDecimalComma) as it writes cells, across pieces of the stream', async () => {
    const records = Array.from({ length: 3000 }, (_, i) => ({ id: i, name: i % 7 === 0 ? `\tcell ${i}\r` : i % 11 === 0 ? `=x;"${i}"` : i % 13 === 0 ? null : `stop ${i}`, lat: -45.5 - i }));
    const cells = (r: (typeof records)[number]) => [r.id, r.name, new DecimalComma(r.lat), r.id % 2 === 0];
    const written = (r: (typeof records)[number]) => [String(r.id), csvText(r.name), csvDecimalComma(r.lat), r.id % 2 === 0 ? 'True' : 'False'].join(CSV_DELIMITER) + '\r\n';
    const asText = await text(csvStream(['id', 'name', 'lat', 'even'], [records.slice(0, 1000).map(written).join(''), records.slice(1000).map(written).join('')]));
    expect(asText).toBe(await text(csvStream(['id', 'name', 'lat', 'even'], [records.map(cells)])));
    expect(asText.length).toBeGreaterThan(64 * 1024);
    const lines = asText.split('\r\n');
    expect(lines).toHaveLength(3002);
    expect(lines[1]).toBe(`0;"'\tcell 0\r";-45,5;True`);
    expect(lines[2]).toBe('1;stop 1;-46,5;False');
    expect(lines[12]).toBe(`11;"'=x;""11""";-56,5;False`);
    expect(lines[14]).toBe('13;;-58,5;False');
  });

  it('names the line of malformed CSV', async () => {
    await expect(readCsv('a;b\r\n1;"unclosed\r\n')).rejects.toThrow(/line \d+/);
  });
});
