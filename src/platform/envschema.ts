/** A small reader of environment variables that collects every problem before failing. */

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

interface Common<T> { default?: T }

export function z(env: NodeJS.ProcessEnv) {
  const problems: string[] = [];
  const raw = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v === '' ? undefined : v;
  };
  const bad = (name: string, value: string, why: string) => {
    problems.push(`${name}=${JSON.stringify(value)}: ${why}`);
  };

  function str(name: string, o: Common<string> & { minLength?: number; contains?: string } & { default: string }): string;
  function str(name: string, o?: Common<string> & { minLength?: number; contains?: string }): string | undefined;
  function str(name: string, o: Common<string> & { minLength?: number; contains?: string } = {}) {
    const v = raw(name);
    if (v === undefined) return o.default;
    if (o.minLength !== undefined && v.length < o.minLength) {
      problems.push(`${name}: must be at least ${o.minLength} characters long`);
      return o.default;
    }
    if (o.contains !== undefined && !v.includes(o.contains)) bad(name, v, `must contain ${o.contains}`);
    return v;
  }

  function int(name: string, o: Common<number> & { min?: number; max?: number } & { default: number }): number {
    const v = raw(name);
    if (v === undefined) return o.default;
    if (!/^-?\d+$/.test(v)) {
      bad(name, v, 'must be a whole number');
      return o.default;
    }
    const n = Number(v);
    if (o.min !== undefined && n < o.min) bad(name, v, `must be at least ${o.min}`);
    if (o.max !== undefined && n > o.max) bad(name, v, `must be at most ${o.max}`);
    return n;
  }

  function optionalBool(name: string): boolean | undefined {
    const v = raw(name);
    if (v === undefined) return undefined;
    if (['1', 'true', 'yes', 'on'].includes(v.toLowerCase())) return true;
    if (['0', 'false', 'no', 'off'].includes(v.toLowerCase())) return false;
    bad(name, v, 'must be one of 1, 0, true, false, yes, no, on, off');
    return undefined;
  }

  function bool(name: string, o: { default: boolean }): boolean {
    return optionalBool(name) ?? o.default;
  }

  function oneOf<T extends string>(name: string, values: readonly T[], o: { default: T }): T {
    const v = raw(name);
    if (v === undefined) return o.default;
    if (!(values as readonly string[]).includes(v)) {
      bad(name, v, `must be one of ${values.join(', ')}`);
      return o.default;
    }
    return v as T;
  }

  function url(name: string, o: { protocols: string[] }): string | undefined {
    const v = raw(name);
    if (v === undefined) return undefined;
    try {
      const u = new URL(v);
      if (!o.protocols.includes(u.protocol)) bad(name, redact(v), `must start with ${o.protocols.map((p) => `${p}//`).join(' or ')}`);
    } catch {
      bad(name, redact(v), 'is not a valid URL');
    }
    return v;
  }

  function email(name: string): string | undefined {
    const v = raw(name);
    if (v === undefined) return undefined;
    if (!/^[^@\s]+@[^@\s]+$/.test(v)) bad(name, v, 'is not an email address');
    return v;
  }

  /** A comma-separated list of web origins (scheme://host[:port], no path), or `*`. */
  function origins(name: string): string[] {
    const v = raw(name);
    if (v === undefined) return [];
    const list = v.split(',').map((o) => o.trim()).filter((o) => o !== '');
    for (const o of list) {
      if (o === '*') continue;
      let ok = false;
      try {
        const u = new URL(o);
        ok = (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === o;
      } catch {
        ok = false;
      }
      if (!ok) bad(name, o, 'each entry must be an origin such as https://ops.example.org (scheme, host and port only), or *');
    }
    return list;
  }

  return {
    str, int, bool, optionalBool, oneOf, url, email, origins,
    problem: (p: string) => problems.push(p),
    done: () => {
      if (problems.length > 0) throw new ConfigError(problems);
    },
  };
}

/** Never print a password that sits in a connection string. */
function redact(v: string): string {
  return v.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
}
