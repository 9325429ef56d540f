import { randomBytes } from 'node:crypto'
import { dirname, resolve } from 'node:path'
import envSchema from 'env-schema'
import { type Static, Type } from 'typebox'
import type { Plan } from './db/schema.js'
import { secretBesideDatabase } from './lib/private-files.js'

export type DatabaseTarget =
  // file ':memory:' for an in-process database; groupCommit defaults to true (SQLITE_GROUP_COMMIT)
  | { kind: 'sqlite'; file: string; groupCommit?: boolean }
  // poolMax defaults to DEFAULT_PG_POOL_MAX (PG_POOL_MAX); poolMode to 'session' (PG_POOL_MODE);
  // directUrl (DATABASE_DIRECT_URL): a session connection for LISTEN, migrations and moves;
  // replicaUrl (DATABASE_REPLICA_URL): a streaming replica for the reads that may lag by up to
  // replicaMaxLagMs (REPLICA_MAX_LAG_MS, default DEFAULT_REPLICA_MAX_LAG_MS): db/replica.ts
  | {
      kind: 'postgres'
      url: string
      schema?: string
      poolMax?: number
      poolMode?: PgPoolMode
      directUrl?: string
      replicaUrl?: string
      replicaMaxLagMs?: number
    }

/**
 * What sits behind DATABASE_URL: `session`, PostgreSQL itself or a pool that gives each client
 * connection its own server connection; `transaction`, a pool that hands out a server
 * connection per transaction (PgBouncer's `pool_mode = transaction`), so nothing that lives
 * in a session (named prepared statements, startup parameters, SET, session advisory locks,
 * LISTEN) goes over it (db/connect.ts).
 */
export type PgPoolMode = 'session' | 'transaction'

export interface Config {
  port: number
  host: string
  database: DatabaseTarget
  redisUrl: string | undefined
  /** HS256 key material (UTF-8 bytes of JWT_SECRET). */
  jwtSecret: string
  publicBaseUrl: string
  trustProxy: boolean | number | string
  /** `redisPrefix`: key prefix of the shared budget in Redis (deployments sharing one Redis use their own). */
  rateLimit: {
    storefrontPerMin: number
    adminPerMin: number
    /** The ceiling over all bearer-token requests of one shop (every API key and customer together). */
    shopPerMin: number
    redisPrefix: string | undefined
  }
  /** How long a request (headers and body) may take to arrive; then 408 and the connection closed. */
  requestTimeoutMs: number
  /** Open connections one client address may hold; more are closed as they arrive (plugins/connection-limit.ts). */
  maxConnectionsPerClient: number
  webhooks: {
    allowInsecure: boolean
    allowPrivateTargets: boolean
    /** Delays before retry n (seconds): after the 1st failure wait [0], … */
    retryScheduleSec: number[]
    timeoutMs: number
    /** How long a claimed delivery stays claimed; a dead worker's claim expires after it. */
    leaseMs: number
    pollIntervalMs: number
    /** Run the delivery worker inside the server process. */
    workerEnabled: boolean
    /** Days a settled delivery (and its attempts) stays in the deliveries log; 0 keeps them forever. */
    retentionDays: number
  }
  /** How often the background applier moves pending analytics facts into the rollups (modules/analytics/facts-applier.ts). */
  analyticsApplyIntervalMs: number
  logLevel: string
  /** Bearer token that /metrics asks for; unset: /metrics answers loopback clients only. */
  metricsToken: string | undefined
  /** In-process cache of serialized GET pages (modules/wishlists/page-cache.ts), in MB; 0 turns it off. */
  pageCacheMb: number
  /**
   * Shopify app mode (docs/api.md, "Shopify app mode"): on when SHOPIFY_API_SECRET is set,
   * else undefined and its routes answer 404. `apiKey`: the app's client id (the session
   * token audience); `defaultPlan`: the plan of a shop a signed Shopify request creates.
   */
  shopify: ShopifyConfig | undefined
  /** The merchant's notification channels (docs/notifications.md). */
  notifications: NotificationsConfig
}

