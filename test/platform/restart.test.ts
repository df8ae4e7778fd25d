/**
 * The embedded path end to end: `transit-ops serve` in a fresh folder keeps its data under
 * ./data, survives a graceful restart (SIGTERM), and creates the configured superuser once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const cwd = mkdtempSync(join(tmpdir(), 'transit-ops-restart-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

function serve(port: number): Promise<{ child: ChildProcess; output: () => string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    TRANSIT_OPS_SUPERUSER_EMAIL: 'root@example.org',
    TRANSIT_OPS_SUPERUSER_PASSWORD: 'restart-test-password',
    TRANSIT_OPS_DEMO: '0',
  };
  delete env['DATABASE_URL'];
  delete env['DATA_DIR'];
  const child = spawn(process.execPath, ['--import', pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href, join(root, 'src/main.ts'), 'serve'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`no start within 150 s:\n${out}`)), 150_000);
    child.stdout!.on('data', () => {
      if (out.includes('is running on')) {
        clearTimeout(timer);
        ok({ child, output: () => out });
      }
    });
    child.on('exit', (code) => fail(new Error(`exited with ${code}:\n${out}`)));
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((ok) => {
    child.on('exit', (code) => ok(code));
    child.kill('SIGTERM');
  });
}

async function login(port: number): Promise<string> {
  const r = await fetch(`http://127.0.0.1:${port}/api/v4/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'email=root%40example.org&password=restart-test-password',
  });
  expect(r.status).toBe(200);
  return ((await r.json()) as { session_id: string }).session_id;
}

describe('embedded database across a restart', () => {
  it('keeps groups and sessions in ./data and shuts down gracefully', async () => {
    const port = 20000 + (process.pid % 20000);
    const first = await serve(port);
    const token = await login(port);
    const created = await fetch(`http://127.0.0.1:${port}/api/v4/groups`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ group_id: 'survivor', name: 'Survives restarts', timezone: 'Europe/Paris' }),
    });
    expect(created.status).toBe(201);
    expect(await stop(first.child)).toBe(0);
    expect(existsSync(join(cwd, 'data'))).toBe(true);

    const second = await serve(port);
    try {
      const r = await fetch(`http://127.0.0.1:${port}/api/v4/groups`, { headers: { authorization: `Bearer ${token}` } });
      expect(r.status).toBe(200);
      const groups = (await r.json()) as { group_id: string }[];
      expect(groups.map((g) => g.group_id)).toEqual(['survivor']);
      expect(second.output()).not.toContain('superuser created');
    } finally {
      expect(await stop(second.child)).toBe(0);
    }
  }, 400_000); // two process starts, each compiling TypeScript: slow on a loaded machine
});
