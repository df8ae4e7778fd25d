import { Type, type Static } from 'typebox';
import { component } from '../../platform/http/components.js';
import { Role } from '../auth/schemas.js';
import { TeamId } from '../groups/schemas.js';
import { Nullable } from '../../platform/http/params.js';

export const Email = Type.String({ minLength: 3, maxLength: 320, pattern: '^[^@\\s]+@[^@\\s]+$' });
export const Password = Type.String({ minLength: 8, maxLength: 1024, description: 'At least 8 characters; stored only as an argon2id hash.' });
export const UserId = Type.String({ minLength: 1, maxLength: 64 });

export const CreateUserBody = component('UserCreateBody', Type.Object(
  {
    email: Email,
    password: Type.Optional(Password),
    role: Role,
    teams: Type.Optional(Type.Array(TeamId, { uniqueItems: true, description: 'Teams the user is limited to; empty or absent = the whole group.' })),
    organization: Type.Optional(Type.String({ maxLength: 200, description: 'The organization the user account belongs to (spec: What the service does 6), as this group records it: shown to this group only.' })),
    driver_id: Type.Optional(Type.String({ pattern: '^[0-9a-f]{24}$', description: 'For the driver role: the driver record this account is (planning and ratings read it).' })),
  },
  {
    additionalProperties: false,
    description:
      'Adds a role in the group. A new email creates the user (password required unless the group logs in through OpenID Connect). ' +
      'An existing email gets the role in this group; its password is never changed here (an admin of one group cannot take over an account of another).',
  },
));
export type CreateUserBody = Static<typeof CreateUserBody>;

export const PatchUserBody = component('UserPatchBody', Type.Object(
  {
    role: Type.Optional(Role),
    teams: Type.Optional(Type.Array(TeamId, { uniqueItems: true, description: 'Teams the user is limited to; empty: the whole group.' })),
    driver_id: Type.Optional(Nullable(Type.String({ pattern: '^[0-9a-f]{24}$', description: 'The driver record this account is; null detaches it.' }))),
  },
  { additionalProperties: false, description: 'The fields of the membership to change; the others keep their values.' },
));
export type PatchUserBody = Static<typeof PatchUserBody>;

const memberFields = {
  user_id: Type.String({ description: 'The user account\'s identifier.' }),
  email: Type.String({ description: 'The account\'s email address.' }),
  organization: Nullable(Type.String({ description: 'The organization the account belongs to, as this group records it.' })),
  group_id: Type.String(),
  role: Role,
  teams: Type.Array(Type.String(), { description: 'Empty: the whole group.' }),
  driver_id: Nullable(Type.String({ description: 'For the driver role: the driver record this account is.' })),
  created_at: Type.String({ format: 'date-time', description: 'When the user got its role in the group.' }),
};
export const MemberRecord = component('User', Type.Object(memberFields, { additionalProperties: false, description: 'A user\'s membership of the group: its role and teams.' }));
export type MemberRecord = Static<typeof MemberRecord>;

export const CreatedMember = component('UserCreated', Type.Object(
  { ...memberFields, existing_user: Type.Boolean({ description: 'true when the email already had an account' }) },
  { additionalProperties: false, description: 'The membership added, and whether the account existed before.' },
));

export const RoleRecord = component('GroupRole', Type.Object({
  group_id: Type.String(),
  user_id: Nullable(Type.String({ description: 'null for a role or device API key' })),
  email: Nullable(Type.String()),
  organization: Nullable(Type.String()),
  role: Role,
  teams: Type.Array(Type.String(), { description: 'Empty: the whole group.' }),
}, { additionalProperties: false, description: 'A role held in the group: by the caller, or (for an admin) by each user of the group.' }));
export type RoleRecord = Static<typeof RoleRecord>;
