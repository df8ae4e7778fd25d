/**
 * Who may call what, as data. Each route declares an Access; one hook (auth/hook.ts) enforces
 * it in this order: credential → group exists → role in the group → role allowed → features →
 * scope; the team scope is then handed to the data layer.
 */
import type { CodeOf } from './error-codes.js';
export const ROLES = ['admin', 'operator', 'external_reader', 'limited_reader', 'regulator', 'reader', 'technical', 'driver'] as const;
export type Role = (typeof ROLES)[number];

// spec: Endpoints, Conventions: the role sets.
export const RS1 = ['operator', 'external_reader', 'limited_reader', 'regulator', 'reader'] as const satisfies readonly Role[];
export const RS2 = ['admin', 'limited_reader', 'technical', 'operator', 'external_reader', 'regulator', 'reader'] as const satisfies readonly Role[];
export const RS3 = ['driver', 'admin', 'limited_reader', 'technical', 'operator', 'external_reader', 'regulator', 'reader'] as const satisfies readonly Role[];
export const RS4 = ['driver', 'operator', 'admin', 'external_reader', 'limited_reader', 'regulator', 'reader'] as const satisfies readonly Role[];
export const RS5 = ['driver', 'limited_reader', 'technical', 'operator', 'external_reader', 'regulator', 'reader'] as const satisfies readonly Role[];
export const RS6 = ['driver', 'operator', 'external_reader', 'limited_reader', 'regulator', 'reader'] as const satisfies readonly Role[];
export const ALL_ROLES: readonly Role[] = ROLES;
export const ADMIN: readonly Role[] = ['admin'];

/**
 * Scopes bound what a scoped session (POST /login-scoped) or an API key may do. A credential
 * without scopes may do everything its roles allow.
 */
export const SCOPES = ['read', 'export', 'write', 'device', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  read: 'read endpoints (GET) other than CSV exports',
  export: 'CSV exports (export/*)',
  write: 'operator writes: planning, trip updates, resources provisioning',
  device: 'the device API (sign-on, reports), used by driver applications',
  admin: 'group administration: users, teams, API keys, GTFS publication',
};

export const FEATURES = ['device_event_sourcing', 'on_demand', 'rail_data'] as const;
export type Feature = (typeof FEATURES)[number];

export type Access =
  /** No credential. With `group`, the group of the path must exist (404 GroupNotFound). */
  | { kind: 'public'; group?: boolean; features?: readonly Feature[] }
  /** Any valid credential, not tied to a group (e.g. GET /groups, GET /logout). */
  | { kind: 'credential'; scope?: Scope }
  /** A superuser credential. */
  | { kind: 'superuser'; scope: Scope }
  /** A role in the group of the path. `roleError` is the 403 code when the role is not allowed. */
  | {
      kind: 'group'; roles: readonly Role[]; roleError: CodeOf<403>; scope: Scope; features?: readonly Feature[]; unauthenticatedCode?: string;
      /**
       * A WebSocket route: on an upgrade request the hook leaves the credential and the role to the
       * route, which checks them after the upgrade (a first message may carry the credential) and
       * answers with close codes. Plain HTTP requests are checked by the hook as usual.
       */
      checkedAfterUpgrade?: boolean;
    };

export const publicAccess = (o: { group?: boolean; features?: readonly Feature[] } = {}): Access => ({ kind: 'public', ...o });
export const anyCredential = (scope?: Scope): Access => ({ kind: 'credential', ...(scope ? { scope } : {}) });
export const superuserOnly = (scope: Scope = 'admin'): Access => ({ kind: 'superuser', scope });
export const groupRoles = (
  roles: readonly Role[],
  roleError: CodeOf<403>,
  scope: Scope,
  features?: readonly Feature[],
): Access => ({ kind: 'group', roles, roleError, scope, ...(features ? { features } : {}) });

/** What the hook found out about the caller, handed to services. */
export interface Principal {
  /** How the caller authenticated (precedence documented in OpenAPI). */
  via: 'session' | 'api_key' | 'jwt';
  userId: string | null;
  email: string | null;
  superuser: boolean;
  /** Scopes the credential is bounded to; null = unbounded. */
  scopes: readonly Scope[] | null;
  sessionHash: string | null;
  apiKeyId: string | null;
  /** A driver session or a device key is bound to one device, in one group. */
  device: { groupId: string; deviceId: string } | null;
  /** Groups the credential is limited to (API keys); null = wherever the user has a role. */
  groupIds: readonly string[] | null;
  /** The role a role key (or a device key) holds in its groups. */
  role: Role | null;
  /** Teams an API key is limited to; null = no limit beyond the user's own. */
  teams: readonly string[] | null;
  /** For a JWT: the issuer and audiences it was verified for, and when it expires (`exp`). */
  oidc: { issuer: string; audience: string; expiresAt?: Date } | null;
  /**
   * For an API key: who made it and how. A key never carries more than its creator holds in the
   * group at the time of each request (src/platform/http/bounds.ts, authorizeGroup).
   */
  key: { createdBy: string | null; origin: 'group' | 'instance'; creatorSuperuser: boolean } | null;
}

/** The caller's standing in the group of the path. */
export interface GroupScope {
  groupId: string;
  role: Role;
  /** Teams the caller is limited to; null = the whole group. */
  teams: readonly string[] | null;
  /** For a driver: the driver record the user is linked to, when any. */
  driverId: string | null;
  timezone: string;
  features: readonly string[];
}

// Where the spec's Access column is empty, our choices (documented in each operation):
/** Everyone who works the network from the office: every role but driver. */
export const OFFICE: readonly Role[] = ['admin', 'operator', 'external_reader', 'limited_reader', 'regulator', 'reader', 'technical'];
/** Those who read exports and exploitation data (as GET export/trips). */
export const EXPORTERS: readonly Role[] = ['admin', 'regulator', 'reader', 'operator'];
/** Those who change the service as it runs: trip updates. */
export const DISPATCH: readonly Role[] = ['admin', 'operator', 'regulator'];
