/**
 * An OpenID Connect provider for tests: key pairs made here, a JWKS served on loopback, and tokens
 * signed for it. The service is pointed at it through oidcIssuerTemplate.
 */
import { createServer, type Server } from 'node:http';
import { SignJWT, exportJWK, generateKeyPair, type JWK } from 'jose';

export interface SigningKey {
  kid: string;
  privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  jwk: JWK;
}

export async function newKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

export interface TestProvider {
  /** The issuer template to give the service: `http://127.0.0.1:<port>/{domain}/`. */
  template: string;
  issuerOf(domain: string): string;
  /** The keys served, newest first; replace to rotate. */
  keys: SigningKey[];
  /** How many times the JWKS was fetched, and how many requests of any kind reached the provider. */
  fetches: number;
  requests: number;
  port: number;
  close(): void;
}

export async function startProvider(domains: readonly string[]): Promise<TestProvider> {
  const p: TestProvider = { template: '', issuerOf: () => '', keys: [await newKey('k1')], fetches: 0, requests: 0, port: 0, close: () => server.close() };
  const server: Server = createServer((req, res) => {
    p.requests++;
    if (domains.some((d) => req.url === `/${d}/.well-known/jwks.json`)) {
      p.fetches++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: p.keys.map((k) => k.jwk) }));
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  p.port = (server.address() as { port: number }).port;
  p.template = `http://127.0.0.1:${p.port}/{domain}/`;
  p.issuerOf = (domain) => p.template.replace('{domain}', domain);
  return p;
}

export interface TokenClaims {
  key?: SigningKey;
  iss: string;
  aud: string;
  sub?: string | null;
  email?: string;
  email_verified?: boolean;
  exp?: number | string | null;
  nbf?: number;
  alg?: string;
}

/** A token signed by one of the provider's keys (the newest by default). */
export function signToken(p: TestProvider, o: TokenClaims): Promise<string> {
  const key = o.key ?? p.keys[0]!;
  const claims: Record<string, unknown> = {};
  if (o.email !== undefined) claims['email'] = o.email;
  if (o.email_verified !== undefined) claims['email_verified'] = o.email_verified;
  let jwt = new SignJWT(claims).setProtectedHeader({ alg: o.alg ?? 'RS256', kid: key.kid }).setIssuer(o.iss).setAudience(o.aud).setIssuedAt();
  if (o.sub !== null) jwt = jwt.setSubject(o.sub ?? `auth0|${o.email ?? 'someone'}`);
  if (o.exp !== null) jwt = jwt.setExpirationTime(o.exp ?? '10m');
  if (o.nbf) jwt = jwt.setNotBefore(o.nbf);
  return jwt.sign(key.privateKey);
}
