// The console's only way to the service: the documented API under /api/v4, with the session of
// POST /login sent as a bearer (the same session as the cookie it also sets).
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

/** Roles that may record trip updates (PutTripUpdateRoleRequired: admin, operator, regulator). */
export const DISPATCH_ROLES = ['admin', 'operator', 'regulator'];
export const canAct = (s: Session | null) => !!s && DISPATCH_ROLES.includes(s.role);

export async function login(group: string, email: string, password: string): Promise<Session> {
  const res = await fetch('/api/v4/login', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email, password }).toString(),
  });
  if (!res.ok) throw new ApiError(res.status, 'LoginFailed', res.status === 401 ? 'Wrong email or password.' : `Login failed (${res.status}).`);
  const token = ((await res.json()) as { session_id: string }).session_id;
  session = { token, group, email, role: '', teams: [] };
  // The caller's role (an admin gets everyone's: its own is the one with its email).
  const roles = await api<{ email: string | null; role: string; teams: string[] }[]>('/roles');
  const mine = roles.find((r) => r.email?.toLowerCase() === email.toLowerCase()) ?? roles[0];
  session = { ...session, role: mine?.role ?? '', teams: mine?.teams ?? [] };
  sessionStorage.setItem(KEY, JSON.stringify(session));
  return session;
}

export async function logout(): Promise<void> {
  const s = session;
  session = null;
  sessionStorage.removeItem(KEY);
  if (s) await fetch('/api/v4/logout', { headers: { authorization: `Bearer ${s.token}` } }).catch(() => {});
}

/** A call under /api/v4/groups/{group}; `path` starts with '/'. */
export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  if (!session) throw new ApiError(401, 'Unauthenticated', 'not logged in');
  const res = await fetch(`/api/v4/groups/${encodeURIComponent(session.group)}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${session.token}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: init.body !== undefined ? JSON.stringify(init.body) : null,
  });
  if (res.status === 401) {
    session = null;
    sessionStorage.removeItem(KEY);
    onExpired();
    throw new ApiError(401, 'Unauthenticated', 'session expired');
  }
  if (!res.ok) {
    const body = (await res.json().catch(() => ({}))) as { code?: string; detail?: string };
    throw new ApiError(res.status, body.code ?? String(res.status), `${res.status} ${body.code ?? ''}: ${body.detail ?? path}`);
  }
  return (await res.json()) as T;
}

/** A fresh update_id (crypto.randomUUID only exists in secure contexts). */
export function newId(prefix: string): string {
  const rnd = typeof crypto.randomUUID === 'function' ? crypto.randomUUID() : Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
  return `${prefix}-${rnd}`;
}
