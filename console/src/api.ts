// The console's only way to the service: the documented API under /api/v4, called through the
// generated client (openapi-fetch typed by src/client/openapi.d.ts, made by `npm run client` from
// the service's own OpenAPI document). A path, a parameter or an answer's field that drifts from
// the document fails `npm run typecheck`. The session of POST /login is sent as a bearer (the same
// session as the cookie it also sets).
import createClient from 'openapi-fetch';
import type { Readable } from 'openapi-typescript-helpers';
import type { components, paths } from '../../src/client/openapi';

export type Schemas = components['schemas'];

/** The JSON answer of a 200 of an operation of the document, as openapi-fetch types its data. */
export type Answer<P extends keyof paths, M extends 'get' | 'put' | 'post' = 'get'> =
  paths[P][M] extends { responses: { 200: { content: { 'application/json': infer T } } } } ? Readable<T> : never;

export interface Session {
  token: string;
  group: string;
  email: string;
  role: string;
  teams: string[];
}

const KEY = 'transit-ops-console';

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

let session: Session | null = null;
let onExpired: () => void = () => {};

export function currentSession(): Session | null {
  return session;
}

export function restoreSession(): Session | null {
  session = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Session | null;
  return session;
}

export function whenExpired(fn: () => void): void {
  onExpired = fn;
}

/** The generated client: every call of the console goes through it. */
export const client = createClient<paths>({ baseUrl: '' });
client.use({
  onRequest({ request }) {
    if (session) request.headers.set('authorization', `Bearer ${session.token}`);
    return request;
  },
  onResponse({ response }) {
    // A session that died (logged out elsewhere, expired): back to the login form.
    if (response.status === 401 && session) {
      session = null;
      sessionStorage.removeItem(KEY);
      onExpired();
    }
    return response;
  },
});

/** The path parameter of every call under /groups/{group_id}. */
export function group(): { group_id: string } {
  if (!session) throw new ApiError(401, 'Unauthenticated', 'not logged in');
  return { group_id: session.group };
}

/** The data of a call, or an ApiError naming the status, the error code and its detail. */
export async function ok<R extends { data?: unknown; error?: unknown; response: Response }>(call: Promise<R>): Promise<NonNullable<R['data']>> {
  const r = await call;
  if (r.response.ok) return r.data as NonNullable<R['data']>;
  const body = (r.error ?? {}) as { code?: string; detail?: string };
  if (r.response.status === 401) throw new ApiError(401, 'Unauthenticated', 'session expired');
  throw new ApiError(r.response.status, body.code ?? String(r.response.status), `${r.response.status} ${body.code ?? ''}: ${body.detail ?? new URL(r.response.url || location.href).pathname}`);
}

/** Roles that may record trip updates (PutTripUpdateRoleRequired: admin, operator, regulator). */
export const DISPATCH_ROLES = ['admin', 'operator', 'regulator'];
export const canAct = (s: Session | null) => !!s && DISPATCH_ROLES.includes(s.role);

export async function login(groupId: string, email: string, password: string): Promise<Session> {
  const r = await client.POST('/api/v4/login', {
    body: { email, password },
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    bodySerializer: (b) => new URLSearchParams(b).toString(),
  });
  if (!r.response.ok || !r.data) throw new ApiError(r.response.status, 'LoginFailed', r.response.status === 401 ? 'Wrong email or password.' : `Login failed (${r.response.status}).`);
  session = { token: r.data.session_id, group: groupId, email, role: '', teams: [] };
  // The caller's role (an admin gets everyone's: its own is the one with its email).
  const roles = await ok(client.GET('/api/v4/groups/{group_id}/roles', { params: { path: group() } }));
  const mine = roles.find((x) => x.email?.toLowerCase() === email.toLowerCase()) ?? roles[0];
  session = { ...session, role: mine?.role ?? '', teams: mine?.teams ?? [] };
  sessionStorage.setItem(KEY, JSON.stringify(session));
  return session;
}

export async function logout(): Promise<void> {
  const s = session;
  if (!s) return;
  await client.GET('/api/v4/logout').catch(() => {});
  session = null;
  sessionStorage.removeItem(KEY);
}

/** A fresh update_id (crypto.randomUUID only exists in secure contexts). */
export function newId(prefix: string): string {
  const rnd = typeof crypto.randomUUID === 'function' ? crypto.randomUUID() : Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
  return `${prefix}-${rnd}`;
}
