/**
 * A Shopify shop's Admin API, in one place (docs/shopify.md, "Admin API access"), through
 * Shopify's own library (@shopify/shopify-api, its node adapter):
 *
 * - Access: at a shop's session (embedded-admin.service.ts), when the shop holds no valid
 *   token, its session token is exchanged for an expiring offline access token and its
 *   refresh token, kept sealed (token-cipher.ts, access-tokens.repo.ts). One exchange per
 *   shop at a time on an instance; a failure is logged and the next session tries again.
 *   After an exchange, the shop's Shopify id and store currency (`shop { id currencyCode }`)
 *   are stored (the currency as the `currency` setting, only when the shop has none) and the
 *   `onTokenGranted` listeners run (the catalog backfill attaches there).
 * - Refresh: a token within REFRESH_MARGIN_MS of its expiry is refreshed before use. Shopify
 *   rotates the refresh token at every use, so a refresh is claimed in the row first: of two
 *   instances one spends it, the other keeps using the current access token while it lasts,
 *   else waits for the row to move on. A refresh Shopify refuses drops the tokens (the next
 *   session exchanges again); so does a 401 from the API for the current tokens.
 * - Calls: GraphQL only, to SHOPIFY_API_VERSION. A `THROTTLED` answer is retried after the time
 *   its `extensions.cost` says the bucket needs (requested cost less what is available, at
 *   the restore rate), at most MAX_THROTTLE_RETRIES times and never for a wait beyond
 *   MAX_THROTTLE_WAIT_MS; every request is bounded by SHOPIFY_HTTP_TIMEOUT_MS.
 *
 * Failures are `ShopifyAdminError`s, by `reason`.
 */
import '@shopify/shopify-api/adapters/node'
import { AsyncLocalStorage } from 'node:async_hooks'
import { setTimeout as delay } from 'node:timers/promises'
import {
  type ApiVersion,
  GraphqlQueryError,
  HttpResponseError,
  HttpThrottlingError,
  InvalidJwtError,
  LogSeverity,
  RequestedTokenType,
  Session,
  shopifyApi,
} from '@shopify/shopify-api'
import { setAbstractFetchFunc } from '@shopify/shopify-api/runtime'
import type { FastifyBaseLogger } from 'fastify'
import type { ShopifyConfig } from '../../config.js'
import type { Db } from '../../db/types.js'
import { isCurrencyCode } from '../../lib/money.js'
import { now } from '../../lib/time.js'
import type { ShopsService } from '../../modules/shops/shops.service.js'
import type { Shop } from '../../modules/shops/shops.types.js'
import { type AccessTokensRow, accessTokensRepo, type SealedTokens } from './access-tokens.repo.js'
import { createTokenCipher } from './token-cipher.js'

/** Longest wait for one HTTP request to Shopify (token endpoint or Admin API). */
export const SHOPIFY_HTTP_TIMEOUT_MS = 10_000
/** An access token is refreshed once it expires within this (Shopify's tokens last an hour). */
export const REFRESH_MARGIN_MS = 5 * 60_000
/** How long an instance's claim to refresh a shop's tokens lasts: beyond its token request's timeout. */
const REFRESH_LEASE_MS = 3 * SHOPIFY_HTTP_TIMEOUT_MS
/** How often an instance whose access token has expired looks whether another one's refresh is written. */
const REFRESH_POLL_MS = 100
export const MAX_THROTTLE_RETRIES = 4
export const MAX_THROTTLE_WAIT_MS = 20_000

/**
 * Why an Admin API call failed: the shop holds no valid token (`no-token`: it is exchanged at
 * its next session), Shopify refused the token (`unauthorized`, 401: uninstalled or revoked;
 * the tokens are dropped), still throttled after the bounded retries (`throttled`), Shopify
 * not reached or failing (`unreachable`: network, timeout, 5xx), or anything else it refused
 * (`failed`: GraphQL errors, with `errors`, or another status).
 */
export type ShopifyAdminFailure = 'no-token' | 'unauthorized' | 'throttled' | 'unreachable' | 'failed'

export class ShopifyAdminError extends Error {
  constructor(
    readonly reason: ShopifyAdminFailure,
    message: string,
    /** The GraphQL errors Shopify answered (`failed`). */
    readonly errors?: unknown,
    /** Shopify's HTTP status, when it answered one that is not a success (a 403 tells the app is not allowed on the shop). */
    readonly status?: number,
    /** How long the shop's bucket needs before the call can succeed (`throttled`), in ms. */
    readonly retryAfterMs?: number,
  ) {
    super(message)
    this.name = 'ShopifyAdminError'
  }
}

