/**
 * Configuration from environment variables, validated once at start.
 * Every bad value is reported with the name of the variable, so an operator
 * knows what to fix without reading code.
 */
import { Type } from 'typebox';
import { ConfigError, env, environmentReader } from './platform/envschema.js';
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
  /** Where trip tracking is recomputed: a worker thread of its own (on), the service's thread (off), or auto (the thread on PostgreSQL). */
  trackingWorker: WorkerMode;
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
  /** SIRI EstimatedTimetable is rebuilt with a snapshot only once the one served is this many seconds old (0: with every snapshot). */
  etRefreshSeconds: number;
  /** While a group's feeds are asked for (within ten minutes), its snapshot is rebuilt every refreshSeconds without waiting for a request (feeds/cache.ts). */
  keepFresh: boolean;
  /** Where snapshots are read and outputs built: the feeds' worker thread (on), the service's thread (off), or auto (the worker on PostgreSQL). */
  worker: WorkerMode;
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
  /** An overdue stop's prediction is held to its block's next step of this many seconds (predict.ts heldClock); 1: to the second. */
  clockStepSeconds: number;
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
const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
/** Where work that may have a thread of its own runs (FEEDS_WORKER, TRACKING_WORKER): platform/thread.ts onItsOwnThread. */
const WORKER_MODES = ['auto', 'on', 'off'] as const;
export type WorkerMode = (typeof WORKER_MODES)[number];
const SMS_TRANSPORTS = ['log', 'webhook'] as const;

/**
 * Every environment variable the service reads, declared once: validated at start
 * (src/platform/envschema.ts) and written out as the reference of docs/configuration.md
 * (`npm run docs:config`; test/platform/config.test.ts fails when the page is behind).
 */