/** Where the notification channels' APIs are, and the key their credentials are sealed with. */
export interface NotificationsConfig {
  /** Klaviyo's API (KLAVIYO_BASE_URL, no trailing slash): Klaviyo's own host unless tests point it at the emulator. */
  klaviyoBaseUrl: string
  /**
   * The AES-256-GCM key of the channels' credentials at rest: SHOPIFY_TOKEN_KEY's, the key of
   * the shops' Admin API tokens (generated beside the SQLite file when unset). Read when first
   * needed (connecting a channel), so a deployment without channels needs no key; with
   * PostgreSQL and no SHOPIFY_TOKEN_KEY it throws a ConfigError that names the setting.
   */
  secretsKey: () => Buffer
  /** Run the notification delivery worker inside the server process (NOTIFICATION_WORKER). */
  workerEnabled: boolean
  /** Days settled notifications (and their deliveries) are kept (NOTIFICATION_RETENTION_DAYS); 0 keeps them forever. */
  retentionDays: number
}

/** Shopify app mode's settings (docs/shopify.md). */
export interface ShopifyConfig {
  apiSecret: string
  apiKey: string | undefined
  defaultPlan: Plan
  webhookBufferBytes: number
  shopRedactMinHours: number
  /** The Admin API version every call names (SHOPIFY_API_VERSION). */
  apiVersion: string
  /** AES-256-GCM key of the shops' Admin API tokens at rest (SHOPIFY_TOKEN_KEY, or generated beside the SQLite file): 32 bytes. */
  tokenKey: Buffer
  /** Test-only: the local Shopify emulator the token endpoint and Admin API calls go to instead of the shop (SHOPIFY_API_EMULATOR_URL). */
  apiEmulatorUrl: string | undefined
  /** The service's public address (PUBLIC_BASE_URL): the app's host, as Shopify's library asks for it. */
  appUrl: string
  /** Shopify Billing of the paid plans (platforms/shopify/billing.ts). */
  billing: ShopifyBillingConfig
}

/** The plans Shopify charges for: every plan but Free. */
export type PaidPlan = Exclude<Plan, 'free'>

export interface ShopifyBillingConfig {
  /** Price in USD per 30 days of each paid plan, as decimal text (SHOPIFY_PLAN_PRICES). */
  prices: Record<PaidPlan, string>
  /** Free days before a shop's first paid subscription charges (SHOPIFY_TRIAL_DAYS). */
  trialDays: number
  /** Subscriptions made as Shopify's test charges, never billed (SHOPIFY_BILLING_TEST). */
  test: boolean
}

export class ConfigError extends Error {}

const DEFAULT_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000]

const int = (minimum: number, maximum: number, fallback?: number) =>
  fallback === undefined ? Type.Optional(Type.Integer({ minimum, maximum })) : Type.Integer({ minimum, maximum, default: fallback })
const text = Type.Optional(Type.String())
/** `true`, `false`, `1` or `0`, any case. */
const flag = (fallback: boolean) => Type.String({ pattern: '^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|1|0)$', default: String(fallback) })
const isOn = (raw: string) => raw === '1' || raw.toLowerCase() === 'true'

/**
 * Every setting the service reads from its environment, validated (and coerced) by
 * env-schema; an empty value counts as unset. A new setting is a property here and a field
 * of `Config` filled in `loadConfig`.
 */
/** How far behind the primary (ms) the read replica may be and still serve reads, when REPLICA_MAX_LAG_MS is not set. */
export const DEFAULT_REPLICA_MAX_LAG_MS = 2000

/** Connections of the PostgreSQL pool per process when PG_POOL_MAX is not set (the one place this default lives). */
export const DEFAULT_PG_POOL_MAX = 10

