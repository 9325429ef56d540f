import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { SignJWT } from 'jose'
import type { Redis } from 'ioredis'
import { buildApp, configuredPlatforms } from '../../src/app.js'
import { type Config, loadConfig } from '../../src/config.js'
import { openStorage, type Storage } from '../../src/db/connect.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import type { Plan } from '../../src/db/schema.js'
import { JWT_AUDIENCE, JWT_ISSUER } from '../../src/modules/auth/auth.service.js'
import { WEBHOOK_EVENTS, type WebhookEventName } from '../../src/modules/events/outbox.js'
import type { ShopSettings } from '../../src/modules/shops/shops.types.js'
import type { ResolveHost } from '../../src/modules/webhooks/ssrf-guard.js'
import { createWebhookWorker, type WebhookWorker, type WebhookWorkerOptions } from '../../src/modules/webhooks/webhook-worker.js'
import { freshDatabase, type TestDatabase } from './db.js'

export const TEST_JWT_SECRET = 'test-secret-test-secret-test-secret-0123456789'

export interface TestShop {
  id: string
  domain: string
  plan: Plan
  storefrontKey: string
  keyId: string
  secret: string
  /** A fresh admin token of this shop. */
  adminToken(): Promise<string>
  customerToken(customerId: string): Promise<string>
  /** Headers of guest mode. */
  guest(guestId: string): Record<string, string>
  /**
   * Registers a webhook (through the API) taking these events, all six by default: the
   * outbox holds only events some active endpoint of the shop takes. Its URL accepts no
   * connections; tests that run a worker use their own receiver instead.
   */
  subscribe(events?: readonly WebhookEventName[]): Promise<void>
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON that each test reads as it expects
type ParsedJson = any

export interface TestApp {
  app: FastifyInstance
  storage: Storage
  config: Config
  database: TestDatabase
  /** The webhook worker, when the app was created with `worker`. */
  worker: WebhookWorker | undefined
  inject(opts: InjectOptions): Promise<LightMyRequestResponse>
  /** Inject and parse JSON; returns status, headers and body. */
  call(
    method: InjectOptions['method'],
    url: string,
    opts?: { token?: string; headers?: Record<string, string>; body?: unknown },
  ): Promise<{ status: number; headers: LightMyRequestResponse['headers']; body: ParsedJson }>
  createShop(plan?: Plan, settings?: Partial<ShopSettings>): Promise<TestShop>
  close(): Promise<void>
}

let shopCounter = 0

export interface TestAppOptions {
  env?: Record<string, string>
  redis?: Redis
  rateLimitNamespace?: string
  credentialCacheTtlMs?: number
  /** Reuse a database (two app instances on one database). */
  database?: TestDatabase
  /** Run a webhook worker beside the app (started; stopped by close()). */
  worker?: boolean | Partial<Omit<WebhookWorkerOptions, 'storage' | 'webhooks'>>
  /** Name resolution behind the webhook SSRF guard. */
  webhookResolve?: ResolveHost
  /** Serve the dashboard from this folder instead of apps/dashboard/dist. */
  dashboardDist?: string
  /** Serve /demo and POST /demo/login, as `wishlist serve --demo` does (off by default, as in `serve`). */
  demoPages?: boolean
}

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    JWT_SECRET: TEST_JWT_SECRET,
    PUBLIC_BASE_URL: 'http://wishlist.test',
    RATE_LIMIT_STOREFRONT_PER_MIN: '100000',
    RATE_LIMIT_ADMIN_PER_MIN: '100000',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_ALLOW_INSECURE: 'true',
    DATABASE_URL: 'sqlite::memory:',
    // Shopify app mode never calls the real Shopify in tests: its token exchanges are refused at once.
    SHOPIFY_API_EMULATOR_URL: 'http://127.0.0.1:9',
    // Nor Klaviyo: a merchant's key is checked there (tests that connect Klaviyo run its emulator: helpers/klaviyo-emulator.ts).
    KLAVIYO_BASE_URL: 'http://127.0.0.1:9',
    ...env,
  })
}

