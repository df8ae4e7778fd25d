/**
 * The one way lists that grow without bound are paged (DESIGN 4): `limit` and an opaque `cursor`;
 * the next page's URL is in a `Link: <…>; rel="next"` header, so bodies stay the arrays the spec
 * names. Cursors are keyset positions (the sort key of the last row), so a page never repeats or
 * skips a row that existed when the first page was read, whatever is inserted meanwhile.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { invalid } from './errors.js';

export const DEFAULT_LIMIT = 1000;

export function encodeCursor(key: readonly unknown[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

export function decodeCursor(cursor: string | undefined, arity: number): unknown[] | null {
  if (cursor === undefined) return null;
  try {
    const key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(key) && key.length === arity) return key;
  } catch {
    // fall through
  }
  throw invalid(['query', 'cursor'], 'Not a cursor of this list: use the URL of the Link header as given', 'value_error', cursor);
}

/**
 * Sets the Link header when the page is full. Fetch `limit + 1` rows: when there is one more, the
 * page is cut at `limit` and the next cursor is the key of its last row.
 */
export function page<T>(req: FastifyRequest, reply: FastifyReply, rows: T[], limit: number, keyOf: (row: T) => readonly unknown[]): T[] {
  if (rows.length <= limit) return rows;
  const pageRows = rows.slice(0, limit);
  const url = new URL(req.originalUrl ?? req.url, 'http://local');
  url.searchParams.set('cursor', encodeCursor(keyOf(pageRows[pageRows.length - 1]!)));
  url.searchParams.set('limit', String(limit));
  reply.header('link', `<${url.pathname}${url.search}>; rel="next"`);
  return pageRows;
}