export const ENVIRONMENT = Type.Object({
  PORT: env.int({ default: 8080, min: 0, max: 65_535, description: 'HTTP port' }),
  HOST: env.str({ default: '0.0.0.0', description: 'listen address' }),
  DATABASE_URL: env.str({ format: 'postgres-url', description: '`postgres://…`: run on that PostgreSQL server through a pool; unset: embedded PGlite' }),
  DATA_DIR: env.str({ default: './data', description: 'embedded database folder, or `memory://`' }),
  DATABASE_POOL_SIZE: env.int({ default: 10, min: 1, max: 1000, description: 'PostgreSQL pool size' }),
  LOG_LEVEL: env.oneOf(LOG_LEVELS, { default: 'info', description: 'how much is logged (request ids in every line)' }),
  LOG_FORMAT: env.oneOf(LOG_FORMATS, { default: 'auto', description: '`auto`: one readable line per request when standard output is a terminal (`npm start` in a shell), JSON lines otherwise; `json` or `pretty` to force one (src/platform/http/logging.ts)' }),
  TRANSIT_OPS_SUPERUSER_EMAIL: env.str({ format: 'email', description: 'with `TRANSIT_OPS_SUPERUSER_PASSWORD` (both or neither): create this superuser at start if it does not exist' }),
  TRANSIT_OPS_SUPERUSER_PASSWORD: env.str({ minLength: 8, secret: true, description: 'the password of `TRANSIT_OPS_SUPERUSER_EMAIL` (never printed)' }),
  BODY_LIMIT_BYTES: env.int({ default: 1_048_576, min: 1024, description: 'request body limit of ordinary endpoints (413 above)' }),
  SESSION_TTL_DAYS: env.int({ default: 14, min: 1, max: 365, description: 'life of a login session' }),
  LOGIN_MAX_FAILURES_PER_ACCOUNT_ADDRESS: env.int({ default: 5, min: 1, description: 'failed logins of one address on one account within the window before that address gets 429 for that account' }),
  LOGIN_MAX_FAILURES_PER_ADDRESS: env.int({ default: 30, min: 1, description: 'failed logins of one address over all accounts within the window before it gets 429 for every account' }),
  LOGIN_MAX_FAILURES_PER_ACCOUNT: env.int({ default: 10, min: 1, description: 'failed logins on one account from all addresses within the window before it counts as under attack: then an address that has failed on it once gets 429 for it. An account is never locked: the right password from an address that has not failed on it gets in' }),
  LOGIN_FAILURE_WINDOW_SECONDS: env.int({ default: 900, min: 1, description: 'the window of the three limits above' }),
  OIDC_ISSUER_TEMPLATE: env.str({ default: 'https://{domain}/', format: 'issuer-template', description: 'issuer of a delegated group from its domain (JWKS at `{issuer}.well-known/jwks.json`)' }),
  OIDC_ALLOW_PRIVATE_HOSTS: env.bool({ default: false, description: 'allow OpenID Connect domains on private or loopback addresses (tests only)' }),
  OIDC_JWKS_COOLDOWN_MS: env.int({ default: 30_000, min: 0, description: 'minimum time between two JWKS fetches of one issuer (an unknown `kid` refetches after it)' }),
  PUBLIC_URL: env.str({ format: 'http-url', description: "the service's public base URL, printed at start" }),
  TRANSIT_OPS_DEMO: env.bool({ description: 'unset: load the demo into an empty embedded database, run it where the `demo` group exists; `1`: load and run it on any engine (PostgreSQL included); `0`: off' }),
  IMPORT_BODY_LIMIT_BYTES: env.int({ default: 33_554_432, min: 1024, description: 'size limit of a CSV import (drivers, vehicles)' }),
  SMS_TRANSPORT: env.oneOf(SMS_TRANSPORTS, { default: 'log', description: 'how SMS notifications leave: `log` (written to the service log, nothing sent) or `webhook`' }),
  SMS_WEBHOOK_URL: env.str({ format: 'http-url', description: 'with `SMS_TRANSPORT=webhook` (required then): each SMS is POSTed there as JSON' }),
  SMS_WEBHOOK_TOKEN: env.str({ secret: true, description: 'sent to the webhook as `Authorization: Bearer <token>`' }),
  SMS_WEBHOOK_TIMEOUT_MS: env.int({ default: 10_000, min: 100, max: 120_000, description: 'the webhook must answer within this time, else the SMS is recorded as failed' }),
  GTFS_MAX_UPLOAD_BYTES: env.int({ default: 512 * 1024 * 1024, min: 1024, description: 'size limit of an uploaded GTFS archive (413 `PayloadTooLarge`: Content-Length checked first, then bytes counted)' }),
  GTFS_MAX_UNCOMPRESSED_BYTES: env.int({ default: 4 * 1024 * 1024 * 1024, min: 1024, description: 'sum of the uncompressed sizes of the files read from a GTFS archive (413 `GtfsArchiveTooLarge`)' }),
  GTFS_MAX_ENTRIES: env.int({ default: 100, min: 1, description: 'entries (files and folders) in a GTFS archive (413 `GtfsArchiveTooLarge`)' }),
  GTFS_MAX_COMPRESSION_RATIO: env.int({ default: 200, min: 1, description: 'uncompressed over compressed size of one archive entry over 1 MiB (a zip bomb; 413 `GtfsArchiveTooLarge`); text compresses 5 to 20 times' }),
  GTFS_MAX_LISTED_PROBLEMS: env.int({ default: 100, min: 1, max: 10_000, description: "errors and warnings listed in a GTFS import's answer (the totals are always given)" }),
  FEEDS_REFRESH_SECONDS: env.int({ default: 5, min: 1, max: 300, description: "a group's snapshot for GTFS-Realtime and SIRI older than this is rebuilt in the background, answers meanwhile coming from it (stale-while-revalidate)" }),
  FEEDS_STALE_VEHICLE_SECONDS: env.int({ default: 300, min: 10, max: 86_400, description: 'a vehicle whose latest position is older than this leaves GTFS-Realtime and SIRI' }),
  FEEDS_KEEP_FRESH: env.bool({ default: true, description: "while any of a group's feeds was asked for within ten minutes, its snapshot is rebuilt every `FEEDS_REFRESH_SECONDS` in the background, so an answer is about an interval plus a rebuild old whatever the consumers' polling period; `false`: rebuilt only when a request finds it stale, an answer then as old as the time since the request before it (one consumer polling every 30 s gets 30 s old feeds) ([feeds.md](feeds.md))" }),
  FEEDS_WORKER: env.oneOf(WORKER_MODES, { default: 'auto', description: "where the feeds' snapshots are read and GTFS-Realtime and SIRI built: `on`, a worker thread of their own with its own database connections (PostgreSQL only), so requests and device reports are not held while a city's network is read and written; `off`, the service's thread; `auto`, on with PostgreSQL, off with the embedded database (which lives in the service's thread) ([feeds.md](feeds.md))" }),
  TRACKING_WORKER: env.oneOf(WORKER_MODES, { default: 'auto', description: "where trip tracking is recomputed after device reports (and before the reads that cover a trip still marked): `on`, a worker thread of its own with its own database connections (PostgreSQL only), so the service's thread answers requests and ingests reports meanwhile and the reports held between two rounds are kept on another heap; `off`, the service's thread; `auto`, on with PostgreSQL, off with the embedded database ([tracking.md](tracking.md))" }),
  FEEDS_ET_REFRESH_SECONDS: env.int({ default: 0, min: 0, max: 3600, description: "SIRI EstimatedTimetable is rebuilt with a snapshot only once the one served is this many seconds old, and served meanwhile (its ResponseTimestamp and Age tell how old); `0`: with every snapshot. A city's timetable is a third of a rebuild's CPU: a larger value keeps trip-updates, positions and device answers faster on a full machine ([feeds.md](feeds.md))" }),
  FEEDS_ET_HORIZON_MINUTES: env.int({ default: 60, min: 0, max: 1440, description: "SIRI EstimatedTimetable (and StopMonitoring's expected times) also carry the journeys whose vehicle is not known yet, scheduled to run within this many minutes (`Monitored` false, predicted from their scheduled departure); `0`: none ([feeds.md](feeds.md))" }),
  LIVE_ALLOWED_ORIGINS: env.str({ format: 'origin-list', description: "other browser origins allowed to open the live stream, comma-separated (`https://ops.example.org,http://localhost:5173`), or `*`; requests without an Origin header, pages of the service itself (Origin host = request host) and `PUBLIC_URL`'s origin are always accepted; others get 403 `OriginNotAllowed` before the upgrade" }),
  LIVE_MAX_BUFFERED_BYTES: env.int({ default: 1_048_576, min: 4096, description: 'a live stream client with more unsent bytes than this is closed (4429 `SlowClient`)' }),
  LIVE_HEARTBEAT_SECONDS: env.int({ default: 30, min: 1, max: 3600, description: 'ping period of the live stream; a client that missed the previous pong is cut' }),
  LIVE_AUTH_TIMEOUT_SECONDS: env.int({ default: 5, min: 1, max: 300, description: 'time a live stream client without a credential at connection has to send `{"session_id": "…"}`' }),
  LIVE_BATCH_MS: env.int({ default: DEFAULT_BATCH_MS, min: 1, max: 1000, description: "the live stream's window: a client receives at most one frame (a JSON array; one write with `?batch=false`) this often, holding what came since its previous one; the clients' windows are staggered (4 turns a window, each writing a quarter of the clients); larger: fewer frames, more latency" }),
  PREDICTIONS_JOB: env.bool({ default: true, description: "this instance runs the prediction model job (docs/predictions.md): a build of each group's model 30 s after start when it is missing or stale, then checks every 10 minutes; several instances may run it (an advisory lock lets one build a group)" }),
  PREDICTIONS_HISTORY_DAYS: env.int({ default: 56, min: 1, max: 366, description: 'service dates of tracking history (before today) the model learns from' }),
  PREDICTIONS_MAX_AGE_HOURS: env.int({ default: 24, min: 1, max: 24 * 31, description: "a group's model older than this is rebuilt" }),
  PREDICTIONS_BAND_MINUTES: env.int({ default: 60, min: 5, max: 1440, description: 'width of the time-of-day bands the running times are learned by' }),
  PREDICTIONS_MIN_SAMPLES: env.int({ default: 5, min: 1, max: 10_000, description: 'runs a segment needs in its day type and band to be learned; below, predictions use the scheduled running time' }),
  PREDICTIONS_MIN_LAYOVER_SECONDS: env.int({ default: 180, min: 0, max: 7200, description: 'least time between the predicted end of a trip and the start of the next trip of its block' }),
  PREDICTIONS_CLOCK_STEP_SECONDS: env.int({ default: 15, min: 1, max: 60, description: "a stop whose predicted time has passed while its vehicle has not reached it yet is predicted at the next step of this many seconds of the clock (each block with a step phase of its own), not at the current second: an overdue vehicle's predictions then change once a step, not at every rebuild of the feeds, and are never more than this late against the clock (1–60; 1: the current second)" }),
  PREDICTION_SAMPLES_JOB: env.bool({ default: true, description: 'this instance samples what the predictions publish, once a minute, for `GET stats/predictions` (`src/domains/predictions/samples.ts`)' }),
  PREDICTION_SAMPLES_RETENTION_DAYS: env.int({ default: 90, min: 1, max: 3660, description: 'samples of service dates older than this are deleted (1–3660)' }),
  PREDICTION_SAMPLES_MAX_HORIZON_MINUTES: env.int({ default: 60, min: 1, max: 180, description: 'stops predicted farther ahead than this are not sampled (1–180)' }),
  TRUST_PROXY: env.str({ default: 'loopback,linklocal,uniquelocal', description: 'peers whose `X-Forwarded-For/-Proto/-Host` are believed: `true`, `false`, or addresses / CIDR ranges / those names, comma-separated. The client address of rate limits comes from it' }),
  CORS_ALLOWED_ORIGINS: env.str({ format: 'origin-list', description: 'comma-separated origins (`https://ops.example.org`) allowed to call the API from a browser, with credentials; others get no CORS header' }),
  RATE_LIMIT_LOGIN_PER_MINUTE: env.int({ default: 20, min: 1, description: '`POST /login` and `/login-scoped` per client address (429 `TooManyRequests` with `Retry-After` above)' }),
  RATE_LIMIT_API_KEYS_PER_MINUTE: env.int({ default: 10, min: 1, description: 'API key creation per caller' }),
  RATE_LIMIT_EXPORTS_PER_MINUTE: env.int({ default: 30, min: 1, description: 'CSV exports (`/export/*`) per caller' }),
  CACHE_AUTH_TTL_MS: env.int({ default: 300_000, min: 0, max: 3_600_000, description: 'longest life of a cached credential, group or membership in one instance (the change feed drops them at once on any change, and everything when its connection drops; this only bounds memory of idle credentials and a notification that would still be lost); `0` disables' }),
  CACHE_READ_TTL_MS: env.int({ default: 5000, min: 0, max: 60_000, description: "longest life of a cached answer of the cached reads (vehicles list, trip object, planning; see [caches.md](caches.md)); also how late time-derived fields (a trip's status as the clock passes its end) may be; `0` disables" }),
  REQUEST_TIMEOUT_SECONDS: env.int({ default: 60, min: 1, max: 3600, description: 'an ordinary request (headers and body) must arrive within this time ([security.md](security.md))' }),
  UPLOAD_TIMEOUT_SECONDS: env.int({ default: 900, min: 1, max: 86_400, description: 'an upload (GTFS, CSV imports, planning, device batches) must arrive within this time; at least `REQUEST_TIMEOUT_SECONDS`' }),
  IDLE_TIMEOUT_SECONDS: env.int({ default: 300, min: 0, max: 86_400, description: 'an idle keep-alive connection is closed after this time; `0` turns it off (the live stream and streamed exports are not bounded by it)' }),
  POSITIONS_RETENTION_DAYS: env.int({ default: 90, min: 0, max: 36_500, description: 'days raw positions are kept (day partitions older are dropped; trip reports older are refused); `0` keeps them for ever. Trip events, passenger counts, tracking and duties are always kept ([operations.md](operations.md) §7)' }),
  PARTITIONS_CHECK_SECONDS: env.int({ default: 300, min: 1, max: 86_400, description: 'how often each instance makes the report partitions ahead and drops the expired ones' }),
});

