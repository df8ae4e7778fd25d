/**
 * OpenID Connect for delegated groups (spec: Authentication 5): a JWT is verified with jose
 * against the issuer's JWKS (cached by jose, refetched on an unknown kid), checking signature,
 * iss, aud, exp (required)/nbf and an allow-list of asymmetric algorithms (never `none`, never HS*).
 * The JWKS is fetched through a connection whose address was checked at that moment (SSRF).
 */
import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { createRemoteJWKSet, customFetch, decodeJwt, jwtVerify, type FetchImplementation, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import type { Config } from '../../config.js';

export const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

export function issuerFor(template: string, domain: string): string {
  return template.replace('{domain}', domain);
}

/** The issuer named by an unverified token, to find the groups it may belong to. */
export function unverifiedIssuer(token: string): string | null {
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === 'string' ? iss : null;
  } catch {
    return null;
  }
}

/** One key set per issuer (and settings); issuers come from the groups' delegations, bounded all the same. */
const jwksCache = new LRUCache<string, ReturnType<typeof createRemoteJWKSet>>({ max: 1000 });

export type JwksSettings = Pick<Config, 'oidcJwksCooldownMs' | 'oidcAllowPrivateHosts'>;

function jwksFor(issuer: string, settings: JwksSettings) {
  const key = `${settings.oidcJwksCooldownMs} ${settings.oidcAllowPrivateHosts} ${issuer}`;
  let set = jwksCache.get(key);
  if (!set) {
    set = createRemoteJWKSet(new URL('.well-known/jwks.json', issuer.endsWith('/') ? issuer : `${issuer}/`), {
      timeoutDuration: 5000,
      cooldownDuration: settings.oidcJwksCooldownMs,
      cacheMaxAge: 10 * 60_000,
      [customFetch]: jwksFetch(settings.oidcAllowPrivateHosts),
    });
    jwksCache.set(key, set);
  }
  return set;
}

export async function verifyJwt(token: string, issuer: string, audience: string, now: Date, settings: JwksSettings): Promise<JWTPayload> {
  const { payload } = await jwtVerify(token, jwksFor(issuer, settings), {
    issuer,
    audience,
    algorithms: JWT_ALGORITHMS,
    currentDate: now,
    clockTolerance: 30,
    // A token without exp would be valid forever (audit #15, item 2).
    requiredClaims: ['exp'],
  });
  return payload;
}

/** The email a token names: the standard claim, or a namespaced one ending in /email (Auth0 rules). */
export function emailClaim(payload: JWTPayload): string | null {
  if (typeof payload['email'] === 'string') return payload['email'];
  for (const [k, v] of Object.entries(payload)) if (k.endsWith('/email') && typeof v === 'string') return v;
  return null;
}

// The check of a domain when saved (without DNS) is the platform's (platform/http/hosts.ts): the
// groups service asks it too.
export { checkOidcDomain } from '../../platform/http/hosts.js';

/** Resolves a host name to all its addresses (the shape of dns.lookup with all: true). */
export type ResolveAll = (host: string) => Promise<LookupAddress[]>;

const systemResolve: ResolveAll = (host) => lookup(host, { all: true, verbatim: true });

export class PrivateAddressError extends Error {
  readonly code = 'EPRIVATEADDRESS';
  constructor(host: string, address: string) {
    super(`${host === address ? host : `${host} resolves to ${address}, which`} is a private, loopback or link-local address`);
    this.name = 'PrivateAddressError';
  }
}

/**
 * A `lookup` for node:net connections: resolves the name once, refuses it if any of its
 * addresses is private, loopback or link-local, and hands the connection exactly the addresses
 * it checked (node does not resolve again), which leaves DNS rebinding nothing to rebind.
 * `resolve` is injectable for tests.
 */
export function guardedLookup(resolve: ResolveAll = systemResolve): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then((all) => {
      const bad = all.find((a) => isPrivateAddress(a.address));
      if (bad) return callback(new PrivateAddressError(hostname, bad.address), '');
      const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family ?? 0;
      const usable = family === 0 ? all : all.filter((a) => a.family === family);
      if (usable.length === 0) return callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' }), '');
      if (options.all) return callback(null, usable);
      return callback(null, usable[0]!.address, usable[0]!.family);
    }, (err: NodeJS.ErrnoException) => callback(err, ''));
  };
}

/** A JWKS is a few keys; anything much larger is not one. */
const MAX_JWKS_BYTES = 1024 * 1024;

/**
 * The fetch jose uses for a JWKS: node:http(s) through guardedLookup (an IP literal in the URL,
 * which is never looked up, is checked directly), a fresh connection each time (a pooled socket
 * would skip the check), no redirects followed, the body capped at MAX_JWKS_BYTES.
 */
export function jwksFetch(allowPrivate: boolean, resolve?: ResolveAll): FetchImplementation {
  const lookupFn = allowPrivate ? undefined : guardedLookup(resolve);
  return (url, options) => new Promise<Response>((ok, fail) => {
    const u = new URL(url);
    const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!allowPrivate && isIP(host) && isPrivateAddress(host)) return fail(new PrivateAddressError(host, host));
    const client = u.protocol === 'https:' ? https : u.protocol === 'http:' ? http : null;
    if (!client) return fail(new Error(`Cannot fetch a JWKS over ${u.protocol}`));
    const failWith = (err: Error) => fail(options.signal.aborted ? options.signal.reason : err);
    const req = client.request(u, { method: 'GET', headers: Object.fromEntries(options.headers), signal: options.signal, agent: false, lookup: lookupFn }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_JWKS_BYTES) res.destroy(new Error(`The JWKS at ${url} is larger than ${MAX_JWKS_BYTES} bytes`));
        else chunks.push(chunk);
      });
      res.on('error', failWith);
      res.on('end', () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
        const status = res.statusCode ?? 502;
        ok(new Response([204, 205, 304].includes(status) ? null : Buffer.concat(chunks), { status, headers }));
      });
    });
    req.on('error', failWith);
    req.end();
  });
}

/** Where a server must not be sent: RFC 6890 special-purpose ranges that reach inside a network. */
const INTERNAL_RANGES = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) INTERNAL_RANGES.addSubnet(net, prefix, 'ipv4');
// ::/96 holds :: and ::1 (and the deprecated IPv4-compatible form); IPv4-mapped ::ffff:a.b.c.d is
// matched against the IPv4 ranges by BlockList itself.
for (const [net, prefix] of [['::', 96], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8]] as const) INTERNAL_RANGES.addSubnet(net, prefix, 'ipv6');

/** Private, loopback, link-local and other internal addresses; anything that is not an IP address counts as one. */
export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return true;
  return INTERNAL_RANGES.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}
