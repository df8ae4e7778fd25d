import type { Migration } from '../migrate.js';

/**
 * Groups, teams, users and their roles, sessions, API keys, devices.
 * Tenant tables start their primary key with group_id (Citus-ready, DESIGN 3). Users, sessions
 * and API keys span groups: they are reference tables.
 */
export const m0001: Migration = {
  version: 1,
  name: 'identity',
  sql: `
CREATE TABLE groups (
  group_id text PRIMARY KEY,
  name text NOT NULL,
  features text[] NOT NULL DEFAULT '{}',
  auth jsonb NOT NULL DEFAULT '{"provider":"legacy"}',
  timezone text NOT NULL DEFAULT 'UTC',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE teams (
  group_id text NOT NULL REFERENCES groups ON DELETE CASCADE,
  team_id text NOT NULL,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, team_id)
);

CREATE TABLE users (
  user_id text PRIMARY KEY,
  email text NOT NULL,
  password_hash text,
  organization text,
  superuser boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE memberships (
  group_id text NOT NULL REFERENCES groups ON DELETE CASCADE,
  user_id text NOT NULL REFERENCES users ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('admin','operator','external_reader','limited_reader','regulator','reader','technical','driver')),
  teams text[] NOT NULL DEFAULT '{}',
  driver_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);

CREATE TABLE devices (
  group_id text NOT NULL REFERENCES groups ON DELETE CASCADE,
  device_id text NOT NULL,
  label text,
  vehicle_id text,
  team_id text,
  archived boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, device_id)
);

CREATE TABLE sessions (
  session_hash text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users ON DELETE CASCADE,
  device_group_id text,
  device_id text,
  scopes text[],
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  ended_at timestamptz
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE api_keys (
  api_key_id text PRIMARY KEY,
  key_hash text NOT NULL UNIQUE,
  name text,
  principal text NOT NULL CHECK (principal IN ('user','device','role')),
  user_id text REFERENCES users ON DELETE CASCADE,
  device_id text,
  role text,
  group_ids text[] NOT NULL,
  teams text[] NOT NULL DEFAULT '{}',
  scopes text[],
  expires_at timestamptz,
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);

CREATE TABLE login_failures (
  key text NOT NULL,
  at timestamptz NOT NULL
);
CREATE INDEX login_failures_key_at ON login_failures (key, at);
`,
};
