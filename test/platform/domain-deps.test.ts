/**
 * Dependencies between domains (issue 18, section 2): a domain calls another through its service,
 * and no two domains depend on each other. The scan is simple: every relative `import … from` or
 * `export … from` of src/domains/<a>/ that lands in src/domains/<b>/ makes a depend on b (type
 * imports count: they tie the two as much). The two-way dependencies left to untie are listed
 * exactly: a new one fails, and so does one untied but still listed.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const DOMAINS = join(import.meta.dirname, '..', '..', 'src', 'domains');

/** Two-way dependencies still to untie, as `a ↔ b` with a < b. */
const KNOWN_TWO_WAY = [
  'predictions ↔ trips',
];

function tsFiles(dir: string): string[] {
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? tsFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The domain a path of src/domains lies in, else null (src/domains/index.ts, the platform). */
function domainOf(path: string): string | null {
  const r = relative(DOMAINS, path);
  return r.startsWith('..') || !r.includes('/') ? null : r.split('/')[0]!;
}

function dependencies(): Map<string, Set<string>> {
  const deps = new Map<string, Set<string>>();
  for (const path of tsFiles(DOMAINS)) {
    const from = domainOf(path);
    if (from === null) continue;
    for (const m of readFileSync(path, 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/g)) {
      const to = domainOf(resolve(dirname(path), m[1]!));
      if (to !== null && to !== from) (deps.get(from) ?? deps.set(from, new Set()).get(from)!).add(to);
    }
  }
  return deps;
}

describe('dependencies between domains', () => {
  it('no two domains depend on each other (what is left to untie is listed exactly)', () => {
    const deps = dependencies();
    const twoWay = [...deps].flatMap(([a, bs]) => [...bs].filter((b) => a < b && deps.get(b)?.has(a)).map((b) => `${a} ↔ ${b}`)).sort();
    expect(twoWay).toEqual(KNOWN_TWO_WAY);
  });
});
