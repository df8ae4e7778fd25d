/**
 * The live network page: static files at /live (no CDN, no map tiles: it works offline), and the
 * two reads it needs beside the live stream (internal document, tag live-map).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { OFFICE, groupRoles } from '../../platform/http/access.js';
import { DateEither, GroupParams, isoDate } from '../../platform/http/params.js';
import { INTERNAL, op } from '../../platform/http/route.js';
import { ref } from '../../platform/http/components.js';
import { NetworkMap, VehicleOnDuty } from './schemas.js';
import { mapDate, networkMap, scheduleMemo, vehiclesOnDuty } from './service.js';

/** The page's files, read once (src/ and dist/ are both one level under the package root). */
const STATIC_DIR = new URL('../../../static/live/', import.meta.url);
/** The console's build (npm run build: vite, console/ → dist/console/; not in git). */
const CONSOLE_DIR = fileURLToPath(new URL('../../../dist/console/', import.meta.url));
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.json': 'application/json', '.woff2': 'font/woff2',
};
const FILES: Record<string, string> = { 'index.html': 'text/html; charset=utf-8', 'app.js': 'text/javascript; charset=utf-8', 'style.css': 'text/css; charset=utf-8' };

export async function liveMapRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;
  // The scheduled stop times the vehicles' delays are read against, kept by this app (bounded).
  const schedules = scheduleMemo();

  app.get('/groups/:group_id/live-map/network', {
    schema: op(
      {
        operationId: 'getLiveMapNetwork', summary: 'The network map of a service date: routes with their shapes, and stops', tags: ['live-map'],
        access: groupRoles(OFFICE, 'LiveMapRoleRequired', 'read'), documents: INTERNAL,
        description: 'For the live network page (/live): the routes of the GTFS version in force on the date (default: the current service date of the group, the previous one before 03:00), each with every distinct shape of its trips, and the stops (location_type 0).',
      },
      { params: GroupParams, querystring: Type.Object({ date: Type.Optional(DateEither('The service date (default: the current one).')) }), response: { 200: ref(NetworkMap) } },
    ),
  }, async (req) => networkMap(ctx.db, req.groupScope!, req.query.date ? isoDate(req.query.date) : mapDate(ctx.clock.now(), req.groupScope!.timezone)));

  app.get('/groups/:group_id/live-map/vehicles', {
    schema: op(
      {
        operationId: 'getLiveMapVehicles', summary: 'The vehicles on duty now: last position, driver, trip and delay', tags: ['live-map'],
        access: groupRoles(OFFICE, 'LiveMapRoleRequired', 'read'), documents: INTERNAL,
        description: [
          'A snapshot for the live network page, which then follows the live stream (events/op/subscribe): each duty signed on in the last 36 hours and not signed off, with the device\'s latest position (event time), the trip that position names, and the delay at the trip\'s last stop event (its time minus the scheduled time of that stop in the GTFS in force: departure time for a departure, arrival time otherwise).',
          'Team scope: a duty is listed when its vehicle\'s or its driver\'s teams meet the caller\'s; the other of the two, when the caller does not see it, by id only (`driver_name` or `fleet_number` null).',
        ].join('\n\n'),
      },
      { params: GroupParams, response: { 200: Type.Array(ref(VehicleOnDuty)) } },
    ),
  }, async (req) => vehiclesOnDuty(ctx.db, req.groupScope!, ctx.clock.now(), schedules));
}

/** GET /live and its files (outside /api/v4). */
export async function liveMapPage(app: FastifyInstance) {
  const files = Object.fromEntries(Object.keys(FILES).map((f) => [f, readFileSync(new URL(f, STATIC_DIR))]));
  const send = (name: string) => async (_req: unknown, reply: { header: (k: string, v: string) => unknown; send: (b: Buffer) => unknown }) => {
    reply.header('content-type', FILES[name]!);
    reply.header('cache-control', 'no-cache');
    return reply.send(files[name]!);
  };
  app.get('/live', { schema: { hide: true } }, send('index.html'));
  for (const name of Object.keys(FILES)) app.get(`/live/${name}`, { schema: { hide: true } }, send(name));
  await consolePage(app);
}

/** Every file under dir, by its path relative to it (with /). */
function readTree(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(relative(dir, p).split('\\').join('/'), readFileSync(p));
    }
  };
  if (existsSync(dir)) walk(dir);
  return out;
}

/**
 * GET /console/ and its files (outside /api/v4): the control room's console, read once from
 * dist/console/ at start. The files under assets/ have a content hash in their name and are cached
 * for a year; index.html is revalidated each time. Without a build, /console/ answers 503 saying so.
 */
export async function consolePage(app: FastifyInstance, dir = CONSOLE_DIR) {
  const files = readTree(dir);
  type Reply = { header: (k: string, v: string) => unknown; status: (n: number) => Reply; send: (b: Buffer | string) => unknown; redirect: (url: string) => unknown };
  const send = (name: string, reply: Reply) => {
    const body = files.get(name);
    if (!body) {
      if (name === 'index.html') {
        reply.header('content-type', 'text/plain; charset=utf-8');
        return reply.status(503).send('The console is not built: run `npm run build` (npm ci does it).');
      }
      reply.header('content-type', 'text/plain; charset=utf-8');
      return reply.status(404).send(`No file ${name} in the console.`);
    }
    reply.header('content-type', TYPES[extname(name)] ?? 'application/octet-stream');
    reply.header('cache-control', name.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    return reply.send(body);
  };
  app.get('/console', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/console/'));
  app.get('/console/', { schema: { hide: true } }, async (_req, reply) => send('index.html', reply as unknown as Reply));
  app.get('/console/*', { schema: { hide: true } }, async (req, reply) => send((req.params as { '*': string })['*'], reply as unknown as Reply));
}
