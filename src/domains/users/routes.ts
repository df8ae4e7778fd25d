import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ADMIN, ALL_ROLES, groupRoles } from '../../platform/http/access.js';
import { GroupId, GroupParams } from '../../platform/http/params.js';
import { INTERNAL, PUBLIC, op } from '../../platform/http/route.js';
import { ref } from '../../platform/http/components.js';
import { CreateUserBody, CreatedMember, MemberRecord, PatchUserBody, RoleRecord, UserId } from './schemas.js';
import { addMember, listMembers, removeMember, rolesFor, updateMember } from './service.js';

const UserParams = Type.Object({ group_id: GroupId, user_id: UserId });
const userNotFound = { 403: { ForbiddenDifferentTeam: 'the user\'s role, before or after the change, reaches beyond the caller\'s teams' }, 404: { UserNotFound: 'the user has no role in the group' } } as const;
const LIMITED = 'A team-limited admin gives, changes and removes only roles within its own teams (never the whole group), and links only drivers of its teams. See docs/security.md.';

export async function userRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;

  app.post('/groups/:group_id/users', {
    schema: op(
      {
        operationId: 'addUser', summary: 'Give a user a role in the group (creating the account if new)',
        description: `${LIMITED} The answer shows what this group holds about the account (its email, the role given and the organization recorded here), never what other groups or the account itself hold.`,
        tags: ['groups'], access: groupRoles(ADMIN, 'AddUserRoleRequired', 'admin'), documents: INTERNAL,
        errors: { 403: { ForbiddenDifferentTeam: 'the role reaches beyond the caller\'s teams' }, 409: { MembershipExists: 'the user already has a role in this group' } },
      },
      { params: GroupParams, body: ref(CreateUserBody), response: { 201: ref(CreatedMember) } },
    ),
  }, async (req, reply) => reply.status(201).send(await addMember(ctx, req.groupScope!, req.body)));

  app.get('/groups/:group_id/users', {
    schema: op(
      { operationId: 'listUsers', summary: 'The users of the group and their roles', tags: ['groups'], access: groupRoles(ADMIN, 'ListUsersRoleRequired', 'admin'), documents: INTERNAL },
      { params: GroupParams, response: { 200: Type.Array(ref(MemberRecord)) } },
    ),
  }, async (req) => listMembers(ctx.db, req.params.group_id));

  app.patch('/groups/:group_id/users/:user_id', {
    schema: op(
      { operationId: 'updateUser', summary: 'Change a user\'s role, teams or driver link in the group', description: LIMITED, tags: ['groups'], access: groupRoles(ADMIN, 'UpdateUserRoleRequired', 'admin'), documents: INTERNAL, errors: userNotFound },
      { params: UserParams, body: ref(PatchUserBody), response: { 200: ref(MemberRecord) } },
    ),
  }, async (req) => updateMember(ctx, req.groupScope!, req.params.user_id, req.body));

  app.delete('/groups/:group_id/users/:user_id', {
    schema: op(
      { operationId: 'removeUser', summary: 'Remove a user\'s role in the group (the account stays)', description: LIMITED, tags: ['groups'], access: groupRoles(ADMIN, 'RemoveUserRoleRequired', 'admin'), documents: INTERNAL, errors: userNotFound },
      { params: UserParams, response: { 204: Type.Null({ description: 'Removed' }) } },
    ),
  }, async (req, reply) => {
    await removeMember(ctx, req.groupScope!, req.params.user_id);
    return reply.status(204).send(null);
  });

  app.get('/groups/:group_id/roles', {
    schema: op(
      { operationId: 'listRoles', summary: 'The caller\'s role; for an admin, the roles of every user of the group', tags: ['auth'], access: groupRoles(ALL_ROLES, 'NoRole', 'read'), documents: PUBLIC },
      { params: GroupParams, response: { 200: Type.Array(ref(RoleRecord)) } },
    ),
  }, async (req) => rolesFor(ctx.db, req.principal!, req.groupScope!));
}
