/**
 * Login throttling (audit #15, item 6; OWASP Authentication Cheat Sheet, "Protect against
 * automated attacks"). Failed logins are counted within a sliding window
 * (LOGIN_FAILURE_WINDOW_SECONDS) three ways, and a throttled attempt is answered 429 with
 * Retry-After *before* the password is checked: it tells nothing about the password and costs
 * no argon2. What is refused is always an address, never an account:
 *
 * - (account, address): after LOGIN_MAX_FAILURES_PER_ACCOUNT_ADDRESS failures, that address is
 *   refused for that account;
 * - address: after LOGIN_MAX_FAILURES_PER_ADDRESS failures over all accounts, that address is
 *   refused for every account;
 * - account: after LOGIN_MAX_FAILURES_PER_ACCOUNT failures from all addresses, the account is
 *   under attack, and an address that has failed on it once in the window is refused for it
 *   (its pair limit drops to 1): a guessing botnet gets about one guess per address.
 *
 * So the right password from an address that has not failed on the account (and is under its
 * own limit) always opens a session, whatever other addresses did. Nothing sleeps on the server.
 */
import type { AppContext } from '../../platform/context.js';
import type { Queryable } from '../../platform/db/index.js';
import { fail } from '../../platform/http/errors.js';
import { countLoginFailures, deleteLoginFailuresOf, deleteLoginFailuresUntil, insertLoginFailures, selectLoginFailureAt } from './queries/login-failures.js';

export interface LoginAttempt {
  email: string;
  address: string;
}

function keysOf(a: LoginAttempt) {
  const account = a.email.toLowerCase();
  // An address holds no space, so the pair key reads back unambiguously.
  return { account: `account:${account}`, address: `address:${a.address}`, pair: `pair:${a.address} ${account}` };
}

/** Throws 429 TooManyLoginAttempts, with Retry-After, when this attempt is throttled. */
export async function checkLoginThrottle(ctx: AppContext, attempt: LoginAttempt, now: Date): Promise<void> {
  const c = ctx.config;
  const windowMs = c.loginFailureWindowSeconds * 1000;
  const since = new Date(now.getTime() - windowMs);
  const keys = keysOf(attempt);
  const rows = await countLoginFailures(ctx.db, Object.values(keys), since);
  const count = (key: string) => rows.find((r) => r.key === key)?.n ?? 0;
  // The moment fewer than `limit` failures of `key` remain in the window.
  const freeAt = async (key: string, limit: number) => {
    const at = await selectLoginFailureAt(ctx.db, key, since, limit - 1);
    return at ? at.getTime() + windowMs : now.getTime();
  };

  const blocks: { until: number; why: string }[] = [];
  if (count(keys.address) >= c.loginMaxFailuresPerAddress) {
    blocks.push({ until: await freeAt(keys.address, c.loginMaxFailuresPerAddress), why: 'Too many failed logins from your address' });
  }
  const underAttack = count(keys.account) >= c.loginMaxFailuresPerAccount;
  const pairLimit = underAttack ? 1 : c.loginMaxFailuresPerAccountAddress;
  if (count(keys.pair) >= pairLimit) {
    let until = await freeAt(keys.pair, pairLimit);
    if (underAttack) {
      // Or when the account is no longer under attack and the pair is under its ordinary limit.
      const ordinary = Math.max(
        await freeAt(keys.account, c.loginMaxFailuresPerAccount),
        count(keys.pair) >= c.loginMaxFailuresPerAccountAddress ? await freeAt(keys.pair, c.loginMaxFailuresPerAccountAddress) : now.getTime(),
      );
      until = Math.min(until, ordinary);
    }
    blocks.push({
      until,
      why: underAttack
        ? 'This account is receiving many failed logins, and your address has failed on it'
        : 'Too many failed logins for this account from your address',
    });
  }
  if (blocks.length === 0) return;
  const retryAfter = Math.max(1, Math.ceil((Math.max(...blocks.map((b) => b.until)) - now.getTime()) / 1000));
  throw fail('TooManyLoginAttempts', `${blocks[0]!.why}; try again in ${retryAfter} s`, { 'retry-after': String(retryAfter) });
}

/** A wrong password (or an unknown email): counted for the pair, the address and the account. */
export async function recordLoginFailure(ctx: AppContext, attempt: LoginAttempt, now: Date): Promise<void> {
  const before = new Date(now.getTime() - ctx.config.loginFailureWindowSeconds * 1000);
  await ctx.db.transaction(async (tx) => {
    // Everything older than the window, whatever its key.
    await deleteLoginFailuresUntil(tx, before);
    await insertLoginFailures(tx, Object.values(keysOf(attempt)), now);
  });
}

/**
 * The right password: the pair's failures are forgotten (the user mistyped). The address's and
 * the account's stay: logging in to one's own account must not reset a spraying address's
 * count, and an attacked account stays so until its failures leave the window.
 */
export async function recordLoginSuccess(db: Queryable, attempt: LoginAttempt): Promise<void> {
  await deleteLoginFailuresOf(db, keysOf(attempt).pair);
}
