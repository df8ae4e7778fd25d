/** The routes the server registers, and calls to them with placeholder path values: the matrices' raw material. */
import type { InjectOptions } from 'fastify';
import type { Access } from '../../src/platform/http/access.js';
import { inject, type TestApp } from './app.js';

export const apiRoutes = (t: TestApp) => t.app.routeTable.filter((r) => r.url.startsWith('/api/v4/') || r.url.startsWith('/nav-data-processor-api/'));

export const WRITE_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];

/** The group routes that write (every method but GET), with their declared access. */
export const groupWriteRoutes = (t: TestApp) =>
  apiRoutes(t).filter((r) => WRITE_METHODS.includes(r.method) && (r.access as Access | undefined)?.kind === 'group') as { method: string; url: string; access: Extract<Access, { kind: 'group' }> }[];

/** The path with the group given and placeholders for the other parameters (driver ids are 24 hexadecimal characters). */
export function urlOf(url: string, groupId: string): string {
  return url.replace(/:([a-z_]+)/g, (_m, name: string) => (name === 'group_id' ? groupId : name.endsWith('driver_id') ? 'a'.repeat(24) : 'x1'));
}

/** A call with an empty JSON body for the methods that take one: authorization is decided before the body is read. */
export async function callRoute(t: TestApp, method: string, url: string, groupId: string, headers: Record<string, string> = {}) {
  const withBody = ['POST', 'PUT', 'PATCH'].includes(method);
  return inject(t, { method: method as InjectOptions['method'], url: urlOf(url, groupId), headers, ...(withBody ? { payload: {} } : {}) });
}