/** The Admin API version when SHOPIFY_API_VERSION is not set: Shopify's newest stable release when this version was made. */
export const DEFAULT_SHOPIFY_API_VERSION = '2026-10'
/** The paid plans' prices (USD per 30 days) when SHOPIFY_PLAN_PRICES does not name them. */
export const DEFAULT_SHOPIFY_PLAN_PRICES = 'starter=9.99,growth=29.99,scale=79.99'

export const EnvSchema = Type.Object({
  DATABASE_URL: text,
  /** Connections of the PostgreSQL pool per process. */
  PG_POOL_MAX: int(1, 1_000, DEFAULT_PG_POOL_MAX),
  /** What sits behind DATABASE_URL (PostgreSQL): `transaction` for a transaction pooler such as PgBouncer in transaction mode. */
  PG_POOL_MODE: Type.Enum(['session', 'transaction'] satisfies PgPoolMode[], { default: 'session' }),
  /** PostgreSQL straight (or through a session-mode pool): the change feed (LISTEN), migrations, moves. */
  DATABASE_DIRECT_URL: text,
  /** A streaming replica of DATABASE_URL (PostgreSQL): the reads that may lag go there while it keeps up (db/replica.ts). */
  DATABASE_REPLICA_URL: text,
  /** How far behind the primary the replica may be (ms) and still serve those reads. */
  REPLICA_MAX_LAG_MS: int(0, 3_600_000, DEFAULT_REPLICA_MAX_LAG_MS),
  /** SQLite: the transactions of one event-loop turn share one COMMIT (db/group-commit.ts); `false` commits each alone. */
  SQLITE_GROUP_COMMIT: flag(true),
  PORT: int(0, 65_535, 3000),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  REDIS_URL: text,
  JWT_SECRET: text,
  PUBLIC_BASE_URL: text,
  TRUST_PROXY: text,
  RATE_LIMIT_STOREFRONT_PER_MIN: int(1, 1_000_000_000, 60),
  RATE_LIMIT_ADMIN_PER_MIN: int(1, 1_000_000_000, 120),
  /** Unset: 10 × RATE_LIMIT_ADMIN_PER_MIN. */
  RATE_LIMIT_SHOP_PER_MIN: int(1, 1_000_000_000),
  RATE_LIMIT_REDIS_PREFIX: text,
  WEBHOOK_ALLOW_INSECURE: flag(false),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: flag(false),
  WEBHOOK_RETRY_SCHEDULE: Type.Optional(Type.String({ pattern: '^ *[0-9]+(\\.[0-9]+)? *(, *[0-9]+(\\.[0-9]+)? *)*$' })),
  WEBHOOK_TIMEOUT_MS: int(1, 120_000, 10_000),
  WEBHOOK_LEASE_MS: int(1, 3_600_000),
  WEBHOOK_POLL_INTERVAL_MS: int(10, 60_000, 1000),
  WEBHOOK_WORKER: Type.String({ default: 'on' }),
  WEBHOOK_DELIVERY_RETENTION_DAYS: int(0, 36_500, 30),
  ANALYTICS_APPLY_INTERVAL_MS: int(10, 60_000, 200),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  METRICS_TOKEN: text,
  PAGE_CACHE_MB: int(0, 65_536, 32),
  /** Time for a request's headers and body to arrive, in ms. */
  REQUEST_TIMEOUT_MS: int(100, 3_600_000, 30_000),
  /** Open connections per client address (the socket's: a reverse proxy in front counts as one client). */
  MAX_CONNECTIONS_PER_CLIENT: int(1, 1_000_000, 64),
  /** Shopify app mode (platforms/shopify): on when the app's client secret is set. */
  SHOPIFY_API_SECRET: text,
  SHOPIFY_API_KEY: text,
  SHOPIFY_DEFAULT_PLAN: Type.Enum(['free', 'starter', 'growth', 'scale'] satisfies Plan[], { default: 'free' }),
  /** The webhook bodies from Shopify being received at once, together, in MiB. */
  SHOPIFY_WEBHOOK_BUFFER_MB: int(5, 65_536, 64),
  /** Hours a shop must have been uninstalled before `shop/redact` erases it (Shopify sends it 48 h after). */
  SHOPIFY_SHOP_REDACT_MIN_HOURS: int(0, 8_760, 48),
  /** The Admin API version (`YYYY-MM`, a quarterly release) every Admin API call names. */
  SHOPIFY_API_VERSION: Type.String({ pattern: '^[0-9]{4}-(01|04|07|10)$', default: DEFAULT_SHOPIFY_API_VERSION }),
  /** 32 bytes, base64 or 64 hex digits: the key of the shops' Admin API tokens at rest; required with PostgreSQL in Shopify app mode. */
  SHOPIFY_TOKEN_KEY: text,
  /** USD per 30 days of the paid plans, `plan=price` by commas; a plan left out keeps its default. */
  SHOPIFY_PLAN_PRICES: Type.String({
    pattern: '^(starter|growth|scale)=[0-9]{1,5}(\\.[0-9]{1,2})?(,(starter|growth|scale)=[0-9]{1,5}(\\.[0-9]{1,2})?)*$',
    default: DEFAULT_SHOPIFY_PLAN_PRICES,
  }),
  /** Free days before a shop's first paid subscription charges. */
  SHOPIFY_TRIAL_DAYS: int(0, 1_000, 7),
  /** Paid plans as Shopify's test charges (development stores): never billed. */
  SHOPIFY_BILLING_TEST: flag(false),
  /**
   * TEST-ONLY, off by default: a loopback http(s) URL of a local Shopify emulator that Shopify's token endpoint and Admin API
   * calls go to instead of the shop (test/helpers/shopify-emulator.ts). Refused when NODE_ENV=production.
   */
  SHOPIFY_API_EMULATOR_URL: text,
  /** Klaviyo's API (the merchants' private keys are sent there); tests point it at the local Klaviyo emulator. */
  KLAVIYO_BASE_URL: Type.String({ minLength: 1, default: 'https://a.klaviyo.com' }),
  /** `off` runs a node without the notification delivery worker. */
  NOTIFICATION_WORKER: Type.String({ default: 'on' }),
  /** Days a settled notification and its deliveries are kept; 0 keeps them forever; never less than the longest cooldown (30 days). */
  NOTIFICATION_RETENTION_DAYS: int(0, 36_500, 90),
})
export type Env = Static<typeof EnvSchema>

