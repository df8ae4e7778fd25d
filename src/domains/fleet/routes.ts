import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ref } from '../../platform/http/components.js';
import { Type } from 'typebox';
import { ADMIN, OFFICE, RS3, RS4, RS5, RS6, groupRoles, publicAccess, type Role } from '../../platform/http/access.js';
import { sendCsv } from '../../platform/csv.js';
import { GroupId, GroupParams, ObjectIdString } from '../../platform/http/params.js';
import { DATAHUB, INTERNAL, PUBLIC, op } from '../../platform/http/route.js';
import { csvHeader, exportRows, importCsv, type CsvTable } from './datahub.js';
import { createDepot, listDepots, updateDepot } from './depots.js';
import { createDevice, getDevice, listDevices, updateDevice } from './devices.js';
import { DRIVERS_CSV, createDriver, getDriver, listDrivers, updateDriver } from './drivers.js';
import {
  CreateDepotBody, CreateDeviceBody, CreateDriverBody, CreateVehicleBody, DepotId, DepotRecord, DeviceId, DeviceRecord, DriverRecord,
  ImportReport, OperatorDriverRecord, PatchDepotBody, PatchDeviceBody, PatchDriverBody, PatchVehicleBody, PublicVehicleRecord,
  VEHICLE_STATUSES, VehicleAmount, VehicleRecord, VehicleStatus,
} from './schemas.js';
import { VEHICLES_CSV, createVehicle, getVehicle, listPublicVehicles, listVehicles, updateVehicle, vehicleAmount } from './vehicles.js';

const Statuses = Type.Array(VehicleStatus, {
  uniqueItems: true,
  description: `Keep vehicles with one of these statuses (${VEHICLE_STATUSES.join(', ')}; repeat the parameter; values unique). Lists without it show every status but archived; the export without it, every vehicle.`,
});
const StatusesQuery = Type.Object({ statuses: Type.Optional(Statuses) });
const VehicleParams = Type.Object({ group_id: GroupId, vehicle_id: Type.String({ minLength: 1, maxLength: 128 }) });
const DriverParams = Type.Object({ group_id: GroupId, driver_id: ObjectIdString('The driver identifier') });
const DeviceParams = Type.Object({ group_id: GroupId, device_id: DeviceId });
const DepotParams = Type.Object({ group_id: GroupId, depot_id: DepotId });
const CsvResponse = (what: string) => ({
  description: `${what} as CSV: a header line, \`;\` separator, CRLF line ends, RFC 4180 quoting, UTF-8, streamed. An empty value is an empty cell; teams are one cell listing team ids separated by \`,\`; booleans are True or False; a text cell starting with = + - @ is written with a leading \`'\` (read back without it).`,
  content: { 'text/csv': { schema: Type.String() } },
});
const CSV = ['text/csv'];

const differentTeam = (what: string) => ({ ForbiddenDifferentTeam: `the ${what} exists but belongs to no team of the caller` });
const driverNotFound = { DriverNotFound: 'no driver with this id in the group' };
const vehicleNotFound = { VehicleNotFound: 'no vehicle with this id in the group' };
const writeTeams = 'a caller limited to teams writes only records all of whose teams are theirs';

/** Who provisions devices: admins, and technical staff who install them. */
const DEVICE_MANAGERS: readonly Role[] = ['admin', 'technical'];

const TEAM_SCOPE = 'Filtered by the caller\'s teams: a caller limited to teams sees the records of which one team is theirs (records without a team only with the whole group).';
const IMPORT_DESCRIPTION = (t: CsvTable) =>
  `Body: a \`text/csv\` file in exactly the format of GET export/${t.table} (header \`${csvHeader(t).join(';')}\`). Upserts by id in one transaction. ` +
  `Every line is checked (required cells, formats, known teams, the caller's teams, ids and ${t.unique.db} unique in the file and in the group); ` +
  'one bad line rejects the whole file (nothing applied) with a 422 whose `detail` lists each problem as `loc: ["body", <line>, <column>]` (the header is line 1), `msg`, `type` and `input` (the cell). ' +
  'An export imported back gives the same export, byte for byte.';

