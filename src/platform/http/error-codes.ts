/**
 * The error registry: every error code the service answers, declared once with its status and
 * what it means (the default message of an answer, and the text of the OpenAPI documents). Code
 * throws by code (`fail('TripNotFound', detail)`), routes list the codes they answer (op() checks
 * at compile time that a code is listed under its own status), and the documents and the
 * authorization matrix read this list. test/platform/error-codes.test.ts checks that every code
 * used in src/ is here and every code here is used.
 *
 * 422 schema validation answers are not here: they have FastAPI's shape (HTTPValidationError).
 */

interface ErrorSpec {
  readonly status: number;
  /** What the code means, in a sentence: the default detail, and the documents' wording. */
  readonly description: string;
}

/** The 403 of a role check, one name per endpoint (DESIGN.md §4): `what` the roles allowed may do. */
const roleChecks = <const K extends string>(byCode: Record<K, string>) =>
  Object.fromEntries(Object.entries(byCode).map(([code, what]) => [code, { status: 403, description: `the caller's role is not one of those allowed to ${what as string}` }])) as {
    [C in K]: { readonly status: 403; readonly description: string };
  };

export const ERROR_CODES = {
  // The request itself (app.ts, security.ts, Fastify's answers).
  BadRequest: { status: 400, description: 'a request Fastify refused before the route (its message says why)' },
  BadUrl: { status: 400, description: 'the URL cannot be read (a bad percent-encoding)' },
  EmptyBody: { status: 400, description: 'a JSON content type with an empty body' },
  InvalidContentLength: { status: 400, description: 'the Content-Length header does not match the body' },
  RouteNotFound: { status: 404, description: 'no route has this method and path' },
  RequestTimeout: { status: 408, description: 'the request\'s headers or body did not arrive within REQUEST_TIMEOUT_SECONDS (UPLOAD_TIMEOUT_SECONDS for an upload); the connection is closed' },
  PayloadTooLarge: { status: 413, description: 'the body is larger than the operation takes' },
  UriTooLong: { status: 414, description: 'a path parameter is longer than 1000 characters' },
  UnsupportedMediaType: { status: 415, description: 'a body of a content type the operation does not take' },
  UpgradeRequired: { status: 426, description: 'a plain HTTP request to the live stream: open the URL as a WebSocket (Upgrade: websocket)' },
  TooManyRequests: { status: 429, description: 'over the operation\'s rate limit; the Retry-After header gives the seconds to wait' },
  InternalError: { status: 500, description: 'an unexpected failure; the body carries a request_id' },
  NotImplemented: { status: 501, description: 'not built yet; the parameters were validated' },
  DatabaseUnavailable: { status: 503, description: 'the database is not reachable' },

  // Credentials and access (the auth hook, op()).
  Unauthenticated: { status: 401, description: 'no credential, or an invalid, expired or revoked one' },
  WrongLogin: { status: 401, description: 'the email and password do not match a known user (same answer for an unknown email)' },
  NoRole: { status: 403, description: 'the caller has no role in the group' },
  InvalidRole: { status: 403, description: 'the caller\'s role may not read this (spec: InvalidRole)' },
  SuperuserRequired: { status: 403, description: 'only a superuser may call this endpoint' },
  ScopeNotAllowed: { status: 403, description: 'the credential is bounded to scopes that do not include the operation\'s' },
  Auth0LoginRequired: { status: 403, description: 'a password session was used on a group delegated to OpenID Connect' },
  FeatureNotEnabled: { status: 403, description: 'the group does not have the features the operation needs' },
  SessionRequired: { status: 403, description: 'API keys are created from a session, not from another key' },
  DeviceCredentialRequired: { status: 403, description: 'the credential is not bound to a device of this group (a driver session opened with device_id, or a device API key)' },
  ForbiddenDifferentTeam: { status: 403, description: 'the record belongs to a team outside the caller\'s teams, or the caller is limited to teams' },
  ForbiddenDifferentDriver: { status: 403, description: 'a driver reads and gives only the rating of the driver record their account is linked to; superusers may act for any driver' },
  OriginNotAllowed: { status: 403, description: 'the Origin header is not an allowed origin (LIVE_ALLOWED_ORIGINS)' },
  TooManyLoginAttempts: { status: 429, description: 'this address is throttled, whatever the password; the Retry-After header gives the seconds to wait' },
  ...roleChecks({
  AddUserRoleRequired: 'add user',
  AnyVehicleMovementsRoleRequired: 'tell whether a vehicle movement exists',
  CreateApiKeyRoleRequired: 'create API key',
  CreateDangerZoneRoleRequired: 'create danger zone',
  CreateDepotRoleRequired: 'create depot',
  CreateDeviceRoleRequired: 'create device',
  CreateDriverRoleRequired: 'create driver',
  CreateOnDemandRouteRoleRequired: 'create on demand route',
  CreateRailStationLinkRoleRequired: 'create rail station link',
  CreateTeamRoleRequired: 'create team',
  CreateVehicleRoleRequired: 'create vehicle',
  DeleteApiKeyRoleRequired: 'delete API key',
  DeleteRailStationLinkRoleRequired: 'delete rail station link',
  DeviceApiRoleRequired: 'device API',
  EndTripUpdateRoleRequired: 'end trip update',
  ExportDriversRoleRequired: 'export drivers',
  ExportTripTrackingRoleRequired: 'export trip tracking',
  ExportTripsRoleRequired: 'export trips',
  ExportVehicleExploitationRoleRequired: 'export vehicle exploitation',
  ExportVehiclesRoleRequired: 'export vehicles',
  GetDeviceHistoryRoleRequired: 'get device history',
  GetDeviceRoleRequired: 'get device',
  GetDriverRatingRoleRequired: 'get driver rating',
  GetDriverRoleRequired: 'get driver',
  GetDutyRoleRequired: 'get duty',
  GetGroupRoleRequired: 'get group',
  GetGtfsRoleRequired: 'get GTFS',
  GetOnDemandRouteRoleRequired: 'get on demand route',
  GetPlanningRoleRequired: 'get planning',
  GetPredictionStatsRoleRequired: 'get prediction stats',
  GetScheduleRoleRequired: 'get schedule',
  GetSmsCountRoleRequired: 'get SMS count',
  GetTripRoleRequired: 'get trip',
  GetTripTrackingStatsRoleRequired: 'get trip tracking stats',
  GetVehicleMovementRoleRequired: 'get vehicle movement',
  GetVehicleRoleRequired: 'get vehicle',
  ImportDriversRoleRequired: 'import drivers',
  ImportGtfsRoleRequired: 'import GTFS',
  ImportVehiclesRoleRequired: 'import vehicles',
  ListApiKeysRoleRequired: 'list API keys',
  ListBlockVehicleMovementsRoleRequired: 'list block vehicle movements',
  ListDangerZonesRoleRequired: 'list danger zones',
  ListDepotsRoleRequired: 'list depots',
  ListDeviationsRoleRequired: 'list deviations',
  ListDevicesRoleRequired: 'list devices',
  ListDriversRoleRequired: 'list drivers',
  ListDutiesRoleRequired: 'list duties',
  ListGtfsRoleRequired: 'list GTFS',
  ListOnDemandRoutesRoleRequired: 'list on demand routes',
  ListRailStationLinksRoleRequired: 'list rail station links',
  ListTeamsRoleRequired: 'list teams',
  ListTripEventsRoleRequired: 'list trip events',
  ListTripsRoleRequired: 'list trips',
  ListUsersRoleRequired: 'list users',
  ListVehicleMovementsOverPeriodRoleRequired: 'list vehicle movements over period',
  ListVehicleMovementsRoleRequired: 'list vehicle movements',
  ListVehiclesRoleRequired: 'list vehicles',
  LiveMapRoleRequired: 'live map',
  PublishGtfsRoleRequired: 'publish GTFS',
  PutDriverRatingRoleRequired: 'put driver rating',
  PutPlanningRoleRequired: 'put planning',
  PutTripUpdateRoleRequired: 'put trip update',
  RemoveTripUpdateRoleRequired: 'remove trip update',
  RemoveUserRoleRequired: 'remove user',
  SearchTripUpdatesRoleRequired: 'search trip updates',
  SendSmsRoleRequired: 'send SMS',
  SubscribeEventsRoleRequired: 'subscribe events',
  UpdateDangerZoneRoleRequired: 'update danger zone',
  UpdateDepotRoleRequired: 'update depot',
  UpdateDeviceRoleRequired: 'update device',
  UpdateDriverRoleRequired: 'update driver',
  UpdateOnDemandRouteRoleRequired: 'update on demand route',
  UpdateUserRoleRequired: 'update user',
  UpdateVehicleRoleRequired: 'update vehicle',
  }),

  // Records not found.
  ApiKeyNotFound: { status: 404, description: 'no such API key in the group' },
  DangerZoneNotFound: { status: 404, description: 'no such danger zone in the group' },
  DepotNotFound: { status: 404, description: 'no depot with this id in the group' },
  DeviceNotFound: { status: 404, description: 'no device with this id (in the group, or in the user\'s groups at login)' },
  DriverNotFound: { status: 404, description: 'no driver with this id in the group' },
  DutyNotFound: { status: 404, description: 'no such duty in the group' },
  GroupNotFound: { status: 404, description: 'unknown group_id' },
  GtfsCalendarNotFound: { status: 404, description: 'gtfs_id names no GTFS version of the group' },
  GtfsNotFound: { status: 404, description: 'gtfs_id names no GTFS version of the group' },
  OnDemandRouteNotFound: { status: 404, description: 'unknown or archived on-demand route (indistinguishable by design)' },
  RailStationLinkNotFound: { status: 404, description: 'the stop is not linked to this station' },
  RailStationNotFound: { status: 404, description: 'no station has this station_id' },
  TripNotFound: { status: 404, description: 'the trip neither runs nor was recorded on that date' },
  TripUpdateNotFound: { status: 404, description: 'no trip update with this id in the group' },
  UserNotFound: { status: 404, description: 'no such user (or no role in the group)' },
  VehicleMovementNotFound: { status: 404, description: 'no such vehicle movement in the group' },
  VehicleNotFound: { status: 404, description: 'no vehicle with this id in the group' },

  // Conflicts.
  DepotExists: { status: 409, description: 'the depot_id is taken' },
  DeviceAmbiguous: { status: 409, description: 'device_id names devices in several of the user\'s groups' },
  DeviceExists: { status: 409, description: 'the device_id is taken' },
  DriverExists: { status: 409, description: 'the driver_id is taken' },
  GroupExists: { status: 409, description: 'the group_id is taken' },
  ImportConflict: { status: 409, description: 'a concurrent write took a value of the file (a license plate, a staff number); send it again' },
  LicensePlateTaken: { status: 409, description: 'another vehicle has this license plate' },
  MembershipExists: { status: 409, description: 'the user already has a role in this group' },
  OnDemandRouteExists: { status: 409, description: 'the route_id is taken in this group' },
  RailStationLinkExists: { status: 409, description: 'the stop is already linked to this station' },
  StaffNumberTaken: { status: 409, description: 'another driver has this staff number' },
  TeamExists: { status: 409, description: 'the team_id is taken in this group' },
  TripUpdateConflict: { status: 409, description: 'update_id was used with another body' },
  TripUpdateRemoved: { status: 409, description: 'the trip update was removed' },
  VehicleExists: { status: 409, description: 'the vehicle_id is taken' },

  // GTFS archives and feeds.
  InvalidGtfsArchive: { status: 400, description: 'the body is not a readable zip archive, or holds an unsafe or encrypted entry' },
  GtfsArchiveTooLarge: { status: 413, description: 'the archive expands past the limits (zip bomb)' },
  InvalidGtfsFeed: { status: 422, description: 'the feed has fatal errors, listed in `errors`' },
  InvalidGTFSId: { status: 422, description: 'gtfs_id names no GTFS version of the group' },

  // Other services.
  SmsNotSent: { status: 502, description: 'the transport refused the SMS; it is recorded as failed and the body carries it in `notification`' },
  PartitionBusy: { status: 503, description: 'the time partition the reports need could not be made in time; nothing was stored: send the batch again after Retry-After seconds' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;
/** The codes answered with `status`. */
export type CodeOf<S extends number> = { [C in ErrorCode]: (typeof ERROR_CODES)[C]['status'] extends S ? C : never }[ErrorCode];
/** The statuses of the registry. */
export type ErrorStatus = (typeof ERROR_CODES)[ErrorCode]['status'];

export const statusOf = (code: ErrorCode): number => ERROR_CODES[code].status;
