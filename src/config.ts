/**
 * Configuration from environment variables, validated once at start.
 * Every bad value is reported with the name of the variable, so an operator
 * knows what to fix without reading code.
 */
import { ConfigError, z } from './platform/envschema.js';
import type { PartitionSettings } from './platform/db/partitions.js';

export { ConfigError };

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
/** `auto`: readable lines on a terminal, JSON lines otherwise (src/platform/http/logging.ts). */
export type LogFormat = 'auto' | 'json' | 'pretty';

export interface Config {
  port: number;
  host: string;
  /** postgres://… when set: a real PostgreSQL server through a pool. */
  databaseUrl: string | undefined;
  /** Embedded PGlite directory (or `memory://`) when databaseUrl is unset. */
  dataDir: string;
  databasePoolSize: number;
  logLevel: LogLevel;
  logFormat: LogFormat;
  superuserEmail: string | undefined;
  superuserPassword: string | undefined;
  /** Maximum size of an ordinary request body, in bytes. */
  bodyLimitBytes: number;
  /** Days a login session lives. */
  sessionTtlDays: number;
  /**
   * Login throttling (src/domains/auth/throttle.ts), failures counted within
   * loginFailureWindowSeconds. An account is never locked: these refuse (429) addresses.
   * Failures of one address on one account before that address is refused for that account.
   */
  loginMaxFailuresPerAccountAddress: number;
  /** Failures of one address over all accounts before that address is refused for every account. */
  loginMaxFailuresPerAddress: number;
  /**
   * Failures on one account from all addresses before it counts as under attack: then an address
   * that has failed on it once is refused for it (an address that has not still gets in).
   */
  loginMaxFailuresPerAccount: number;
  loginFailureWindowSeconds: number;
  /**
   * How the issuer of a delegated (OpenID Connect) group is derived from its domain:
   * `{domain}` is replaced. Default `https://{domain}/`. Tests point it at a loopback issuer.
   */
  oidcIssuerTemplate: string;
  /** Allow OpenID Connect domains that resolve to private or loopback addresses (tests only). */
  oidcAllowPrivateHosts: boolean;
  /** Minimum time between two fetches of a JWKS (an unknown kid triggers a refetch after it). */
  oidcJwksCooldownMs: number;
  /** Public base URL printed at start and used in Link headers when behind a proxy. */
  publicUrl: string | undefined;
  /** Load the demo network on first start of an empty embedded database. */
  demo: boolean | undefined;
  /** Maximum size of a CSV import (drivers, vehicles), in bytes. */
  importBodyLimitBytes: number;
  /** How SMS notifications leave the service: written to the log, or POSTed to a webhook. */
  smsTransport: 'log' | 'webhook';
  /** The webhook that sends SMS (smsTransport webhook): receives a JSON POST per message. */
  smsWebhookUrl: string | undefined;
  /** Sent as `Authorization: Bearer <token>` to the webhook when set. */
  smsWebhookToken: string | undefined;
  smsWebhookTimeoutMs: number;
  /** Limits of a GTFS upload and of the zip archive it carries (a zip bomb stops at these). */
  gtfs: GtfsLimits;
  /** Passenger information (GTFS-Realtime, SIRI). */
  feeds: FeedsConfig;
  /** The live stream (WebSocket). */
  live: LiveSettings;
  /** Predictions at the stops ahead (src/domains/predictions, docs/predictions.md). */
  predictions: PredictionsConfig;
  /** The sample of published predictions scored by stats/predictions (src/domains/predictions/samples.ts). */
  predictionSamples: PredictionSamplesConfig;
  /**
   * Which peers may set X-Forwarded-For / -Proto / -Host (Fastify's trustProxy): `true`, `false`,
   * or a comma-separated list of addresses, CIDR ranges and the names loopback, linklocal,
   * uniquelocal. The client address of rate limits and login throttling comes from it.
   */
  trustProxy: boolean | string;
  /** Web origins allowed to call the API from a browser (CORS); empty: no cross-origin access. */
  corsAllowedOrigins: string[];
  /** Requests per minute of each rate-limited kind of operation (src/platform/http/security.ts). */
  rateLimits: RateLimits;
  /** Instance-local caches kept exact by the change feed (src/platform/cache.ts); 0 disables one. */
  caches: CacheSettings;
  /** How long the service waits for what a client sends (src/platform/http/security.ts). */
  timeouts: Timeouts;
  /** The partitions of the raw reports and their retention (src/platform/db/partitions.ts). */
  partitions: PartitionSettings;
}

