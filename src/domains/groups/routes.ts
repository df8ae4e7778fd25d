import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ADMIN, ALL_ROLES, anyCredential, groupRoles, superuserOnly } from '../../platform/http/access.js';
import { GroupParams } from '../../platform/http/params.js';
import { INTERNAL, op } from '../../platform/http/route.js';
import { ref } from '../../platform/http/components.js';
import { CreateGroupBody, CreateTeamBody, GroupRecord, PatchGroupBody, TeamRecord } from './schemas.js';
import { createGroup, createTeam, groupRecord, listGroupsFor, listTeams, requireGroup, updateGroup } from './service.js';

export async function groupRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;

  app.post('/groups', {
    schema: op(
      { operationId: 'createGroup', summary: 'Create a group (a network)', tags: ['groups'], access: superuserOnly(), documents: INTERNAL, errors: { 409: { GroupExists: 'the group_id is taken' } } },
      { body: ref(CreateGroupBody), response: { 201: ref(GroupRecord) } },
    ),
  }, async (req, reply) => reply.status(201).send(groupRecord(await createGroup(ctx, req.body))));

  app.get('/groups', {
    schema: op(
      { operationId: 'listGroups', summary: 'The caller\'s groups (every group for a superuser)', tags: ['groups'], access: anyCredential('read'), documents: INTERNAL },
      { response: { 200: Type.Array(ref(GroupRecord)) } },
    ),
  }, async (req) => (await listGroupsFor(ctx.db, req.principal!)).map(groupRecord));

  app.get('/groups/:group_id', {
    schema: op(
      { operationId: 'getGroup', summary: 'One group', tags: ['groups'], access: groupRoles(ALL_ROLES, 'GetGroupRoleRequired', 'read'), documents: INTERNAL },
      { params: GroupParams, response: { 200: ref(GroupRecord) } },
    ),
  }, async (req) => groupRecord(await requireGroup(ctx.db, req.params.group_id)));

  app.patch('/groups/:group_id', {
    schema: op(
      { operationId: 'updateGroup', summary: 'Change a group\'s name, features, login or time zone', tags: ['groups'], access: superuserOnly(), documents: INTERNAL, errors: { 404: { GroupNotFound: 'unknown group_id' } } },
      { params: GroupParams, body: ref(PatchGroupBody), response: { 200: ref(GroupRecord) } },
    ),
  }, async (req) => groupRecord(await updateGroup(ctx, req.params.group_id, req.body)));

  app.post('/groups/:group_id/teams', {
    schema: op(
      { operationId: 'createTeam', summary: 'Create a team (a depot, an area, a subcontractor)', description: 'Only an admin of the whole group: a team-limited admin cannot make a team (it would lie outside its teams).', tags: ['groups'], access: groupRoles(ADMIN, 'CreateTeamRoleRequired', 'admin'), documents: INTERNAL, errors: { 403: { ForbiddenDifferentTeam: 'the caller is limited to teams' }, 409: { TeamExists: 'the team_id is taken in this group' } } },
      { params: GroupParams, body: ref(CreateTeamBody), response: { 201: ref(TeamRecord) } },
    ),
  }, async (req, reply) => reply.status(201).send(await createTeam(ctx, req.groupScope!, req.body)));

  app.get('/groups/:group_id/teams', {
    schema: op(
      { operationId: 'listTeams', summary: 'The group\'s teams', tags: ['groups'], access: groupRoles(ALL_ROLES, 'ListTeamsRoleRequired', 'read'), documents: INTERNAL },
      { params: GroupParams, response: { 200: Type.Array(ref(TeamRecord)) } },
    ),
  }, async (req) => listTeams(ctx.db, req.params.group_id));
}