/** The environment through EnvSchema; ConfigError naming the setting when a value is invalid. */
export function readEnv(env: NodeJS.ProcessEnv): Env {
  const data = Object.fromEntries(
    Object.keys(EnvSchema.properties).flatMap((k) => (env[k] === undefined || env[k] === '' ? [] : [[k, env[k]]])),
  )
  try {
    return envSchema<Env>({ schema: EnvSchema, data, env: false })
  } catch (err) {
    throw new ConfigError((err as Error).message.replaceAll('env/', ''))
  }
}

export function parseDatabaseUrl(raw: string | undefined, cwd = process.cwd()): DatabaseTarget {
  if (raw === undefined || raw === '') return { kind: 'sqlite', file: resolve(cwd, 'data/wishlist.db') }
  if (raw.startsWith('postgres://') || raw.startsWith('postgresql://')) return { kind: 'postgres', url: raw }
  if (raw.startsWith('sqlite:')) {
    const path = raw.slice('sqlite:'.length)
    if (path === '') throw new ConfigError('DATABASE_URL sqlite: needs a file path, e.g. sqlite:./data/shop.db')
    return { kind: 'sqlite', file: path === ':memory:' ? path : resolve(cwd, path) }
  }
  throw new ConfigError('DATABASE_URL must start with postgres://, postgresql:// or sqlite:')
}

function parseTrustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw === 'false') return false
  if (raw === 'true') return true
  if (/^[0-9]+$/.test(raw)) return Number(raw)
  return raw // comma-separated addresses or CIDR ranges
}

/**
 * The embedded default keeps a generated JWT key beside its database, so tokens survive a
 * restart. PostgreSQL deployments run several nodes, which must share one explicit key.
 */
