import type { Migration } from '../migrate.js';

/**
 * Login throttling (src/domains/auth/throttle.ts) counts failures by (account, address) pair as
 * well: keys that may never fail again. Each recorded failure now deletes every row older than
 * the window, which this index keeps cheap, so the table holds one window of failures.
 */
export const m0011: Migration = {
  version: 11,
  name: 'login failures by time',
  sql: `
CREATE INDEX login_failures_at ON login_failures (at);
`,
};
