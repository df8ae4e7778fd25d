import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consolePage } from '../../src/domains/livemap/routes.js';
import { inject, setup, type TestApp } from '../helpers/app.js';

describe('the console\'s files at /console/', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(() => t.close());

  it('serves the build (npm run build) from the service itself: index.html, then its script from /console/assets/', async () => {
    const page = await inject(t, { url: '/console/' });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.headers['cache-control']).toBe('no-cache');
    const scripts = [...page.body.matchAll(/<script[^>]* src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBe(1);
    // Every resource of the page is the service's own: nothing from another origin.
    expect([...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((u) => !u.startsWith('/console/') && u !== 'data:,' && !u.startsWith('#'))).toEqual([]);
    const js = await inject(t, { url: scripts[0]! });
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toContain('text/javascript');
    expect(js.headers['cache-control']).toContain('immutable');
    expect((await inject(t, { url: '/console' })).headers['location']).toBe('/console/');
    expect((await inject(t, { url: '/console/assets/nope.js' })).status).toBe(404);
  });
});

describe('consolePage', () => {
  it('answers 503 saying how to build when there is no build, and serves a tree of files with their types', async () => {
    const empty = Fastify();
    await consolePage(empty, join(mkdtempSync(join(tmpdir(), 'console-')), 'missing'));
    const res = await empty.inject({ url: '/console/' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build');

    const dir = mkdtempSync(join(tmpdir(), 'console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>x</title>');
    writeFileSync(join(dir, 'assets', 'w-1.mjs'), 'export {}');
    writeFileSync(join(dir, 'assets', 's-1.css'), 'body{}');
    const built = Fastify();
    await consolePage(built, dir);
    expect((await built.inject({ url: '/console/' })).body).toBe('<!doctype html><title>x</title>');
    const worker = await built.inject({ url: '/console/assets/w-1.mjs' });
    expect([worker.statusCode, worker.headers['content-type'], worker.body]).toEqual([200, 'text/javascript; charset=utf-8', 'export {}']);
    expect((await built.inject({ url: '/console/assets/s-1.css' })).headers['content-type']).toBe('text/css; charset=utf-8');
  });
});
