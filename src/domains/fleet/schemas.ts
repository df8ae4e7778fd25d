/** Records and bodies of the resources: drivers, vehicles, devices, depots, and CSV imports. */
import { component, ref } from '../../platform/http/components.js';
import { Type, type Static } from 'typebox';
import { TeamId } from '../groups/schemas.js';
import { Nullable, StringEnum } from '../../platform/http/params.js';

/** Vehicle status values (spec: States: a status filter exists; the allowed values are ours). */
export const VEHICLE_STATUSES = ['active', 'maintenance', 'out_of_service', 'archived'] as const;
export type VehicleStatus = (typeof VEHICLE_STATUSES)[number];
export const VehicleStatus = StringEnum(VEHICLE_STATUSES, {
  description:
    'active: in service; maintenance: temporarily withdrawn for servicing; out_of_service: withdrawn (breakdown, accident, waiting for parts); ' +
    'archived: left the network, kept for its history. Any status may follow any other.',
});

/** Identifiers the operator chooses (vehicles, devices, depots): no spaces or slashes, so they sit in a path. */
export const ResourceId = (description: string) =>
  Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$', description: `${description}: letters, digits and . _ : - (starting with a letter or digit), at most 128 characters.` });
export const VehicleId = Type.String({
  minLength: 1,
  maxLength: 128,
  // "public" would be shadowed by GET vehicles/public.
  pattern: '^(?!public$)[A-Za-z0-9][A-Za-z0-9._:-]*$',
  description: 'The vehicle identifier: letters, digits and . _ : - (starting with a letter or digit), at most 128 characters; not the word public.',
});
export const DeviceId = ResourceId('The device identifier');
export const DepotId = ResourceId('The depot identifier');
export const DriverIdBody = Type.String({ pattern: '^[0-9a-fA-F]{24}$', description: 'The driver identifier (exactly 24 hexadecimal characters; stored in lowercase).' });

export const Teams = Type.Array(TeamId, {
  uniqueItems: true,
  maxItems: 100,
  description: 'Teams the record belongs to. A caller limited to teams sees a record when one of its teams is theirs; a record without a team is seen only by callers with the whole group.',
});

const Text = (max: number, description: string) => Type.String({ minLength: 1, maxLength: max, description });
export const DriverName = Text(200, 'Full name.');
export const StaffNumber = Text(64, 'Payroll number; unique in the group (planning finds a driver by it).');
export const DriverCode = Text(64, 'Internal driver code (what the driver types on the driver application).');
export const DriverComment = Type.String({ maxLength: 2000, description: 'Comment on availability or assignment.' });
export const FleetNumber = Text(64, 'Fleet number.');
export const LicensePlate = Text(32, 'Registration plate; unique in the group (planning finds a vehicle by it).');
export const VehicleComment = Type.String({ maxLength: 2000, description: 'Free comment on condition or use.' });
export const Capacity = Type.Integer({ minimum: 0, maximum: 10_000, description: 'Maximum passenger capacity.' });
const Timestamp = Type.String({ format: 'date-time' });

// ---- drivers

