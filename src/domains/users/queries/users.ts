/** The users table: the only place that reads or writes it (docs/architecture.md). */
import type { Queryable } from '../../../platform/db/index.js';

export interface UserRef {
  user_id: string;
  email: string;
  superuser: boolean;
}

/** The account of this email, whatever its case. */
export async function selectUserByEmail(db: Queryable, email: string): Promise<UserRef | null> {
  return (await db.query<UserRef>('SELECT user_id, email, superuser FROM users WHERE lower(email) = lower($1)', [email]))[0] ?? null;
}

export interface NewUser {
  user_id: string;
  email: string;
  password_hash: string | null;
  organization: string | null;
}

/** The new account, or null when the email is taken (whatever its case). */
export async function insertUserUnlessTaken(db: Queryable, u: NewUser & { superuser: boolean }, now: Date): Promise<{ user_id: string; email: string } | null> {
  const rows = await db.query<{ user_id: string; email: string }>(
    `INSERT INTO users (user_id, email, password_hash, organization, superuser, created_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT ((lower(email))) DO NOTHING
     RETURNING user_id, email`,
    [u.user_id, u.email, u.password_hash, u.organization, u.superuser, now],
  );
  return rows[0] ?? null;
}

export async function insertUser(db: Queryable, u: NewUser, now: Date): Promise<UserRef> {
  const rows = await db.query<UserRef>(
    `INSERT INTO users (user_id, email, password_hash, organization, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING user_id, email, superuser`,
    [u.user_id, u.email, u.password_hash, u.organization, now],
  );
  return rows[0]!;
}
