/**
 * OpenID Connect for delegated groups (spec: Authentication 5): a JWT is verified with jose
 * against the issuer's JWKS (cached by jose, refetched on an unknown kid), checking signature,
 * iss, aud, exp/nbf and an allow-list of asymmetric algorithms (never `none`, never HS*).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload } from 'jose';

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

const jwksCache = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

function jwksFor(issuer: string, cooldownMs: number) {
  const key = `${cooldownMs} ${issuer}`;
  let set = jwksCache.get(key);
  if (!set) {
    set = createRemoteJWKSet(new URL('.well-known/jwks.json', issuer.endsWith('/') ? issuer : `${issuer}/`), {
      timeoutDuration: 5000,
      cooldownDuration: cooldownMs,
      cacheMaxAge: 10 * 60_000,
    });
    jwksCache.set(key, set);
  }
  return set;
}

export async function verifyJwt(token: string, issuer: string, audience: string, now: Date, cooldownMs: number): Promise<JWTPayload> {
  const { payload } = await jwtVerify(token, jwksFor(issuer, cooldownMs), {
    issuer,
    audience,
    algorithms: JWT_ALGORITHMS,
    currentDate: now,
    clockTolerance: 30,
  });
  return payload;
}

/** The email a token names: the standard claim, or a namespaced one ending in /email (Auth0 rules). */
export function emailClaim(payload: JWTPayload): string | null {
  if (typeof payload['email'] === 'string') return payload['email'];
  for (const [k, v] of Object.entries(payload)) if (k.endsWith('/email') && typeof v === 'string') return v;
  return null;
}

/**
 * A group's OpenID Connect domain must not point the server at internal addresses (SSRF):
 * IP literals, localhost and names resolving to private, loopback or link-local addresses are
 * refused unless OIDC_ALLOW_PRIVATE_HOSTS is set (tests). Returns the problem, or null.
 */
export async function checkOidcDomain(domain: string, allowPrivate: boolean): Promise<string | null> {
  if (allowPrivate) return null;
  const host = domain.toLowerCase();
  if (isIP(host)) return 'must be a host name, not an IP address';
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) return 'must be a public host name';
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true });
  } catch {
    return 'does not resolve';
  }
  if (addresses.some((a) => isPrivateAddress(a.address))) return 'resolves to a private, loopback or link-local address';
  return null;
}

export function isPrivateAddress(ip: string): boolean {
  if (isIP(ip) === 4) {
    const [a, b] = ip.split('.').map(Number) as [number, number];
    return a === 10 || a === 127 || a === 0 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || a >= 224;
  }
  const v = ip.toLowerCase();
  if (v.startsWith('::ffff:')) return isPrivateAddress(v.slice(7));
  return v === '::1' || v === '::' || v.startsWith('fc') || v.startsWith('fd') || v.startsWith('fe80') || v.startsWith('ff');
}
