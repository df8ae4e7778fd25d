/** Host names a group may give for its OpenID Connect issuer (auth/oidc.ts fetches its JWKS). */
import { isIP } from 'node:net';

/**
 * A group's OpenID Connect domain is checked twice (audit #15, item 10). When saved, without DNS
 * (saving must not depend on the resolver being up): IP literals, localhost and the private
 * suffixes .local and .internal are refused. When the JWKS is fetched, the name is resolved and
 * the connection goes to the address that was checked (jwksFetch, guardedLookup), so a name
 * that resolves to a public address when saved and to an internal one later (DNS rebinding)
 * reaches nothing. Both checks are off with OIDC_ALLOW_PRIVATE_HOSTS (tests). Returns the
 * problem, or null.
 */
export function checkOidcDomain(domain: string, allowPrivate: boolean): string | null {
  if (allowPrivate) return null;
  const host = domain.toLowerCase();
  if (isIP(host)) return 'must be a host name, not an IP address';
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) return 'must be a public host name';
  return null;
}
