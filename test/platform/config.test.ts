import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ConfigError, ENVIRONMENT, loadConfig } from '../../src/config.js';
import { REFERENCE_PAGE, withReference } from '../../src/config-reference.js';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    expect(c.dataDir).toBe('./data');
    expect(c.databaseUrl).toBeUndefined();
    expect(c.logLevel).toBe('info');
  });

  it('names every bad variable in one message', () => {
    let err: unknown;
    try {
      loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x', TRANSIT_OPS_SUPERUSER_EMAIL: 'a@b.c' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toContain('PORT="eighty": must be a whole number');
    expect(msg).toContain('LOG_LEVEL="loud": must be one of');
    expect(msg).toContain('DATABASE_URL');
    expect(msg).toContain('TRANSIT_OPS_SUPERUSER_EMAIL and TRANSIT_OPS_SUPERUSER_PASSWORD must be set together');
  });

  it('never prints the password of a connection string', () => {
    expect(() => loadConfig({ DATABASE_URL: 'http://user:hunter2@db/x' })).toThrow(/user:\*\*\*@/);
    expect(() => loadConfig({ DATABASE_URL: 'http://user:hunter2@db/x' })).not.toThrow(/hunter2/);
  });

  it('reads the CORS allow-list as origins, and names a bad one', () => {
    expect(loadConfig({ CORS_ALLOWED_ORIGINS: 'https://a.example.org, http://localhost:3000' }).corsAllowedOrigins).toEqual(['https://a.example.org', 'http://localhost:3000']);
    expect(loadConfig({}).corsAllowedOrigins).toEqual([]);
    for (const bad of ['*', 'https://a.example.org/path', 'ftp://a.example.org']) {
      expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: bad }), bad).toThrow(/CORS_ALLOWED_ORIGINS/);
    }
  });

  it('trusts forwarded headers from private networks only, unless told otherwise', () => {
    expect(loadConfig({}).trustProxy).toBe('loopback,linklocal,uniquelocal');
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8' }).trustProxy).toBe('10.0.0.0/8');
    expect(loadConfig({}).rateLimits).toEqual({ login: 20, credentials: 10, exports: 30 });
  });

  it('never prints a secret variable, and reads yes/no words as booleans', () => {
    expect(() => loadConfig({ TRANSIT_OPS_SUPERUSER_EMAIL: 'a@b.c', TRANSIT_OPS_SUPERUSER_PASSWORD: 'sesame' })).toThrow(/TRANSIT_OPS_SUPERUSER_PASSWORD: must be at least 8 characters long/);
    expect(() => loadConfig({ TRANSIT_OPS_SUPERUSER_EMAIL: 'a@b.c', TRANSIT_OPS_SUPERUSER_PASSWORD: 'sesame' })).not.toThrow(/sesame/);
    expect(loadConfig({ PREDICTIONS_JOB: 'off', TRANSIT_OPS_DEMO: 'Yes' })).toMatchObject({ predictions: { job: false }, demo: true });
    expect(loadConfig({}).demo).toBeUndefined();
    expect(() => loadConfig({ PREDICTIONS_JOB: 'maybe' })).toThrow('PREDICTIONS_JOB="maybe": must be one of');
    expect(() => loadConfig({ FEEDS_REFRESH_SECONDS: '0', LIVE_BATCH_MS: '5000' })).toThrow(/FEEDS_REFRESH_SECONDS="0": must be at least 1[^]*LIVE_BATCH_MS="5000": must be at most 1000/);
  });

  it('documents every variable it reads: docs/configuration.md holds the reference generated from the declarations', async () => {
    const page = await readFile(REFERENCE_PAGE, 'utf8');
    expect(page, 'run npm run docs:config').toBe(withReference(page));
    for (const name of Object.keys(ENVIRONMENT.properties)) expect(page).toContain(`| \`${name}\` |`);
  });
});