/**
 * Runs after a shop's session token was exchanged for its tokens (first install, or again after
 * losing them), the shop's Shopify id read. The session may be waiting: start long work beside
 * and return. It may call the Admin API.
 */
export type TokenGrantedListener = (shopId: string) => Promise<void>

export interface ShopifyAdminDeps {
  db: Db
  config: ShopifyConfig
  shops: Pick<ShopsService, 'get' | 'setShopifyShopId'>
  log: FastifyBaseLogger
}

/** The tokens a shop holds, opened. */
interface HeldTokens {
  access: string
  accessExpiresAt: number | null
  refresh: string | null
  refreshExpiresAt: number | null
  generation: number
}

/** The emulator (SHOPIFY_API_EMULATOR_URL) of the admin whose library call is running; none outside tests. */
const emulatorScope = new AsyncLocalStorage<string>()

// Every request of Shopify's library goes through its adapter's fetch: bounded in time, and sent
// to the emulator instead of `https://{shop}` when the calling admin has one (tests only).
setAbstractFetchFunc((input, init) => {
  const emulator = emulatorScope.getStore()
  const target = emulator === undefined ? input : emulated(emulator, input)
  return fetch(target, { ...init, signal: init?.signal ?? AbortSignal.timeout(SHOPIFY_HTTP_TIMEOUT_MS) })
})

/** `https://{shop}/admin/…` as `{emulator}/{shop}/admin/…`. */
function emulated(emulator: string, input: string | URL | Request): string {
  const url = new URL(input instanceof Request ? input.url : input)
  return `${emulator}/${url.host}${url.pathname}${url.search}`
}

const accessLive = (t: HeldTokens, at: number) => t.accessExpiresAt === null || t.accessExpiresAt > at
const refreshLive = (t: HeldTokens, at: number) => t.refresh !== null && (t.refreshExpiresAt === null || t.refreshExpiresAt > at)
/** Tokens that work, or can be refreshed. */
const valid = (t: HeldTokens, at: number) => accessLive(t, at) || refreshLive(t, at)
const dueForRefresh = (t: HeldTokens, at: number) =>
  t.accessExpiresAt !== null && t.accessExpiresAt - REFRESH_MARGIN_MS <= at && refreshLive(t, at)

/** One run per key at a time: a second caller shares the first one's. */
function shared<T>(flights: Map<string, Promise<T>>, key: string, run: () => Promise<T>): Promise<T> {
  const running = flights.get(key)
  if (running !== undefined) return running
  const flight = run().finally(() => flights.delete(key))
  flights.set(key, flight)
  return flight
}

/** The wait a throttled answer asks for (ms), from its cost extensions or `Retry-After`; undefined when the answer is not a throttle. */
function throttleWaitMs(err: unknown): number | undefined {
  if (err instanceof HttpThrottlingError) return Math.ceil((Number(err.response.retryAfter) || 1) * 1000)
  if (!(err instanceof GraphqlQueryError)) return undefined
  const body = err.body as
    | {
        errors?: { graphQLErrors?: { extensions?: { code?: string } }[] }
        extensions?: { cost?: { requestedQueryCost?: number; throttleStatus?: { currentlyAvailable?: number; restoreRate?: number } } }
      }
    | undefined
  if (body?.errors?.graphQLErrors?.some((e) => e.extensions?.code === 'THROTTLED') !== true) return undefined
  const cost = body.extensions?.cost
  const missing = (cost?.requestedQueryCost ?? 0) - (cost?.throttleStatus?.currentlyAvailable ?? 0)
  const rate = cost?.throttleStatus?.restoreRate ?? 0
  return rate > 0 ? Math.ceil((Math.max(0, missing) / rate) * 1000) : 1000
}

