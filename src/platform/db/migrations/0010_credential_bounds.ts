import type { Migration } from '../migrate.js';

/**
 * What a credential may carry (docs/security.md):
 * - api_keys.origin: 'group' for a key made under /groups/{g} (bound to g, never superuser),
 *   'instance' for a key a superuser (or the operator of the host) made with POST /api-keys or the
 *   CLI. Keys made before this migration are 'instance' only when their creator is a superuser or
 *   unknown (made by the host's own tools); every other key is 'group', which closes the
 *   escalation of a group admin who made a key for a superuser's account.
 * - identities: an OpenID Connect identity (issuer, subject) linked to an account, by the
 *   delegated group whose provider first presented it. Accounts are never matched by email alone
 *   once linked, and never linked by email to an account that lives outside that group.
 * - memberships.organization: what a group says about the account's organization, so an admin
 *   sees only what its own group holds (users.organization stays the account's own, shown to no
 *   group that did not create the account).
 */
export const m0010: Migration = {
  version: 10,
  name: 'credential bounds',
  sql: `
ALTER TABLE api_keys ADD COLUMN origin text NOT NULL DEFAULT 'group' CHECK (origin IN ('group', 'instance'));
UPDATE api_keys k SET origin = 'instance'
  WHERE k.created_by IS NULL OR EXISTS (SELECT 1 FROM users u WHERE u.user_id = k.created_by AND u.superuser);

CREATE TABLE identities (
  issuer text NOT NULL,
  subject text NOT NULL,
  user_id text NOT NULL REFERENCES users ON DELETE CASCADE,
  group_id text NOT NULL REFERENCES groups ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (issuer, subject)
);
CREATE INDEX identities_user ON identities (user_id);

ALTER TABLE memberships ADD COLUMN organization text;
UPDATE memberships m SET organization = u.organization FROM users u WHERE u.user_id = m.user_id;
`,
};
