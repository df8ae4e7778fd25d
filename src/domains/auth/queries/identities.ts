/** The identities table: the only place that reads or writes it (docs/architecture.md). */
import type { Queryable } from '../../../platform/db/index.js';

/** The account linked to (issuer, subject). A read model: it reads the account (users' table). */
export async function selectLinkedAccount(db: Queryable, issuer: string, subject: string): Promise<{ user_id: string; email: string; superuser: boolean } | null> {
  return (await db.query<{ user_id: string; email: string; superuser: boolean }>(
    'SELECT u.user_id, u.email, u.superuser FROM identities i JOIN users u USING (user_id) WHERE i.issuer = $1 AND i.subject = $2',
    [issuer, subject],
  ))[0] ?? null;
}

/**
 * What decides whether an identity of `issuer` may link to the account of this email: the account,
 * its roles inside and outside `groupIds`, and its identities of this issuer. A read model of the
 * linking rule (auth/service.ts identitiesAccount): it reads the account and its memberships
 * (users' tables) in the same statement.
 */
export async function selectLinkCandidate(db: Queryable, email: string, groupIds: readonly string[], issuer: string) {
  return (await db.query<{ user_id: string; email: string; superuser: boolean; has_password: boolean; inside: number; outside: number; identities: number }>(
    `SELECT u.user_id, u.email, u.superuser, u.password_hash IS NOT NULL AS has_password,
            (SELECT count(*)::int FROM memberships m WHERE m.user_id = u.user_id AND m.group_id = ANY($2)) AS inside,
            (SELECT count(*)::int FROM memberships m WHERE m.user_id = u.user_id AND NOT (m.group_id = ANY($2))) AS outside,
            (SELECT count(*)::int FROM identities i WHERE i.user_id = u.user_id AND i.issuer = $3) AS identities
     FROM users u WHERE lower(u.email) = lower($1)`,
    [email, [...groupIds], issuer],
  ))[0];
}

export async function insertIdentity(db: Queryable, i: { issuer: string; subject: string; user_id: string; group_id: string }, now: Date): Promise<void> {
  await db.query(
    'INSERT INTO identities (issuer, subject, user_id, group_id, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (issuer, subject) DO NOTHING',
    [i.issuer, i.subject, i.user_id, i.group_id, now],
  );
}
