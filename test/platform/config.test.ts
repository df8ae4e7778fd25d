import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

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
});