const readEnvironment = environmentReader(ENVIRONMENT);

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const { values: e, problems } = readEnvironment(source);
  const config: Config = {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    trackingWorker: e.TRACKING_WORKER,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    superuserEmail: e.TRANSIT_OPS_SUPERUSER_EMAIL,
    superuserPassword: e.TRANSIT_OPS_SUPERUSER_PASSWORD,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    sessionTtlDays: e.SESSION_TTL_DAYS,
    loginMaxFailuresPerAccountAddress: e.LOGIN_MAX_FAILURES_PER_ACCOUNT_ADDRESS,
    loginMaxFailuresPerAddress: e.LOGIN_MAX_FAILURES_PER_ADDRESS,
    loginMaxFailuresPerAccount: e.LOGIN_MAX_FAILURES_PER_ACCOUNT,
    loginFailureWindowSeconds: e.LOGIN_FAILURE_WINDOW_SECONDS,
    oidcIssuerTemplate: e.OIDC_ISSUER_TEMPLATE,
    oidcAllowPrivateHosts: e.OIDC_ALLOW_PRIVATE_HOSTS,
    oidcJwksCooldownMs: e.OIDC_JWKS_COOLDOWN_MS,
    publicUrl: e.PUBLIC_URL,
    demo: e.TRANSIT_OPS_DEMO,
    importBodyLimitBytes: e.IMPORT_BODY_LIMIT_BYTES,
    smsTransport: e.SMS_TRANSPORT,
    smsWebhookUrl: e.SMS_WEBHOOK_URL,
    smsWebhookToken: e.SMS_WEBHOOK_TOKEN,
    smsWebhookTimeoutMs: e.SMS_WEBHOOK_TIMEOUT_MS,
    gtfs: {
      maxUploadBytes: e.GTFS_MAX_UPLOAD_BYTES,
      maxUncompressedBytes: e.GTFS_MAX_UNCOMPRESSED_BYTES,
      maxEntries: e.GTFS_MAX_ENTRIES,
      maxCompressionRatio: e.GTFS_MAX_COMPRESSION_RATIO,
      maxListedProblems: e.GTFS_MAX_LISTED_PROBLEMS,
    },
    feeds: {
      refreshSeconds: e.FEEDS_REFRESH_SECONDS,
      staleVehicleSeconds: e.FEEDS_STALE_VEHICLE_SECONDS,
      etHorizonMinutes: e.FEEDS_ET_HORIZON_MINUTES,
      etRefreshSeconds: e.FEEDS_ET_REFRESH_SECONDS,
      keepFresh: e.FEEDS_KEEP_FRESH,
      worker: e.FEEDS_WORKER,
    },
    live: {
      allowedOrigins: listOf(e.LIVE_ALLOWED_ORIGINS),
      maxBufferedBytes: e.LIVE_MAX_BUFFERED_BYTES,
      heartbeatMs: e.LIVE_HEARTBEAT_SECONDS * 1000,
      authTimeoutMs: e.LIVE_AUTH_TIMEOUT_SECONDS * 1000,
      batchMs: e.LIVE_BATCH_MS,
    },
    predictions: {
      job: e.PREDICTIONS_JOB,
      historyDays: e.PREDICTIONS_HISTORY_DAYS,
      maxAgeHours: e.PREDICTIONS_MAX_AGE_HOURS,
      bandMinutes: e.PREDICTIONS_BAND_MINUTES,
      minSamples: e.PREDICTIONS_MIN_SAMPLES,
      minLayoverSeconds: e.PREDICTIONS_MIN_LAYOVER_SECONDS,
      clockStepSeconds: e.PREDICTIONS_CLOCK_STEP_SECONDS,
    },
    predictionSamples: {
      job: e.PREDICTION_SAMPLES_JOB,
      retentionDays: e.PREDICTION_SAMPLES_RETENTION_DAYS,
      maxHorizonMinutes: e.PREDICTION_SAMPLES_MAX_HORIZON_MINUTES,
    },
    trustProxy: trustProxyOf(e.TRUST_PROXY),
    corsAllowedOrigins: listOf(e.CORS_ALLOWED_ORIGINS),
    rateLimits: {
      login: e.RATE_LIMIT_LOGIN_PER_MINUTE,
      credentials: e.RATE_LIMIT_API_KEYS_PER_MINUTE,
      exports: e.RATE_LIMIT_EXPORTS_PER_MINUTE,
    },
    caches: {
      authTtlMs: e.CACHE_AUTH_TTL_MS,
      readTtlMs: e.CACHE_READ_TTL_MS,
    },
    timeouts: {
      requestMs: e.REQUEST_TIMEOUT_SECONDS * 1000,
      uploadMs: e.UPLOAD_TIMEOUT_SECONDS * 1000,
      idleMs: e.IDLE_TIMEOUT_SECONDS * 1000,
    },
    partitions: {
      positionsRetentionDays: e.POSITIONS_RETENTION_DAYS,
      checkSeconds: e.PARTITIONS_CHECK_SECONDS,
    },
  };
  if (config.timeouts.uploadMs < config.timeouts.requestMs) problems.push('UPLOAD_TIMEOUT_SECONDS must be at least REQUEST_TIMEOUT_SECONDS');
  if (config.corsAllowedOrigins.includes('*')) problems.push('CORS_ALLOWED_ORIGINS cannot be *: cross-origin calls carry credentials, so name each origin');
  if (config.feeds.worker === 'on' && !config.databaseUrl) problems.push("FEEDS_WORKER=on needs DATABASE_URL: the embedded database lives in the service's thread, where the feeds are then built (auto or off)");
  if (config.trackingWorker === 'on' && !config.databaseUrl) problems.push("TRACKING_WORKER=on needs DATABASE_URL: the embedded database lives in the service's thread, where tracking is then recomputed (auto or off)");
  if (config.smsTransport === 'webhook' && !config.smsWebhookUrl) problems.push('SMS_TRANSPORT=webhook needs SMS_WEBHOOK_URL');
  if ((config.superuserEmail === undefined) !== (config.superuserPassword === undefined)) {
    problems.push('TRANSIT_OPS_SUPERUSER_EMAIL and TRANSIT_OPS_SUPERUSER_PASSWORD must be set together');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** A comma-separated list (origins), without blanks. */
function listOf(v: string | undefined): string[] {
  return (v ?? '').split(',').map((o) => o.trim()).filter((o) => o !== '');
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
  // The feeds are built on the test's thread, on both engines (the `pause` seam holds a rebuild
  // there); test/feeds/worker.test.ts tests the worker thread on PostgreSQL.
  // Rebuilt on request only (FEEDS_KEEP_FRESH off): a background rebuild on the real timer would
  // race the tests that move the clock and count rebuilds; test/feeds/keep-fresh.test.ts turns it on.
  const feeds = { ...defaults.feeds, worker: 'off' as const, keepFresh: false };
  return { ...defaults, dataDir: 'memory://', logLevel: 'silent', oidcAllowPrivateHosts: true, rateLimits, predictions: { ...defaults.predictions, job: false }, predictionSamples: { ...defaults.predictionSamples, job: false }, partitions, feeds, ...overrides };
}