function resolveJwtSecret(explicit: string | undefined, db: DatabaseTarget): string {
  if (explicit !== undefined) {
    if (Buffer.byteLength(explicit, 'utf8') < 32) throw new ConfigError('JWT_SECRET must be at least 32 bytes')
    return explicit
  }
  if (db.kind === 'postgres') {
    throw new ConfigError('JWT_SECRET is required with PostgreSQL: every node must sign and verify with the same key')
  }
  if (db.file === ':memory:') return randomBytes(32).toString('base64url')
  // 0600 in a 0700 folder (lib/private-files.ts).
  return secretBesideDatabase(db.file, 'jwt-secret', () => randomBytes(32).toString('base64url'))
}

/**
 * The key of the shops' Admin API tokens (AES-256-GCM): SHOPIFY_TOKEN_KEY (32 bytes, as 64
 * hex digits or base64), else generated beside the SQLite file (`shopify-token-key`, base64)
 * as the JWT key is. PostgreSQL deployments run several nodes, which must share one key.
 */
function resolveTokenKey(explicit: string | undefined, db: DatabaseTarget): Buffer {
  if (explicit !== undefined) return tokenKeyBytes(explicit, 'SHOPIFY_TOKEN_KEY')
  if (db.kind === 'postgres') {
    throw new ConfigError(
      "SHOPIFY_TOKEN_KEY is required with PostgreSQL in Shopify app mode: every node must encrypt and decrypt the shops' Admin API tokens with the same key (32 bytes, base64 or 64 hex digits: openssl rand -base64 32)",
    )
  }
  if (db.file === ':memory:') return randomBytes(32)
  return tokenKeyBytes(
    secretBesideDatabase(db.file, 'shopify-token-key', () => randomBytes(32).toString('base64')),
    resolve(dirname(db.file), 'shopify-token-key'),
  )
}

function tokenKeyBytes(raw: string, source: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(raw)
    ? Buffer.from(raw, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(raw)
      ? Buffer.from(raw, 'base64')
      : undefined
  if (key?.length !== 32) throw new ConfigError(`${source} must be 32 bytes, as base64 (openssl rand -base64 32) or 64 hex digits`)
  return key
}

/**
 * The key of the notification channels' credentials, read when first asked for: the Shopify
 * tokens' key (SHOPIFY_TOKEN_KEY or the generated `shopify-token-key`), one key for every
 * secret the service keeps in its database.
 */
function channelsKey(explicit: string | undefined, db: DatabaseTarget, shopifyKey: Buffer | undefined): () => Buffer {
  // A malformed key is refused at start, as in Shopify app mode.
  let key = shopifyKey ?? (explicit === undefined ? undefined : tokenKeyBytes(explicit, 'SHOPIFY_TOKEN_KEY'))
  return () => {
    if (key) return key
    if (db.kind === 'postgres')
      throw new ConfigError(
        "SHOPIFY_TOKEN_KEY is required with PostgreSQL to connect a notification channel: every node must encrypt and decrypt the channels' credentials with the same key (32 bytes, base64 or 64 hex digits: openssl rand -base64 32)",
      )
    key = resolveTokenKey(undefined, db)
    return key
  }
}

/** KLAVIYO_BASE_URL, checked: an http(s) URL without query or fragment, its trailing slashes dropped. */
function klaviyoBaseUrl(raw: string): string {
  const url = URL.parse(raw)
  if (url === null || !/^https?:$/.test(url.protocol) || url.search !== '' || url.hash !== '' || url.username !== '')
    throw new ConfigError('KLAVIYO_BASE_URL must be an http(s) URL without credentials, query or fragment (default https://a.klaviyo.com)')
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '')
}