function adminError(err: unknown): ShopifyAdminError {
  if (err instanceof ShopifyAdminError) return err
  if (err instanceof GraphqlQueryError) {
    const errors = (err.body as { errors?: { graphQLErrors?: unknown } } | undefined)?.errors?.graphQLErrors
    return new ShopifyAdminError('failed', `Shopify answered GraphQL errors: ${err.message}`, errors)
  }
  if (err instanceof HttpResponseError) {
    const { code } = err.response
    return new ShopifyAdminError(
      code >= 500 || code === 429 ? 'unreachable' : 'failed',
      `Shopify answered ${code} ${err.response.statusText}`,
      undefined,
      code,
    )
  }
  // Shopify's library quotes the session token in this one's message: never logged.
  if (err instanceof InvalidJwtError) return new ShopifyAdminError('failed', "Shopify's library refused the session token")
  return new ShopifyAdminError('unreachable', `Shopify could not be reached: ${err instanceof Error ? err.message : String(err)}`)
}

/** Shopify answered the token request with a refusal (4xx): the credential sent is no good. */
const refused = (err: unknown) =>
  err instanceof HttpResponseError && !(err instanceof HttpThrottlingError) && err.response.code >= 400 && err.response.code < 500

const SHOP_ID_QUERY = 'query ShopId { shop { id currencyCode } }'
const SHOP_GID = /^gid:\/\/shopify\/Shop\/([0-9]{1,20})$/

