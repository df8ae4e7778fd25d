/**
 * Keyset paging, the same everywhere (DESIGN 4): `limit` and an opaque `cursor` in the query;
 * the next page's URL in a `Link: <…>; rel="next"` header, so bodies stay the arrays the spec
 * names. The cursor holds the sort key of the last row sent, so pages stay stable under
 * concurrent inserts.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { invalid } from './errors.js';

export function encodeCursor(key: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** The sort key a cursor holds; 422 on the cursor parameter when it is not one of ours. */
export function decodeCursor(cursor: string, arity: number): (string | number)[] {
  try {
    const key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(key) && key.length === arity && key.every((k) => typeof k === 'string' || typeof k === 'number')) return key;
  } catch {
    // falls through to the error below
  }
  throw invalid(['query', 'cursor'], 'Invalid cursor: use the one of the Link header of the previous page', 'value_error', cursor);
}

/** Sets the Link rel="next" header when there is a next page (same path and parameters, the new cursor). */
export function setNextLink(req: FastifyRequest, reply: FastifyReply, nextKey: readonly (string | number)[] | null) {
  if (nextKey === null) return;
  const url = new URL(req.originalUrl, 'http://x');
  url.searchParams.set('cursor', encodeCursor(nextKey));
  reply.header('link', `<${url.pathname}${url.search}>; rel="next"`);
}

/** Rows fetched with LIMIT n + 1: the page, and the key of its last row when more follow. */
export function page<T>(rows: T[], limit: number, key: (row: T) => (string | number)[]): { items: T[]; next: (string | number)[] | null } {
  if (rows.length <= limit) return { items: rows, next: null };
  const items = rows.slice(0, limit);
  return { items, next: key(items[items.length - 1]!) };
}