/** The operator-oriented shape: every field, for the roles that manage drivers. */
export const OperatorDriverRecord = component('Driver', Type.Object(
  {
    id: Type.String({ description: '24 lowercase hexadecimal characters.' }),
    driver_name: Type.String(),
    staff_number: Type.String(),
    teams: Type.Array(Type.String()),
    comment: Nullable(Type.String()),
    archived: Type.Boolean(),
    code: Nullable(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false, title: 'OperatorDriver', description: 'The operator-oriented driver record, answered to admin, operator and regulator (and superusers).' },
));
export type OperatorDriverRecord = Static<typeof OperatorDriverRecord>;

/** The standard shape: what identifies a driver on the network, without payroll number or comment. */
export const StandardDriverRecord = component('DriverForReaders', Type.Object(
  {
    id: Type.String(),
    driver_name: Type.String(),
    teams: Type.Array(Type.String()),
    archived: Type.Boolean(),
    code: Nullable(Type.String()),
  },
  { additionalProperties: false, title: 'StandardDriver', description: 'The standard driver record, answered to every other role (driver, technical, reader, limited_reader, external_reader): no staff_number (payroll data), no comment, no timestamps.' },
));
export type StandardDriverRecord = Static<typeof StandardDriverRecord>;

// The operator shape first: the serializer answers with the first shape the record fits.
export const DriverRecord = component('DriverView', Type.Union([ref(OperatorDriverRecord), ref(StandardDriverRecord)], {
  description: 'One of two shapes, by the caller\'s role: OperatorDriver for admin, operator, regulator (and superusers); StandardDriver for the others. The operator shape carries staff_number, comment and the timestamps.',
}));

export const CreateDriverBody = component('DriverCreateBody', Type.Object(
  {
    driver_id: Type.Optional(DriverIdBody),
    driver_name: DriverName,
    staff_number: StaffNumber,
    teams: Type.Optional(Teams),
    comment: Type.Optional(Nullable(DriverComment)),
    archived: Type.Optional(Type.Boolean({ default: false })),
    code: Type.Optional(Nullable(DriverCode)),
  },
  { additionalProperties: false, description: 'A new driver. driver_id is generated (24 lowercase hexadecimal characters) when not given.' },
));
export type CreateDriverBody = Static<typeof CreateDriverBody>;

export const PatchDriverBody = component('DriverPatchBody', Type.Object(
  {
    driver_name: Type.Optional(DriverName),
    staff_number: Type.Optional(StaffNumber),
    teams: Type.Optional(Teams),
    comment: Type.Optional(Nullable(DriverComment)),
    archived: Type.Optional(Type.Boolean({ description: 'true archives the driver (never a deletion: the record stays attached to its history); false brings them back.' })),
    code: Type.Optional(Nullable(DriverCode)),
  },
  { additionalProperties: false, minProperties: 1 },
));
export type PatchDriverBody = Static<typeof PatchDriverBody>;

// ---- vehicles

export const VehicleRecord = component('Vehicle', Type.Object(
  {
    id: Type.String(),
    fleet_number: Type.String(),
    license_plate: Type.String(),
    teams: Type.Array(Type.String()),
    comment: Nullable(Type.String()),
    status: VehicleStatus,
    capacity: Nullable(Type.Integer()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false, title: 'Vehicle' },
));
export type VehicleRecord = Static<typeof VehicleRecord>;

export const PublicVehicleRecord = component('PublicVehicle', Type.Object(
  {
    id: Type.String(),
    fleet_number: Type.String(),
    status: VehicleStatus,
    capacity: Nullable(Type.Integer()),
  },
  { additionalProperties: false, title: 'PublicVehicle', description: 'What anyone may know of a vehicle: no license plate, teams, comment or timestamps.' },
));
export type PublicVehicleRecord = Static<typeof PublicVehicleRecord>;

export const CreateVehicleBody = component('VehicleCreateBody', Type.Object(
  {
    vehicle_id: VehicleId,
    fleet_number: FleetNumber,
    license_plate: LicensePlate,
    teams: Type.Optional(Teams),
    comment: Type.Optional(Nullable(VehicleComment)),
    status: Type.Optional(VehicleStatus),
    capacity: Type.Optional(Nullable(Capacity)),
  },
  { additionalProperties: false, description: 'A new vehicle (status active unless given).' },
));
export type CreateVehicleBody = Static<typeof CreateVehicleBody>;

export const PatchVehicleBody = component('VehiclePatchBody', Type.Object(
  {
    fleet_number: Type.Optional(FleetNumber),
    license_plate: Type.Optional(LicensePlate),
    teams: Type.Optional(Teams),
    comment: Type.Optional(Nullable(VehicleComment)),
    status: Type.Optional(VehicleStatus),
    capacity: Type.Optional(Nullable(Capacity)),
  },
  { additionalProperties: false, minProperties: 1, description: 'status archived archives the vehicle (never a deletion).' },
));
export type PatchVehicleBody = Static<typeof PatchVehicleBody>;

export const VehicleAmount = component('VehicleAmount', Type.Object(
  {
    amount: Type.Integer({ description: 'Registered vehicles: every status but archived.' }),
    by_status: Type.Object(Object.fromEntries(VEHICLE_STATUSES.map((s) => [s, Type.Integer()])) as Record<VehicleStatus, ReturnType<typeof Type.Integer>>, {
      description: 'Vehicles per status, archived included.',
    }),
  },
  { title: 'VehicleAmount', description: 'Counted within the caller\'s teams.' },
));
export type VehicleAmount = Static<typeof VehicleAmount>;

// ---- devices

export const DeviceRecord = component('Device', Type.Object(
  {
    device_id: Type.String(),
    label: Nullable(Type.String()),
    vehicle_id: Nullable(Type.String({ description: 'The vehicle the device is mounted in; null when none.' })),
    team_id: Nullable(Type.String()),
    archived: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false, title: 'Device' },
));
export type DeviceRecord = Static<typeof DeviceRecord>;

const Label = Type.String({ minLength: 1, maxLength: 200 });
export const CreateDeviceBody = component('DeviceCreateBody', Type.Object(
  {
    device_id: DeviceId,
    label: Type.Optional(Nullable(Label)),
    vehicle_id: Type.Optional(Nullable(VehicleId)),
    team_id: Type.Optional(Nullable(TeamId)),
    archived: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
));
export type CreateDeviceBody = Static<typeof CreateDeviceBody>;

export const PatchDeviceBody = component('DevicePatchBody', Type.Object(
  {
    label: Type.Optional(Nullable(Label)),
    vehicle_id: Type.Optional(Nullable(VehicleId)),
    team_id: Type.Optional(Nullable(TeamId)),
    archived: Type.Optional(Type.Boolean({ description: 'An archived device can no longer open a driver session.' })),
  },
  { additionalProperties: false, minProperties: 1 },
));
export type PatchDeviceBody = Static<typeof PatchDeviceBody>;

// ---- depots

export const DepotRecord = component('Depot', Type.Object(
  {
    depot_id: Type.String(),
    name: Type.String(),
    team_id: Nullable(Type.String({ description: 'The team the depot is (a depot is often a team).' })),
    address: Nullable(Type.String()),
    latitude: Nullable(Type.Number()),
    longitude: Nullable(Type.Number()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false, title: 'Depot' },
));
export type DepotRecord = Static<typeof DepotRecord>;

const Latitude = Type.Number({ minimum: -90, maximum: 90, description: 'WGS 84, with longitude (both or neither).' });
const Longitude = Type.Number({ minimum: -180, maximum: 180, description: 'WGS 84, with latitude (both or neither).' });
const Address = Type.String({ minLength: 1, maxLength: 500 });
export const CreateDepotBody = component('DepotCreateBody', Type.Object(
  {
    depot_id: DepotId,
    name: Text(200, 'Name of the depot.'),
    team_id: Type.Optional(Nullable(TeamId)),
    address: Type.Optional(Nullable(Address)),
    latitude: Type.Optional(Nullable(Latitude)),
    longitude: Type.Optional(Nullable(Longitude)),
  },
  { additionalProperties: false },
));
export type CreateDepotBody = Static<typeof CreateDepotBody>;

export const PatchDepotBody = component('DepotPatchBody', Type.Object(
  {
    name: Type.Optional(Text(200, 'Name of the depot.')),
    team_id: Type.Optional(Nullable(TeamId)),
    address: Type.Optional(Nullable(Address)),
    latitude: Type.Optional(Nullable(Latitude)),
    longitude: Type.Optional(Nullable(Longitude)),
  },
  { additionalProperties: false, minProperties: 1 },
));
export type PatchDepotBody = Static<typeof PatchDepotBody>;

// ---- CSV imports

export const ImportReport = component('ImportReport', Type.Object(
  {
    lines: Type.Integer({ description: 'Records read (the header line excluded).' }),
    created: Type.Integer(),
    updated: Type.Integer(),
    unchanged: Type.Integer({ description: 'Records identical to what was stored.' }),
  },
  { title: 'ImportReport' },
));
export type ImportReport = Static<typeof ImportReport>;
