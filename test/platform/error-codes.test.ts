/**
 * The error registry (src/platform/http/error-codes.ts, issue #18 §3): every error code the
 * service answers is declared there once, with its status. The compiler checks the codes given to
 * fail(), errors.*, access lists and op() errors; this scan checks what it cannot (codes written
 * in answer bodies by hand) and that no code of the registry is left unused.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/platform/http/error-codes.js';

const SRC = join(import.meta.dirname, '../../src');
const REGISTRY = 'src/platform/http/error-codes.ts';

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'client' ? [] : files(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

const sources = files(SRC)
  .map((f) => ({ file: relative(join(SRC, '..'), f).replaceAll('\\', '/'), text: readFileSync(f, 'utf8') }))
  .filter((s) => s.file !== REGISTRY);

/** Codes the source throws or answers: fail('X'), errors.notFound('X'), roleError 'X…RoleRequired', `code: 'X'` in a body, Fastify's codes. */
const THROWN = [
  /\bfail\(\s*'([A-Za-z0-9]+)'/g,
  /\berrors\.(?:notFound|forbidden|conflict)\(\s*'([A-Za-z0-9]+)'/g,
  /'([A-Z][A-Za-z0-9]*RoleRequired)'/g,
  // An error name (CamelCase), not a system error code such as ENOTFOUND.
  /\bcode: '([A-Z][a-z][A-Za-z0-9]*)'/g,
  /\bFST_ERR_[A-Z_]+: '([A-Za-z0-9]+)'/g,
];

describe('error registry', () => {
  it('every code thrown or answered in src/ is in the registry', () => {
    const unknown: string[] = [];
    let seen = 0;
    for (const { file, text } of sources) {
      for (const re of THROWN) {
        for (const m of text.matchAll(re)) {
          seen++;
          if (!(m[1]! in ERROR_CODES)) unknown.push(`${file}: ${m[1]}`);
        }
      }
    }
    expect(unknown).toEqual([]);
    expect(seen).toBeGreaterThan(100);
  });

  it('every code of the registry is used in src/', () => {
    const all = sources.map((s) => s.text).join('\n');
    const unused = Object.keys(ERROR_CODES).filter((code) => !new RegExp(`['\`\\s{]${code}['\`:]`).test(all));
    expect(unused).toEqual([]);
  });

  it('statuses are error statuses and every code says what it means', () => {
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      expect(spec.status, code).toBeGreaterThanOrEqual(400);
      expect(spec.status, code).toBeLessThan(600);
      expect(spec.description.length, code).toBeGreaterThan(10);
    }
  });
});