export function createShopifyAdmin(deps: ShopifyAdminDeps) {
  const { db, config, log } = deps
  const cipher = createTokenCipher(config.tokenKey)
  const appUrl = new URL(config.appUrl)
  const listeners: TokenGrantedListener[] = []
  /** Per shop, the session's work in flight (exchange, Shopify id, listeners): one at a time. */
  const sessions = new Map<string, Promise<void>>()
  /** Per shop, an exchange in flight until its tokens are stored: Admin API calls wait for it. */
  const exchanges = new Map<string, Promise<unknown>>()
  const refreshes = new Map<string, Promise<HeldTokens | undefined>>()

  let library: ReturnType<typeof shopifyApi> | undefined
  /** Shopify's library, made at its first use: it needs the app's client id, without which no session (so no token) exists. */
  function shopify() {
    if (config.apiKey === undefined) throw new ShopifyAdminError('failed', "SHOPIFY_API_KEY (the app's client id) is not set")
    library ??= shopifyApi({
      apiKey: config.apiKey,
      apiSecretKey: config.apiSecret,
      // Any quarterly release: the library's enum lists those it knew when it was published.
      apiVersion: config.apiVersion as ApiVersion,
      hostName: appUrl.host,
      hostScheme: appUrl.protocol === 'http:' ? 'http' : 'https',
      isEmbeddedApp: true,
      logger: {
        level: LogSeverity.Warning,
        log: (severity, message) => (severity === LogSeverity.Error ? log.error : log.warn).call(log, { shopifyLibrary: true }, message),
      },
    })
    return library
  }
  /** A call of the library, in the emulator's scope when one is configured. */
  const call = <T>(run: () => Promise<T>): Promise<T> =>
    config.apiEmulatorUrl === undefined ? run() : emulatorScope.run(config.apiEmulatorUrl, run)

  const sealed = (shopId: string, session: Session): SealedTokens => {
    if (session.accessToken === undefined) throw new ShopifyAdminError('failed', 'Shopify answered no access token')
    return {
      access_token: cipher.seal(shopId, 'access_token', session.accessToken),
      access_expires_at: session.expires?.getTime() ?? null,
      refresh_token: session.refreshToken === undefined ? null : cipher.seal(shopId, 'refresh_token', session.refreshToken),
      refresh_expires_at: session.refreshTokenExpires?.getTime() ?? null,
      scope: session.scope ?? '',
    }
  }

  /** The row's tokens in clear; undefined (logged) when they do not open: another SHOPIFY_TOKEN_KEY, or altered. */
  function opened(row: AccessTokensRow): HeldTokens | undefined {
    try {
      return {
        access: cipher.open(row.shop_id, 'access_token', row.access_token),
        accessExpiresAt: row.access_expires_at,
        refresh: row.refresh_token === null ? null : cipher.open(row.shop_id, 'refresh_token', row.refresh_token),
        refreshExpiresAt: row.refresh_expires_at,
        generation: row.generation,
      }
    } catch {
      log.error(
        { shopId: row.shop_id },
        "the shop's Admin API tokens do not open with SHOPIFY_TOKEN_KEY: treated as absent until its next session",
      )
      return undefined
    }
  }

  async function held(shopId: string): Promise<HeldTokens | undefined> {
    const row = await accessTokensRepo.get(db, shopId)
    return row === undefined ? undefined : opened(row)
  }

  /** The tokens to call with: refreshed first when due; undefined when the shop holds none that works. */
  async function usable(shop: Shop): Promise<HeldTokens | undefined> {
    const tokens = await held(shop.id)
    if (tokens === undefined) return undefined
    if (dueForRefresh(tokens, now())) return shared(refreshes, shop.id, () => refreshed(shop))
    return accessLive(tokens, now()) ? tokens : undefined
  }

  async function refreshed(shop: Shop): Promise<HeldTokens | undefined> {
    for (;;) {
      const at = now()
      const tokens = await held(shop.id)
      if (tokens === undefined) return undefined
      // Refreshed meanwhile (by another instance), or nothing left to refresh with.
      if (!dueForRefresh(tokens, at)) return accessLive(tokens, at) ? tokens : undefined
      if (!(await accessTokensRepo.claimRefresh(db, shop.id, tokens.generation, at, at + REFRESH_LEASE_MS))) {
        // Another instance is spending the refresh token: the current access token serves while it lasts.
        if (accessLive(tokens, at)) return tokens
        await delay(REFRESH_POLL_MS)
        continue
      }
      let session: Session
      try {
        ;({ session } = await call(() => shopify().auth.refreshToken({ shop: shop.domain, refreshToken: tokens.refresh as string })))
      } catch (err) {
        if (refused(err)) {
          await accessTokensRepo.removeGeneration(db, shop.id, tokens.generation)
          log.warn(
            { shop: shop.domain, err: adminError(err).message },
            "Shopify refused the shop's refresh token: tokens dropped, exchanged again at its next session",
          )
          return undefined
        }
        await accessTokensRepo.releaseClaim(db, shop.id, tokens.generation)
        if (accessLive(tokens, now())) return tokens
        throw adminError(err)
      }
      const next = sealed(shop.id, session)
      // Written over the generation refreshed only; else (uninstalled, or exchanged meanwhile) read again.
      if (await accessTokensRepo.putRefreshed(db, shop.id, tokens.generation, next, now())) {
        return {
          access: session.accessToken as string,
          accessExpiresAt: next.access_expires_at,
          refresh: session.refreshToken ?? null,
          refreshExpiresAt: next.refresh_expires_at,
          generation: tokens.generation + 1,
        }
      }
    }
  }

  async function request<T>(
    domain: string,
    accessToken: string,
    query: string,
    variables: Record<string, unknown> | undefined,
  ): Promise<T> {
    const client = new (shopify().clients.Graphql)({
      session: new Session({ id: `offline_${domain}`, shop: domain, state: '', isOnline: false, accessToken }),
    })
    const res = await call(() => client.request(query, variables === undefined ? {} : { variables }))
    return res.data as T
  }

  async function graphqlOf<T>(shop: Shop, query: string, variables?: Record<string, unknown>): Promise<T> {
    let tokens = await usable(shop)
    if (tokens === undefined)
      throw new ShopifyAdminError('no-token', `${shop.domain} holds no Admin API token: it is exchanged at its next session`)
    let throttled = 0
    let renewed = false
    for (;;) {
      try {
        return await request<T>(shop.domain, tokens.access, query, variables)
      } catch (err) {
        const wait = throttleWaitMs(err)
        if (wait !== undefined) {
          if (throttled++ >= MAX_THROTTLE_RETRIES || wait > MAX_THROTTLE_WAIT_MS)
            throw new ShopifyAdminError(
              'throttled',
              `Shopify throttles ${shop.domain}'s Admin API calls (next one possible in ${wait} ms)`,
              undefined,
              undefined,
              wait,
            )
          await delay(wait)
          continue
        }
        if (!(err instanceof HttpResponseError && err.response.code === 401)) throw adminError(err)
        // Refreshed by another instance since they were read: once more with the new ones.
        const current = await usable(shop)
        if (!renewed && current !== undefined && current.generation !== tokens.generation) {
          tokens = current
          renewed = true
          continue
        }
        await accessTokensRepo.removeGeneration(db, shop.id, tokens.generation)
        throw new ShopifyAdminError('unauthorized', `Shopify refused ${shop.domain}'s access token (uninstalled, or revoked): dropped`)
      }
    }
  }

  async function recordShopId(shop: Shop): Promise<string> {
    const data = await graphqlOf<{ shop: { id: string; currencyCode?: unknown } }>(shop, SHOP_ID_QUERY)
    const id = SHOP_GID.exec(data.shop.id)?.[1]
    if (id === undefined) throw new ShopifyAdminError('failed', `Shopify answered a shop id that is not a Shop GID: ${data.shop.id}`)
    // The store currency becomes the shop's `currency` setting when it has none; a code the service does not know is left out.
    const code = data.shop.currencyCode
    await deps.shops.setShopifyShopId(shop.id, id, typeof code === 'string' && isCurrencyCode(code) ? code : null)
    return id
  }

  /** The shop to call for, once its exchange in flight (if any) is over. */
  async function callableShop(shopId: string): Promise<Shop> {
    await exchanges.get(shopId)?.catch(() => undefined)
    const shop = await deps.shops.get(shopId)
    if (shop === undefined) throw new ShopifyAdminError('no-token', 'No such shop')
    return shop
  }

  /** Runs a step after the grant; its failure is logged and leaves the others to run. */
  const step = (shop: Shop, what: string, run: () => Promise<unknown>) =>
    run().catch((err: unknown) =>
      log.warn({ shop: shop.domain, err: adminError(err).message }, `${what} failed after the Admin API token was granted`),
    )

  async function exchange(shop: Shop, sessionToken: string): Promise<void> {
    const { session } = await call(() =>
      shopify().auth.tokenExchange({
        shop: shop.domain,
        sessionToken,
        requestedTokenType: RequestedTokenType.OfflineAccessToken,
        expiring: true,
      }),
    )
    await accessTokensRepo.put(db, shop.id, sealed(shop.id, session), now())
    log.info({ shop: shop.domain, scope: session.scope }, 'Shopify Admin API token granted')
  }

  async function grant(shop: Shop, sessionToken: string): Promise<void> {
    const tokens = await held(shop.id)
    if (tokens !== undefined && valid(tokens, now())) {
      // Not known yet when the read after the exchange failed: read at a later session.
      if (shop.shopifyShopId === null) await step(shop, 'Reading the Shopify shop id', () => recordShopId(shop))
      return
    }
    const exchanged = exchange(shop, sessionToken)
    exchanges.set(shop.id, exchanged)
    try {
      await exchanged
    } finally {
      exchanges.delete(shop.id)
    }
    await step(shop, 'Reading the Shopify shop id', () => recordShopId(shop))
    for (const listener of listeners) await step(shop, 'A token-granted listener', () => listener(shop.id))
  }

  return {
    /**
     * The shop's session token, verified: when the shop holds no valid token, exchanged for
     * an expiring offline token (then its Shopify id read and the listeners run). One at a
     * time per shop (a second call shares the first); never rejects: a failure is logged and
     * the shop's next session tries again.
     */
    exchangeSessionToken(shop: Shop, sessionToken: string): Promise<void> {
      return shared(sessions, shop.id, () =>
        grant(shop, sessionToken).catch((err: unknown) =>
          log.warn({ shop: shop.domain, err: adminError(err).message }, 'Shopify token exchange failed: tried again at the next session'),
        ),
      )
    },

    /**
     * A GraphQL query or mutation of the shop's Admin API; its `data`, typed by the caller.
     * Waits for the shop's exchange in flight, if any. Throws ShopifyAdminError.
     */
    async graphql<T>(shopId: string, query: string, variables?: Record<string, unknown>): Promise<T> {
      return graphqlOf<T>(await callableShop(shopId), query, variables)
    },

    /** Reads the shop's Shopify id and currency (`shop { id currencyCode }`) and stores them as at a grant; the id. Throws ShopifyAdminError. */
    async recordShopifyShopId(shopId: string): Promise<string> {
      return recordShopId(await callableShop(shopId))
    },

    /** Whether the shop holds tokens that work or can be refreshed (no call to Shopify). */
    async hasToken(shopId: string): Promise<boolean> {
      const tokens = await held(shopId)
      return tokens !== undefined && valid(tokens, now())
    },

    /** Deletes the shop's tokens (a confirmed uninstall). */
    forgetTokens: (shopId: string): Promise<void> => accessTokensRepo.remove(db, shopId),

    /** Adds a listener run after each exchange that granted a shop its tokens, in the order added. */
    onTokenGranted(listener: TokenGrantedListener): void {
      listeners.push(listener)
    },

    /** Waits for the exchanges and refreshes in flight (the app closing). */
    async close(): Promise<void> {
      await Promise.allSettled([...sessions.values(), ...refreshes.values()])
    },
  }
}

export type ShopifyAdmin = ReturnType<typeof createShopifyAdmin>