/** SHOPIFY_PLAN_PRICES (checked by its pattern) over the defaults: the later of a plan named twice wins. */
function planPrices(raw: string): Record<PaidPlan, string> {
  const pairs = (text: string) => text.split(',').map((pair) => pair.split('=') as [PaidPlan, string])
  return Object.fromEntries([...pairs(DEFAULT_SHOPIFY_PLAN_PRICES), ...pairs(raw)]) as Record<PaidPlan, string>
}

/** SHOPIFY_API_EMULATOR_URL, checked: a loopback http(s) URL, never in production. */
function emulatorUrl(raw: string | undefined, nodeEnv: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  if (nodeEnv === 'production')
    throw new ConfigError(
      'SHOPIFY_API_EMULATOR_URL is a test-only setting (it sends Shopify tokens to another server): refused with NODE_ENV=production',
    )
  const url = URL.parse(raw)
  if (url === null || !/^https?:$/.test(url.protocol) || !['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname))
    throw new ConfigError('SHOPIFY_API_EMULATOR_URL must be an http(s) URL on a loopback address (the local Shopify emulator of the tests)')
  return url.origin
}

/**
 * DATABASE_URL with the settings that shape its connections. Behind a transaction pooler the
 * page cache needs DATABASE_DIRECT_URL: its change feed (LISTEN) cannot go through the pooler,
 * and without the feed the cache could not know when another instance has written.
 */
function databaseTarget(env: Env): DatabaseTarget {
  const parsed = parseDatabaseUrl(env.DATABASE_URL)
  const directUrl = env.DATABASE_DIRECT_URL
  const replicaUrl = env.DATABASE_REPLICA_URL
  if (parsed.kind === 'sqlite') {
    if (directUrl !== undefined) throw new ConfigError('DATABASE_DIRECT_URL applies to PostgreSQL only (DATABASE_URL is SQLite)')
    if (replicaUrl !== undefined) throw new ConfigError('DATABASE_REPLICA_URL applies to PostgreSQL only (DATABASE_URL is SQLite)')
    if (env.PG_POOL_MODE !== 'session') throw new ConfigError('PG_POOL_MODE applies to PostgreSQL only (DATABASE_URL is SQLite)')
    return { ...parsed, groupCommit: isOn(env.SQLITE_GROUP_COMMIT) }
  }
  if (directUrl !== undefined && parseDatabaseUrl(directUrl).kind !== 'postgres')
    throw new ConfigError('DATABASE_DIRECT_URL must start with postgres:// or postgresql://')
  if (replicaUrl !== undefined && parseDatabaseUrl(replicaUrl).kind !== 'postgres')
    throw new ConfigError('DATABASE_REPLICA_URL must start with postgres:// or postgresql://')
  if (env.PG_POOL_MODE === 'transaction' && directUrl === undefined && env.PAGE_CACHE_MB > 0)
    throw new ConfigError(
      'PG_POOL_MODE=transaction needs DATABASE_DIRECT_URL (PostgreSQL straight, or a session-mode pool) while the page cache is on: its change feed (LISTEN) cannot go through a transaction pooler, and without it the cache would serve pages another instance has changed. Set DATABASE_DIRECT_URL, or PAGE_CACHE_MB=0 to turn the cache off',
    )
  return {
    ...parsed,
    poolMax: env.PG_POOL_MAX,
    poolMode: env.PG_POOL_MODE,
    ...(directUrl === undefined ? {} : { directUrl }),
    ...(replicaUrl === undefined ? {} : { replicaUrl, replicaMaxLagMs: env.REPLICA_MAX_LAG_MS }),
  }
}

export function loadConfig(raw: NodeJS.ProcessEnv = process.env): Config {
  const env = readEnv(raw)
  const database = databaseTarget(env)
  const { PORT: port, HOST: host, WEBHOOK_TIMEOUT_MS: timeoutMs } = env
  // The lease must outlive an attempt, or a slow attempt could be claimed (and sent) twice.
  const leaseMs = env.WEBHOOK_LEASE_MS ?? timeoutMs + 30_000
  if (leaseMs <= timeoutMs) throw new ConfigError(`WEBHOOK_LEASE_MS must be more than WEBHOOK_TIMEOUT_MS (${timeoutMs})`)
  // The frequency rules read notifications up to the longest cooldown (720 hours) back.
  if (env.NOTIFICATION_RETENTION_DAYS > 0 && env.NOTIFICATION_RETENTION_DAYS < 31)
    throw new ConfigError('NOTIFICATION_RETENTION_DAYS must be 0 (keep forever) or at least 31: the longest cooldown reads 30 days back')
  // Checked whether Shopify app mode is on or not: never accepted in production.
  const apiEmulatorUrl = emulatorUrl(env.SHOPIFY_API_EMULATOR_URL, raw.NODE_ENV)
  const shopify =
    env.SHOPIFY_API_SECRET === undefined
      ? undefined
      : {
          apiSecret: env.SHOPIFY_API_SECRET,
          apiKey: env.SHOPIFY_API_KEY,
          defaultPlan: env.SHOPIFY_DEFAULT_PLAN,
          webhookBufferBytes: env.SHOPIFY_WEBHOOK_BUFFER_MB * 1024 * 1024,
          shopRedactMinHours: env.SHOPIFY_SHOP_REDACT_MIN_HOURS,
          apiVersion: env.SHOPIFY_API_VERSION,
          tokenKey: resolveTokenKey(env.SHOPIFY_TOKEN_KEY, database),
          apiEmulatorUrl,
        }
  const publicBaseUrl = (env.PUBLIC_BASE_URL ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '')
  return {
    port,
    host,
    database,
    redisUrl: env.REDIS_URL,
    jwtSecret: resolveJwtSecret(env.JWT_SECRET, database),
    publicBaseUrl,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    rateLimit: {
      storefrontPerMin: env.RATE_LIMIT_STOREFRONT_PER_MIN,
      adminPerMin: env.RATE_LIMIT_ADMIN_PER_MIN,
      shopPerMin: env.RATE_LIMIT_SHOP_PER_MIN ?? 10 * env.RATE_LIMIT_ADMIN_PER_MIN,
      redisPrefix: env.RATE_LIMIT_REDIS_PREFIX,
    },
    requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
    maxConnectionsPerClient: env.MAX_CONNECTIONS_PER_CLIENT,
    webhooks: {
      allowInsecure: isOn(env.WEBHOOK_ALLOW_INSECURE),
      allowPrivateTargets: isOn(env.WEBHOOK_ALLOW_PRIVATE_TARGETS),
      retryScheduleSec: env.WEBHOOK_RETRY_SCHEDULE?.split(',').map(Number) ?? DEFAULT_RETRY_SCHEDULE,
      timeoutMs,
      leaseMs,
      pollIntervalMs: env.WEBHOOK_POLL_INTERVAL_MS,
      workerEnabled: env.WEBHOOK_WORKER !== 'off',
      retentionDays: env.WEBHOOK_DELIVERY_RETENTION_DAYS,
    },
    analyticsApplyIntervalMs: env.ANALYTICS_APPLY_INTERVAL_MS,
    logLevel: env.LOG_LEVEL,
    metricsToken: env.METRICS_TOKEN,
    pageCacheMb: env.PAGE_CACHE_MB,
    shopify:
      shopify === undefined
        ? undefined
        : {
            ...shopify,
            appUrl: publicBaseUrl,
            billing: {
              prices: planPrices(env.SHOPIFY_PLAN_PRICES),
              trialDays: env.SHOPIFY_TRIAL_DAYS,
              test: isOn(env.SHOPIFY_BILLING_TEST),
            },
          },
    notifications: {
      klaviyoBaseUrl: klaviyoBaseUrl(env.KLAVIYO_BASE_URL),
      secretsKey: channelsKey(env.SHOPIFY_TOKEN_KEY, database, shopify?.tokenKey),
      workerEnabled: env.NOTIFICATION_WORKER !== 'off',
      retentionDays: env.NOTIFICATION_RETENTION_DAYS,
    },
  }
}