export interface Timeouts {
  /** The headers and the body of an ordinary request must arrive within this (408, connection closed). */
  requestMs: number;
  /** The whole of an upload (an operation accepting more than BODY_LIMIT_BYTES): Node's requestTimeout. */
  uploadMs: number;
  /** A connection neither sending nor taking bytes for this long is closed; 0: never (Fastify's connectionTimeout). */
  idleMs: number;
}

export interface CacheSettings {
  /** Credentials, groups and memberships as the access hook reads them. */
  authTtlMs: number;
  /** Answers of the cached reads (operations marked `cache`, src/platform/http/read-cache.ts). */
  readTtlMs: number;
}

export interface RateLimits {
  /** POST /login and /login-scoped, per client address. */
  login: number;
  /** API key creation, per caller. */
  credentials: number;
  /** CSV exports, per caller. */
  exports: number;
}

export interface FeedsConfig {
  /** Each API instance reads a group's network for the feeds at most once per this many seconds. */
  refreshSeconds: number;
  /** A vehicle whose latest position is older than this leaves the feeds. */
  staleVehicleSeconds: number;
  /** SIRI EstimatedTimetable also carries the journeys whose vehicle is not known yet scheduled to run within this many minutes (0: none). */
  etHorizonMinutes: number;
}

export interface PredictionsConfig {
  /** Whether this instance runs the model job (a build at start when stale, then when older than maxAgeHours). */
  job: boolean;
  /** Days of tracking history the model learns from (service dates before today). */
  historyDays: number;
  /** A group's model is rebuilt when older than this. */
  maxAgeHours: number;
  /** Width of a time band of the day, in minutes. */
  bandMinutes: number;
  /** Runs a segment needs in its day type and band to be learned; below, the schedule. */
  minSamples: number;
  /** The least time between the predicted end of a trip and the start of the next trip of its block. */
  minLayoverSeconds: number;
}

export interface PredictionSamplesConfig {
  /** Whether this instance samples what the predictions publish, once a minute (PREDICTION_SAMPLES_JOB). */
  job: boolean;
  /** Samples of service dates older than this many days are deleted. */
  retentionDays: number;
  /** Stops predicted farther ahead than this (minutes) are not sampled. */
  maxHorizonMinutes: number;
}

/** LIVE_BATCH_MS's default: the live stream's window, in ms. */
export const DEFAULT_BATCH_MS = 100;

export interface LiveSettings {
  /**
   * Browser origins allowed to open the live stream (cross-site WebSocket hijacking): exact
   * origins (`https://ops.example.org`), or `*` for any. A request without an Origin header (not a
   * browser), one from the service's own pages (Origin host = request host) and one from
   * PUBLIC_URL's origin are always accepted.
   */
  allowedOrigins: string[];
  /** A client whose unsent messages exceed this many bytes is disconnected (close 4429). */
  maxBufferedBytes: number;
  /** Ping period; a client that has not answered the previous ping is dropped. */
  heartbeatMs: number;
  /** Time a client without a credential at connection has to send its first message. */
  authTimeoutMs: number;
  /** The window of messages sent to a client together (one frame: a JSON array of envelopes); the clients' windows are staggered. */
  batchMs: number;
}