export async function fleetRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const ctx = app.ctx;

  // ---- vehicles

  app.get('/groups/:group_id/vehicles', {
    schema: op(
      { operationId: 'listVehicles', summary: 'Vehicles, filtered by the caller\'s teams and by status', description: TEAM_SCOPE, tags: ['vehicles'], access: groupRoles(RS3, 'ListVehiclesRoleRequired', 'read'), documents: PUBLIC, cache: { only: ['vehicles'] } },
      { params: GroupParams, querystring: StatusesQuery, response: { 200: Type.Array(ref(VehicleRecord)) } },
    ),
  }, async (req) => listVehicles(ctx.db, req.groupScope!, req.query.statuses));

  app.get('/groups/:group_id/vehicles/public', {
    schema: op(
      { operationId: 'listPublicVehicles', summary: 'Public vehicle records (no private fields)', description: 'Every vehicle of the group (no credential, so no team scope), with public fields only.', tags: ['vehicles'], access: publicAccess({ group: true }), documents: PUBLIC },
      { params: GroupParams, querystring: StatusesQuery, response: { 200: Type.Array(ref(PublicVehicleRecord)) } },
    ),
  }, async (req) => listPublicVehicles(ctx.db, req.params.group_id, req.query.statuses));

  app.get('/groups/:group_id/vehicles/:vehicle_id', {
    schema: op(
      { operationId: 'getVehicle', summary: 'One vehicle, filtered by the caller\'s teams', tags: ['vehicles'], access: groupRoles(RS4, 'GetVehicleRoleRequired', 'read'), documents: PUBLIC, errors: { 404: vehicleNotFound, 403: differentTeam('vehicle') } },
      { params: VehicleParams, response: { 200: ref(VehicleRecord) } },
    ),
  }, async (req) => getVehicle(ctx.db, req.groupScope!, req.params.vehicle_id));

  app.post('/groups/:group_id/vehicles', {
    schema: op(
      { operationId: 'createVehicle', summary: 'Register a vehicle', tags: ['vehicles'], access: groupRoles(ADMIN, 'CreateVehicleRoleRequired', 'write'), documents: INTERNAL, errors: { 409: { VehicleExists: 'the vehicle_id is taken', LicensePlateTaken: 'another vehicle has this license plate' }, 403: { ForbiddenDifferentTeam: writeTeams } } },
      { params: GroupParams, body: ref(CreateVehicleBody), response: { 201: ref(VehicleRecord) } },
    ),
  }, async (req, reply) => reply.status(201).send(await createVehicle(ctx, req.groupScope!, req.body)));

  app.patch('/groups/:group_id/vehicles/:vehicle_id', {
    schema: op(
      {
        operationId: 'updateVehicle', summary: 'Change a vehicle; status archived archives it', description: 'Archiving is a status, never a deletion: the vehicle stays attached to its history.', tags: ['vehicles'],
        access: groupRoles(ADMIN, 'UpdateVehicleRoleRequired', 'write'), documents: INTERNAL,
        errors: { 404: vehicleNotFound, 409: { LicensePlateTaken: 'another vehicle has this license plate' }, 403: { ForbiddenDifferentTeam: writeTeams } },
      },
      { params: VehicleParams, body: ref(PatchVehicleBody), response: { 200: ref(VehicleRecord) } },
    ),
  }, async (req) => updateVehicle(ctx, req.groupScope!, req.params.vehicle_id, req.body));

  app.get('/groups/:group_id/export/vehicles', {
    schema: op(
      { operationId: 'exportVehicles', summary: 'Vehicles as CSV (datahub)', description: `Columns in order: ${csvHeader(VEHICLES_CSV).join(';')}. Ordered by id. ${TEAM_SCOPE}`, tags: ['exports', 'vehicles'], access: groupRoles(RS4, 'ExportVehiclesRoleRequired', 'export'), documents: DATAHUB, produces: CSV },
      { params: GroupParams, querystring: StatusesQuery, response: { 200: CsvResponse('Vehicles') } },
    ),
  }, async (req, reply) => {
    const filter = req.query.statuses ? { sql: 'status = ANY($3)', value: req.query.statuses } : undefined;
    return sendCsv(reply, `vehicles-${req.params.group_id}.csv`, csvHeader(VEHICLES_CSV), exportRows(ctx.db, VEHICLES_CSV, req.groupScope!, filter));
  });

  app.post('/groups/:group_id/import/vehicles', {
    bodyLimit: ctx.config.importBodyLimitBytes,
    schema: op(
      { operationId: 'importVehicles', summary: 'Create or update vehicles from a CSV file in the export format', description: IMPORT_DESCRIPTION(VEHICLES_CSV), tags: ['vehicles'], access: groupRoles(ADMIN, 'ImportVehiclesRoleRequired', 'write'), documents: INTERNAL, consumes: CSV, errors: { 409: { ImportConflict: 'a concurrent write took a license plate of the file; send it again' } } },
      { params: GroupParams, body: Type.String({ description: 'The CSV file.' }), response: { 200: ref(ImportReport) } },
    ),
  }, async (req) => importCsv(ctx, req.groupScope!, VEHICLES_CSV, req.body));

  app.get('/groups/:group_id/vehicle-amount', {
    schema: op(
      { operationId: 'getVehicleAmount', summary: 'The number of registered vehicles', description: TEAM_SCOPE, tags: ['vehicles', 'stats'], access: groupRoles(OFFICE, 'InvalidRole', 'read'), documents: PUBLIC },
      { params: GroupParams, response: { 200: ref(VehicleAmount) } },
    ),
  }, async (req) => vehicleAmount(ctx.db, req.groupScope!));

  // ---- drivers

  app.get('/groups/:group_id/drivers', {
    schema: op(
      { operationId: 'listDrivers', summary: 'Drivers, filtered by the caller\'s teams', description: `${TEAM_SCOPE} Operator-oriented records for operator and regulator (and superusers), standard records for the other roles.`, tags: ['drivers'], access: groupRoles(RS5, 'ListDriversRoleRequired', 'read'), documents: PUBLIC },
      {
        params: GroupParams,
        querystring: Type.Object({
          archived: Type.Boolean({ default: false, description: 'false (default): drivers in service; true: archived drivers.' }),
          driver_code: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Keep the drivers with this internal code.' })),
        }),
        response: { 200: Type.Array(ref(DriverRecord)) },
      },
    ),
  }, async (req) => listDrivers(ctx.db, req.groupScope!, req.query));

  app.get('/groups/:group_id/drivers/:driver_id', {
    schema: op(
      { operationId: 'getDriver', summary: 'One driver', description: 'Operator-oriented record for operator and regulator (and superusers), standard record for the other roles.', tags: ['drivers'], access: groupRoles(RS6, 'GetDriverRoleRequired', 'read'), documents: PUBLIC, errors: { 404: driverNotFound, 403: differentTeam('driver') } },
      { params: DriverParams, response: { 200: ref(DriverRecord) } },
    ),
  }, async (req) => getDriver(ctx.db, req.groupScope!, req.params.driver_id));

  app.post('/groups/:group_id/drivers', {
    schema: op(
      { operationId: 'createDriver', summary: 'Register a driver', tags: ['drivers'], access: groupRoles(ADMIN, 'CreateDriverRoleRequired', 'write'), documents: INTERNAL, errors: { 409: { DriverExists: 'the driver_id is taken', StaffNumberTaken: 'another driver has this staff number' }, 403: { ForbiddenDifferentTeam: writeTeams } } },
      { params: GroupParams, body: ref(CreateDriverBody), response: { 201: ref(OperatorDriverRecord) } },
    ),
  }, async (req, reply) => reply.status(201).send(await createDriver(ctx, req.groupScope!, req.body)));

  app.patch('/groups/:group_id/drivers/:driver_id', {
    schema: op(
      {
        operationId: 'updateDriver', summary: 'Change a driver; archived: true archives them', description: 'Archiving is never a deletion: the driver stays attached to their history.', tags: ['drivers'],
        access: groupRoles(ADMIN, 'UpdateDriverRoleRequired', 'write'), documents: INTERNAL,
        errors: { 404: driverNotFound, 409: { StaffNumberTaken: 'another driver has this staff number' }, 403: { ForbiddenDifferentTeam: writeTeams } },
      },
      { params: DriverParams, body: ref(PatchDriverBody), response: { 200: ref(OperatorDriverRecord) } },
    ),
  }, async (req) => updateDriver(ctx, req.groupScope!, req.params.driver_id, req.body));

  app.get('/groups/:group_id/export/drivers', {
    schema: op(
      { operationId: 'exportDrivers', summary: 'Drivers as CSV (datahub)', description: `Columns in order: ${csvHeader(DRIVERS_CSV).join(';')}. Ordered by id. ${TEAM_SCOPE}`, tags: ['exports', 'drivers'], access: groupRoles(RS6, 'ExportDriversRoleRequired', 'export'), documents: DATAHUB, produces: CSV },
      {
        params: GroupParams,
        querystring: Type.Object({ archived: Type.Optional(Type.Boolean({ description: 'Absent: every driver; true or false: only archived, or only in service.' })) }),
        response: { 200: CsvResponse('Drivers') },
      },
    ),
  }, async (req, reply) => {
    const filter = req.query.archived === undefined ? undefined : { sql: 'archived = $3', value: req.query.archived };
    return sendCsv(reply, `drivers-${req.params.group_id}.csv`, csvHeader(DRIVERS_CSV), exportRows(ctx.db, DRIVERS_CSV, req.groupScope!, filter));
  });

  app.post('/groups/:group_id/import/drivers', {
    bodyLimit: ctx.config.importBodyLimitBytes,
    schema: op(
      { operationId: 'importDrivers', summary: 'Create or update drivers from a CSV file in the export format', description: IMPORT_DESCRIPTION(DRIVERS_CSV), tags: ['drivers'], access: groupRoles(ADMIN, 'ImportDriversRoleRequired', 'write'), documents: INTERNAL, consumes: CSV, errors: { 409: { ImportConflict: 'a concurrent write took a staff number of the file; send it again' } } },
      { params: GroupParams, body: Type.String({ description: 'The CSV file.' }), response: { 200: ref(ImportReport) } },
    ),
  }, async (req) => importCsv(ctx, req.groupScope!, DRIVERS_CSV, req.body));

  // ---- depots

  app.get('/groups/:group_id/depots', {
    schema: op(
      { operationId: 'listDepots', summary: 'Depots', description: TEAM_SCOPE, tags: ['depots'], access: groupRoles(RS6, 'ListDepotsRoleRequired', 'read'), documents: PUBLIC },
      { params: GroupParams, response: { 200: Type.Array(ref(DepotRecord)) } },
    ),
  }, async (req) => listDepots(ctx.db, req.groupScope!));

  app.post('/groups/:group_id/depots', {
    schema: op(
      { operationId: 'createDepot', summary: 'Create a depot', tags: ['depots'], access: groupRoles(ADMIN, 'CreateDepotRoleRequired', 'write'), documents: INTERNAL, errors: { 409: { DepotExists: 'the depot_id is taken' }, 403: { ForbiddenDifferentTeam: writeTeams } } },
      { params: GroupParams, body: ref(CreateDepotBody), response: { 201: ref(DepotRecord) } },
    ),
  }, async (req, reply) => reply.status(201).send(await createDepot(ctx, req.groupScope!, req.body)));

  app.patch('/groups/:group_id/depots/:depot_id', {
    schema: op(
      { operationId: 'updateDepot', summary: 'Change a depot', tags: ['depots'], access: groupRoles(ADMIN, 'UpdateDepotRoleRequired', 'write'), documents: INTERNAL, errors: { 404: { DepotNotFound: 'no depot with this id in the group' }, 403: { ForbiddenDifferentTeam: writeTeams } } },
      { params: DepotParams, body: ref(PatchDepotBody), response: { 200: ref(DepotRecord) } },
    ),
  }, async (req) => updateDepot(ctx, req.groupScope!, req.params.depot_id, req.body));

  // ---- devices

  app.get('/groups/:group_id/devices', {
    schema: op(
      { operationId: 'listDevices', summary: 'Devices', description: TEAM_SCOPE, tags: ['devices'], access: groupRoles(OFFICE, 'ListDevicesRoleRequired', 'read'), documents: INTERNAL },
      {
        params: GroupParams,
        querystring: Type.Object({ archived: Type.Boolean({ default: false, description: 'false (default): devices in use; true: retired devices.' }) }),
        response: { 200: Type.Array(ref(DeviceRecord)) },
      },
    ),
  }, async (req) => listDevices(ctx.db, req.groupScope!, req.query));

  app.get('/groups/:group_id/devices/:device_id', {
    schema: op(
      { operationId: 'getDevice', summary: 'One device', tags: ['devices'], access: groupRoles(OFFICE, 'GetDeviceRoleRequired', 'read'), documents: INTERNAL, errors: { 404: { DeviceNotFound: 'no device with this id in the group' }, 403: differentTeam('device') } },
      { params: DeviceParams, response: { 200: ref(DeviceRecord) } },
    ),
  }, async (req) => getDevice(ctx.db, req.groupScope!, req.params.device_id));

  app.post('/groups/:group_id/devices', {
    schema: op(
      { operationId: 'createDevice', summary: 'Register a device, optionally mounted in a vehicle', tags: ['devices'], access: groupRoles(DEVICE_MANAGERS, 'CreateDeviceRoleRequired', 'write'), documents: INTERNAL, errors: { 409: { DeviceExists: 'the device_id is taken' }, 403: { ForbiddenDifferentTeam: `${writeTeams}; the vehicle must be one the caller sees` } } },
      { params: GroupParams, body: ref(CreateDeviceBody), response: { 201: ref(DeviceRecord) } },
    ),
  }, async (req, reply) => reply.status(201).send(await createDevice(ctx, req.groupScope!, req.body)));

  app.patch('/groups/:group_id/devices/:device_id', {
    schema: op(
      { operationId: 'updateDevice', summary: 'Change a device: label, vehicle (null: unmounted), team, archived', tags: ['devices'], access: groupRoles(DEVICE_MANAGERS, 'UpdateDeviceRoleRequired', 'write'), documents: INTERNAL, errors: { 404: { DeviceNotFound: 'no device with this id in the group' }, 403: { ForbiddenDifferentTeam: `${writeTeams}; the vehicle must be one the caller sees` } } },
      { params: DeviceParams, body: ref(PatchDeviceBody), response: { 200: ref(DeviceRecord) } },
    ),
  }, async (req) => updateDevice(ctx, req.groupScope!, req.params.device_id, req.body));
}
