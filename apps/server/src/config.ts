import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { Plan } from './db/schema.js'

export type DatabaseTarget =
  | { kind: 'sqlite'; file: string } // file ':memory:' for an in-process database
  | { kind: 'postgres'; url: string; schema?: string }

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
  rateLimit: { storefrontPerMin: number; adminPerMin: number; redisPrefix: string | undefined }
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
  shopify: { apiSecret: string; apiKey: string | undefined; defaultPlan: Plan } | undefined
}

export class ConfigError extends Error {}

const DEFAULT_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000]

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max} (got "${raw}")`)
  }
  return n
}

function bool(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = (env[name] ?? '').toLowerCase()
  if (raw === '' || raw === 'false' || raw === '0') return false
  if (raw === 'true' || raw === '1') return true
  throw new ConfigError(`${name} must be true or false (got "${env[name]}")`)
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

const PLAN_NAMES: readonly Plan[] = ['free', 'starter', 'growth', 'scale']

function parseShopify(env: NodeJS.ProcessEnv): Config['shopify'] {
  const apiSecret = env.SHOPIFY_API_SECRET
  if (apiSecret === undefined || apiSecret === '') return undefined
  const plan = env.SHOPIFY_DEFAULT_PLAN || 'free'
  if (!(PLAN_NAMES as readonly string[]).includes(plan)) throw new ConfigError(`SHOPIFY_DEFAULT_PLAN must be one of ${PLAN_NAMES.join(', ')} (got "${plan}")`)
  return { apiSecret, apiKey: env.SHOPIFY_API_KEY || undefined, defaultPlan: plan as Plan }
}

function parseTrustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw === '' || raw === 'false') return false
  if (raw === 'true') return true
  if (/^[0-9]+$/.test(raw)) return Number(raw)
  return raw // comma-separated addresses or CIDR ranges
}

/**
 * The embedded default keeps a generated JWT key beside its database, so tokens survive a
 * restart. PostgreSQL deployments run several nodes, which must share one explicit key.
 */
function resolveJwtSecret(env: NodeJS.ProcessEnv, db: DatabaseTarget): string {
  const explicit = env.JWT_SECRET
  if (explicit !== undefined && explicit !== '') {
    if (Buffer.byteLength(explicit, 'utf8') < 32) throw new ConfigError('JWT_SECRET must be at least 32 bytes')
    return explicit
  }
  if (db.kind === 'postgres') {
    throw new ConfigError('JWT_SECRET is required with PostgreSQL: every node must sign and verify with the same key')
  }
  if (db.file === ':memory:') return randomBytes(32).toString('base64url')
  const file = resolve(dirname(db.file), 'jwt-secret')
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  mkdirSync(dirname(file), { recursive: true })
  const secret = randomBytes(32).toString('base64url')
  writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' })
  return secret
}

function parseSchedule(raw: string | undefined): number[] {
  if (raw === undefined || raw === '') return DEFAULT_RETRY_SCHEDULE
  const parts = raw.split(',').map((s) => Number(s.trim()))
  if (parts.length === 0 || parts.some((n) => !Number.isFinite(n) || n < 0)) {
    throw new ConfigError('WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds, e.g. 5,300,1800')
  }
  return parts
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const database = parseDatabaseUrl(env.DATABASE_URL)
  const webhookTimeoutMs = int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 1, 120_000)
  // The lease must outlive an attempt, or a slow attempt could be claimed (and sent) twice.
  const webhookLeaseMs = int(env, 'WEBHOOK_LEASE_MS', webhookTimeoutMs + 30_000, webhookTimeoutMs + 1, 3_600_000)
  const port = int(env, 'PORT', 3000, 0, 65535)
  const host = env.HOST || '127.0.0.1'
  return {
    port,
    host,
    database,
    redisUrl: env.REDIS_URL || undefined,
    jwtSecret: resolveJwtSecret(env, database),
    publicBaseUrl: (env.PUBLIC_BASE_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, ''),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    rateLimit: {
      storefrontPerMin: int(env, 'RATE_LIMIT_STOREFRONT_PER_MIN', 60, 1, 1_000_000_000),
      adminPerMin: int(env, 'RATE_LIMIT_ADMIN_PER_MIN', 120, 1, 1_000_000_000),
      redisPrefix: env.RATE_LIMIT_REDIS_PREFIX || undefined,
    },
    webhooks: {
      allowInsecure: bool(env, 'WEBHOOK_ALLOW_INSECURE'),
      allowPrivateTargets: bool(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS'),
      retryScheduleSec: parseSchedule(env.WEBHOOK_RETRY_SCHEDULE),
      timeoutMs: webhookTimeoutMs,
      leaseMs: webhookLeaseMs,
      pollIntervalMs: int(env, 'WEBHOOK_POLL_INTERVAL_MS', 1000, 10, 60_000),
      workerEnabled: env.WEBHOOK_WORKER !== 'off',
      retentionDays: int(env, 'WEBHOOK_DELIVERY_RETENTION_DAYS', 30, 0, 36_500),
    },
    analyticsApplyIntervalMs: int(env, 'ANALYTICS_APPLY_INTERVAL_MS', 200, 10, 60_000),
    logLevel: env.LOG_LEVEL || 'info',
    metricsToken: env.METRICS_TOKEN || undefined,
    pageCacheMb: int(env, 'PAGE_CACHE_MB', 32, 0, 65_536),
    shopify: parseShopify(env),
  }
}