export async function createTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const database = opts.database ?? (await freshDatabase())
  const config = { ...testConfig(opts.env), database: database.target }
  const storage = openStorage(database.target)
  await migrateToLatest(storage)
  const app = await buildApp({
    config,
    storage,
    redis: opts.redis,
    rateLimitNamespace: opts.rateLimitNamespace,
    logger: false,
    credentialCacheTtlMs: opts.credentialCacheTtlMs,
    webhookResolve: opts.webhookResolve,
    dashboardDist: opts.dashboardDist,
    demoPages: opts.demoPages,
  })
  await app.ready()
  const worker = opts.worker
    ? createWebhookWorker({
        storage,
        webhooks: config.webhooks,
        sender: app.services.webhookSender,
        platforms: configuredPlatforms(config),
        ...(typeof opts.worker === 'object' ? opts.worker : {}),
      })
    : undefined
  worker?.start()

  const inject = (o: InjectOptions) => app.inject(o)

  async function call(
    method: InjectOptions['method'],
    url: string,
    o: { token?: string; headers?: Record<string, string>; body?: unknown } = {},
  ) {
    const headers: Record<string, string> = { ...(o.headers ?? {}) }
    if (o.token) headers.authorization = `Bearer ${o.token}`
    const res = await app.inject({ method, url, headers, ...(o.body === undefined ? {} : { payload: o.body as object }) })
    let body: unknown = res.body
    if ((res.headers['content-type'] ?? '').toString().includes('json') && res.body !== '') body = res.json()
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see `call` above
    return { status: res.statusCode, headers: res.headers, body: body as any }
  }

  async function token(keyId: string, secret: string, customerId?: string): Promise<string> {
    const res = await call('POST', '/v1/auth/token', {
      body: { api_key: keyId, api_secret: secret, ...(customerId ? { customer_id: customerId } : {}) },
    })
    if (res.status !== 200) throw new Error(`token exchange failed: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body.data.token as string
  }

  return {
    app,
    storage,
    config,
    database,
    worker,
    inject,
    call,
    async createShop(plan: Plan = 'scale', settings: Partial<ShopSettings> = {}) {
      const created = await app.services.shops.create({ domain: `shop${++shopCounter}-${Date.now()}.myshopify.com`, plan })
      const shop = Object.keys(settings).length ? await app.services.shops.updateSettings(created.shop.id, settings) : created.shop
      const { keyId, secret } = created.apiKey
      return {
        id: shop.id,
        domain: shop.domain,
        plan: shop.plan,
        storefrontKey: shop.storefrontKey,
        keyId,
        secret,
        adminToken: () => token(keyId, secret),
        customerToken: (customerId: string) => token(keyId, secret, customerId),
        guest: (guestId: string) => ({ 'x-storefront-key': shop.storefrontKey, 'x-guest-id': guestId }),
        async subscribe(events: readonly WebhookEventName[] = WEBHOOK_EVENTS) {
          const res = await call('POST', '/v1/webhooks', {
            token: await token(keyId, secret),
            body: { url: 'http://127.0.0.1:9/unreachable', events },
          })
          if (res.status !== 201) throw new Error(`webhook registration failed: ${res.status} ${JSON.stringify(res.body)}`)
        },
      }
    },
    async close() {
      await worker?.stop()
      await app.close()
      await storage.destroy()
      if (!opts.database) await database.drop()
    },
  }
}

/** Signs arbitrary claims with the test key (for expired / wrong-audience / forged tokens). */
export async function forgeToken(
  claims: Record<string, unknown>,
  opts: { secret?: string; iss?: string; aud?: string; exp?: number; alg?: 'HS256' | 'HS384'; typ?: string } = {},
): Promise<string> {
  const iat = Math.floor(Date.now() / 1000)
  return new SignJWT(claims)
    .setProtectedHeader({ alg: opts.alg ?? 'HS256', typ: opts.typ ?? 'at+jwt' })
    .setIssuer(opts.iss ?? JWT_ISSUER)
    .setAudience(opts.aud ?? JWT_AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(opts.exp ?? iat + 3600)
    .setJti(`jti-${Math.random()}`)
    .sign(new TextEncoder().encode(opts.secret ?? TEST_JWT_SECRET))
}

/** An unsigned `alg: none` token carrying the given claims. */
export function unsignedToken(claims: Record<string, unknown>): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url')
  const iat = Math.floor(Date.now() / 1000)
  return `${enc({ alg: 'none', typ: 'at+jwt' })}.${enc({ iss: JWT_ISSUER, aud: JWT_AUDIENCE, iat, exp: iat + 3600, jti: 'x', ...claims })}.`
}
