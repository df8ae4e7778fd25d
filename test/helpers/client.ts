/**
 * The generated client (src/client) on a test app: openapi-fetch with a fetch that injects the
 * request into the app (no socket), so helpers call the service the way an integrator's client
 * does, typed by the served document.
 */
import type { FastifyInstance } from 'fastify';
import { apiClient, type ApiClient } from '../../src/client/index.js';

const clients = new WeakMap<FastifyInstance, ApiClient>();

/** fetch over app.inject. */
export function injectFetch(app: FastifyInstance) {
  return async (input: Request): Promise<Response> => {
    const url = new URL(input.url);
    const body = input.body ? Buffer.from(await input.arrayBuffer()) : undefined;
    const res = await app.inject({
      method: input.method as 'GET',
      url: url.pathname + url.search,
      headers: Object.fromEntries(input.headers.entries()),
      ...(body ? { payload: body } : {}),
    });
    const headers = new Headers();
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) for (const one of [v].flat()) headers.append(k, String(one));
    const empty = res.statusCode === 204 || res.statusCode === 304 || input.method === 'HEAD';
    return new Response(empty ? null : res.rawPayload, { status: res.statusCode, headers });
  };
}

/** The client of a test app (one per app). */
export function clientOf(app: FastifyInstance): ApiClient {
  let c = clients.get(app);
  if (!c) clients.set(app, (c = apiClient({ baseUrl: 'http://test.local', fetch: injectFetch(app) })));
  return c;
}