export interface GtfsLimits {
  /** Size of the uploaded archive, in bytes (413 above). */
  maxUploadBytes: number;
  /** Sum of the uncompressed sizes of the files read from the archive, in bytes. */
  maxUncompressedBytes: number;
  /** Entries (files and folders) in the archive. */
  maxEntries: number;
  /** Uncompressed size over compressed size of one entry (text compresses 5 to 20 times). */
  maxCompressionRatio: number;
  /** Errors and warnings listed in an import answer (the totals are always given). */
  maxListedProblems: number;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const r = z(env);
  const config: Config = {
    port: r.int('PORT', { default: 8080, min: 0, max: 65535 }),
    host: r.str('HOST', { default: '0.0.0.0' }),
    databaseUrl: r.url('DATABASE_URL', { protocols: ['postgres:', 'postgresql:'] }),
    dataDir: r.str('DATA_DIR', { default: './data' }),
    databasePoolSize: r.int('DATABASE_POOL_SIZE', { default: 10, min: 1, max: 1000 }),
    logLevel: r.oneOf('LOG_LEVEL', LOG_LEVELS, { default: 'info' }),
    logFormat: r.oneOf('LOG_FORMAT', ['auto', 'json', 'pretty'] as const, { default: 'auto' }),
    superuserEmail: r.email('TRANSIT_OPS_SUPERUSER_EMAIL'),
    superuserPassword: r.str('TRANSIT_OPS_SUPERUSER_PASSWORD', { minLength: 8 }),
    bodyLimitBytes: r.int('BODY_LIMIT_BYTES', { default: 1_048_576, min: 1024 }),
    sessionTtlDays: r.int('SESSION_TTL_DAYS', { default: 14, min: 1, max: 365 }),
    loginMaxFailuresPerAccountAddress: r.int('LOGIN_MAX_FAILURES_PER_ACCOUNT_ADDRESS', { default: 5, min: 1 }),
    loginMaxFailuresPerAddress: r.int('LOGIN_MAX_FAILURES_PER_ADDRESS', { default: 30, min: 1 }),
    loginMaxFailuresPerAccount: r.int('LOGIN_MAX_FAILURES_PER_ACCOUNT', { default: 10, min: 1 }),
    loginFailureWindowSeconds: r.int('LOGIN_FAILURE_WINDOW_SECONDS', { default: 900, min: 1 }),
    oidcIssuerTemplate: r.str('OIDC_ISSUER_TEMPLATE', { default: 'https://{domain}/', contains: '{domain}' }),
    oidcAllowPrivateHosts: r.bool('OIDC_ALLOW_PRIVATE_HOSTS', { default: false }),
    oidcJwksCooldownMs: r.int('OIDC_JWKS_COOLDOWN_MS', { default: 30_000, min: 0 }),
    publicUrl: r.url('PUBLIC_URL', { protocols: ['http:', 'https:'] }),
    demo: r.optionalBool('TRANSIT_OPS_DEMO'),
    importBodyLimitBytes: r.int('IMPORT_BODY_LIMIT_BYTES', { default: 33_554_432, min: 1024 }),
    smsTransport: r.oneOf('SMS_TRANSPORT', ['log', 'webhook'] as const, { default: 'log' }),
    smsWebhookUrl: r.url('SMS_WEBHOOK_URL', { protocols: ['http:', 'https:'] }),
    smsWebhookToken: r.str('SMS_WEBHOOK_TOKEN'),
    smsWebhookTimeoutMs: r.int('SMS_WEBHOOK_TIMEOUT_MS', { default: 10_000, min: 100, max: 120_000 }),
    gtfs: {
      maxUploadBytes: r.int('GTFS_MAX_UPLOAD_BYTES', { default: 512 * 1024 * 1024, min: 1024 }),
      maxUncompressedBytes: r.int('GTFS_MAX_UNCOMPRESSED_BYTES', { default: 4 * 1024 * 1024 * 1024, min: 1024 }),
      maxEntries: r.int('GTFS_MAX_ENTRIES', { default: 100, min: 1 }),
      maxCompressionRatio: r.int('GTFS_MAX_COMPRESSION_RATIO', { default: 200, min: 1 }),
      maxListedProblems: r.int('GTFS_MAX_LISTED_PROBLEMS', { default: 100, min: 1, max: 10_000 }),
    },
    feeds: {
      refreshSeconds: r.int('FEEDS_REFRESH_SECONDS', { default: 5, min: 1, max: 300 }),
      staleVehicleSeconds: r.int('FEEDS_STALE_VEHICLE_SECONDS', { default: 300, min: 10, max: 86_400 }),
      etHorizonMinutes: r.int('FEEDS_ET_HORIZON_MINUTES', { default: 60, min: 0, max: 1440 }),
    },
    live: {
      allowedOrigins: r.origins('LIVE_ALLOWED_ORIGINS'),
      maxBufferedBytes: r.int('LIVE_MAX_BUFFERED_BYTES', { default: 1_048_576, min: 4096 }),
      heartbeatMs: r.int('LIVE_HEARTBEAT_SECONDS', { default: 30, min: 1, max: 3600 }) * 1000,
      authTimeoutMs: r.int('LIVE_AUTH_TIMEOUT_SECONDS', { default: 5, min: 1, max: 300 }) * 1000,
      batchMs: r.int('LIVE_BATCH_MS', { default: DEFAULT_BATCH_MS, min: 1, max: 1000 }),
    },
    predictions: {
      job: r.bool('PREDICTIONS_JOB', { default: true }),
      historyDays: r.int('PREDICTIONS_HISTORY_DAYS', { default: 56, min: 1, max: 366 }),
      maxAgeHours: r.int('PREDICTIONS_MAX_AGE_HOURS', { default: 24, min: 1, max: 24 * 31 }),
      bandMinutes: r.int('PREDICTIONS_BAND_MINUTES', { default: 60, min: 5, max: 1440 }),
      minSamples: r.int('PREDICTIONS_MIN_SAMPLES', { default: 5, min: 1, max: 10_000 }),
      minLayoverSeconds: r.int('PREDICTIONS_MIN_LAYOVER_SECONDS', { default: 180, min: 0, max: 7200 }),
    },
    predictionSamples: {
      job: r.bool('PREDICTION_SAMPLES_JOB', { default: true }),
      retentionDays: r.int('PREDICTION_SAMPLES_RETENTION_DAYS', { default: 90, min: 1, max: 3660 }),
      maxHorizonMinutes: r.int('PREDICTION_SAMPLES_MAX_HORIZON_MINUTES', { default: 60, min: 1, max: 180 }),
    },
    trustProxy: trustProxyOf(r.str('TRUST_PROXY', { default: 'loopback,linklocal,uniquelocal' })),
    corsAllowedOrigins: r.origins('CORS_ALLOWED_ORIGINS'),
    rateLimits: {
      login: r.int('RATE_LIMIT_LOGIN_PER_MINUTE', { default: 20, min: 1 }),
      credentials: r.int('RATE_LIMIT_API_KEYS_PER_MINUTE', { default: 10, min: 1 }),
      exports: r.int('RATE_LIMIT_EXPORTS_PER_MINUTE', { default: 30, min: 1 }),
    },
    caches: {
      authTtlMs: r.int('CACHE_AUTH_TTL_MS', { default: 300_000, min: 0, max: 3_600_000 }),
      readTtlMs: r.int('CACHE_READ_TTL_MS', { default: 5_000, min: 0, max: 60_000 }),
    },
    timeouts: {
      requestMs: r.int('REQUEST_TIMEOUT_SECONDS', { default: 60, min: 1, max: 3600 }) * 1000,
      uploadMs: r.int('UPLOAD_TIMEOUT_SECONDS', { default: 900, min: 1, max: 86_400 }) * 1000,
      idleMs: r.int('IDLE_TIMEOUT_SECONDS', { default: 300, min: 0, max: 86_400 }) * 1000,
    },
    partitions: {
      positionsRetentionDays: r.int('POSITIONS_RETENTION_DAYS', { default: 90, min: 0, max: 36_500 }),
      checkSeconds: r.int('PARTITIONS_CHECK_SECONDS', { default: 300, min: 1, max: 86_400 }),
    },
  };
  if (config.timeouts.uploadMs < config.timeouts.requestMs) r.problem('UPLOAD_TIMEOUT_SECONDS must be at least REQUEST_TIMEOUT_SECONDS');
  if (config.corsAllowedOrigins.includes('*')) r.problem('CORS_ALLOWED_ORIGINS cannot be *: cross-origin calls carry credentials, so name each origin');
  if (config.smsTransport === 'webhook' && !config.smsWebhookUrl) r.problem('SMS_TRANSPORT=webhook needs SMS_WEBHOOK_URL');
  if ((config.superuserEmail === undefined) !== (config.superuserPassword === undefined)) {
    r.problem('TRANSIT_OPS_SUPERUSER_EMAIL and TRANSIT_OPS_SUPERUSER_PASSWORD must be set together');
  }
  r.done();
  return config;
}

function trustProxyOf(v: string): boolean | string {
  if (v === 'true') return true;
  if (v === 'false') return false;
  return v;
}

/** A configuration for tests and embedding: defaults, overridden by the given values. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  // Rate limits are raised so that suites making many logins from one address test what they name;
  // test/platform/security.test.ts sets them low to test the limits themselves.
  const rateLimits = { login: 100_000, credentials: 100_000, exports: 100_000 };
  // The prediction model job stays off, so no test's database gets a background build it did not ask for.
  // Positions are kept for ever: suites send reports of fixed past dates on the system clock;
  // test/platform/partitions.test.ts sets a retention to test it.
  const defaults = loadConfig({});
  const partitions = { positionsRetentionDays: 0, checkSeconds: 300 };
  return { ...defaults, dataDir: 'memory://', logLevel: 'silent', oidcAllowPrivateHosts: true, rateLimits, predictions: { ...defaults.predictions, job: false }, predictionSamples: { ...defaults.predictionSamples, job: false }, partitions, ...overrides };
}
