import { PassThrough } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { loggerOptions, logRequestLines, resolveLogFormat } from '../../src/platform/http/logging.js';

describe('logs', () => {
  it('LOG_FORMAT=auto is readable lines on a terminal and JSON otherwise; json and pretty are taken as said; another value is refused', () => {
    expect(resolveLogFormat(loadConfig({}).logFormat, true)).toBe('pretty');
    expect(resolveLogFormat(loadConfig({}).logFormat, false)).toBe('json');
    expect(resolveLogFormat(loadConfig({ LOG_FORMAT: 'json' }).logFormat, true)).toBe('json');
    expect(resolveLogFormat(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat, false)).toBe('pretty');
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT="xml"/);
  });

  it('the pretty form writes one line per request (method, path, status, duration) and no credential', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (c: Buffer) => { text += c.toString(); });
    const app = Fastify(loggerOptions('info', 'pretty', out));
    logRequestLines(app);
    app.get('/ping', async () => ({ ok: true }));
    await app.inject({ method: 'GET', url: '/ping', headers: { authorization: 'Bearer secret-token' } });
    await app.inject({ method: 'GET', url: '/nowhere' });
    await app.close();
    const lines = text.split('\n').filter((l) => l.trim() !== '');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/GET \/ping 200 \d+\.\d ms/);
    expect(lines[1]).toMatch(/GET \/nowhere 404 \d+\.\d ms/);
    expect(text).not.toContain('secret-token');
    expect(text).not.toContain('incoming request');
  });
});
