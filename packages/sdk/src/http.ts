/**
 * The transport: credentials on every request, token exchange and refresh, error bodies
 * turned into {@link WishlistApiError}, bounded retries on 429 and 503.
 */
import { errorFromResponse, WishlistApiError } from './errors.js'
import type { TokenResponse } from './types.js'

/** Server side (merchant backend): an API key; tokens are minted and refreshed for you. */
export interface ApiKeyCredentials {
  apiKey: string
  apiSecret: string
  /** Mint customer tokens bound to this customer instead of admin tokens. */
  customerId?: string
  /** Also sent as `X-Storefront-Key` (not needed with a token). */
  storefrontKey?: string
}

/** A token minted elsewhere (e.g. your backend hands a customer token to the browser). */
export interface TokenCredentials {
  /** The bearer token, or a function returning the current one (called on every request). */
  token: string | (() => string | Promise<string>)
  /** Sent beside the token, e.g. for review submission from a storefront. */
  storefrontKey?: string
}

/** Browser/storefront: the public storefront key; with a guest id it is guest mode. */
export interface StorefrontCredentials {
  storefrontKey: string
  /** 8..64 characters of `[A-Za-z0-9_-]`; see {@link createGuestId}. */
  guestId?: string
}

export type Credentials = ApiKeyCredentials | TokenCredentials | StorefrontCredentials

export interface RetryOptions {
  /** Retries after the first attempt (429 and 503 only). Default 3. */
  retries?: number
  /** First backoff delay when the server sent no `Retry-After`. Default 250 ms. */
  baseDelayMs?: number
  /** Longest wait for one retry; a longer `Retry-After` fails at once. Default 10 s. */
  maxDelayMs?: number
}

export interface ClientOptions {
  /** Where the service listens, e.g. `https://wishlist.example.com` (no trailing `/v1`). */
  baseUrl: string
  credentials?: Credentials
  /**
   * Renews a customer token (a browser's, minted by your backend with its API key through
   * `POST /v1/auth/token` and `customer_id`). Called for the bearer token when the client has
   * none, and once more when a call is answered `401 TOKEN_EXPIRED`: that call is then sent
   * again, once, with the new token (a second `TOKEN_EXPIRED` rejects it). Calls that fail
   * together share one renewal. Goes with `credentials: { storefrontKey }` or no credentials;
   * `credentials: { token: '…' }` (a string) is the first token, used until it expires.
   * A `getToken` that throws rejects the call with its error.
   */
  getToken?: () => string | Promise<string>
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch
  retry?: RetryOptions
  /** Refresh a minted token this many seconds before it expires. Default: 10 % of its lifetime, at most 300 s. */
  refreshLeewaySeconds?: number
  /** Clock (ms since epoch); for tests. */
  now?: () => number
  /** Wait function; for tests. */
  sleep?: (ms: number) => Promise<void>
  /** Extra headers on every request. */
  headers?: Record<string, string>
}

export type QueryValue = string | number | boolean | undefined | null
export type QueryParams = Record<string, QueryValue>

export interface RequestOptions {
  query?: object | undefined
  body?: unknown
  /** `false` for the public endpoints (token exchange, shared read). */
  auth?: boolean
  signal?: AbortSignal | undefined
  /** Response body is text (CSV export) instead of JSON. */
  text?: boolean
  /**
   * Past any HTTP cache (`cache: 'no-cache'`): the service lets browsers and CDNs keep public
   * reads (a product's reviews) for minutes, so a read right after the caller changed them asks
   * the service itself.
   */
  fresh?: boolean
}

const RETRYABLE = new Set([429, 503])

/**
 * A new guest id: `g_` and 128 random bits as 32 hex digits. A guest id is a bearer secret
 * (whoever names it in a merge takes the guest's items), so it is never guessable.
 */
export function createGuestId(): string {
  const bytes = new Uint8Array(16)
  globalThis.crypto.getRandomValues(bytes)
  let id = 'g_'
  for (const b of bytes) id += b.toString(16).padStart(2, '0')
  return id
}

/** Fills `{name}` segments of an OpenAPI path template, URL-encoding each value. */
export function fillPath(template: string, params: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value = params[name]
    if (value === undefined) throw new TypeError(`missing path parameter ${name}`)
    return encodeURIComponent(String(value))
  })
}

function isApiKey(c: Credentials | undefined): c is ApiKeyCredentials {
  return c !== undefined && 'apiKey' in c
}
function isToken(c: Credentials | undefined): c is TokenCredentials {
  return c !== undefined && 'token' in c
}

export class HttpCore {
  private readonly baseUrl: string
  private readonly fetchImpl: typeof fetch
  private readonly now: () => number
  private readonly sleep: (ms: number) => Promise<void>
  private readonly retries: number
  private readonly baseDelayMs: number
  private readonly maxDelayMs: number
  private minted: { token: string; refreshAt: number; expiresAt: number } | undefined
  private minting: Promise<string> | undefined
  /** With `getToken`: the token in use (undefined until the first call) and the renewal under way. */
  private renewable: { token: string | undefined; renewing: Promise<string> | undefined } | undefined

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    const f = options.fetch ?? globalThis.fetch
    if (typeof f !== 'function') throw new TypeError('No fetch available: pass options.fetch')
    this.fetchImpl = f.bind(globalThis)
    this.now = options.now ?? Date.now
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)))
    this.retries = options.retry?.retries ?? 3
    this.baseDelayMs = options.retry?.baseDelayMs ?? 250
    this.maxDelayMs = options.retry?.maxDelayMs ?? 10_000
    if (options.getToken !== undefined) {
      const c = options.credentials
      if (typeof options.getToken !== 'function') throw new TypeError('getToken must be a function')
      if (isApiKey(c)) throw new TypeError('getToken goes without API-key credentials (they mint and refresh tokens themselves)')
      if (isToken(c) && typeof c.token !== 'string')
        throw new TypeError('getToken goes with a string credentials.token (the first token) or none')
      if (c !== undefined && 'guestId' in c && c.guestId !== undefined) throw new TypeError('getToken is for customer tokens: drop guestId')
      this.renewable = { token: isToken(c) ? (c.token as string) : undefined, renewing: undefined }
    }
  }

  get credentials(): Credentials | undefined {
    return this.options.credentials
  }

  /** POST /v1/auth/token without touching the client's own credentials. */
  async exchange(body: { api_key: string; api_secret: string; customer_id?: string }): Promise<TokenResponse> {
    return this.request<TokenResponse>('POST', '/v1/auth/token', { body, auth: false })
  }

  /**
   * The current bearer token: with `getToken`, the one it gave (asked for when there is none,
   * awaited while a renewal is under way); with API-key credentials, minted or refreshed as
   * needed; else the token of the credentials.
   */
  async bearerToken(forceRefresh = false): Promise<string | undefined> {
    const c = this.options.credentials
    if (this.renewable) return this.renewable.renewing ?? this.renewable.token ?? this.renewToken(undefined)
    if (isToken(c)) return typeof c.token === 'function' ? await c.token() : c.token
    if (!isApiKey(c)) return undefined
    const at = this.now()
    if (!forceRefresh && this.minted && at < this.minted.refreshAt) return this.minted.token
    // One exchange at a time, however many requests need a token.
    this.minting ??= (async () => {
      try {
        const res = await this.exchange({
          api_key: c.apiKey,
          api_secret: c.apiSecret,
          ...(c.customerId === undefined ? {} : { customer_id: c.customerId }),
        })
        const lifetimeMs = res.expires_in * 1000
        const leewayMs = (this.options.refreshLeewaySeconds ?? Math.min(300, res.expires_in * 0.1)) * 1000
        const issuedAt = this.now()
        this.minted = { token: res.token, expiresAt: issuedAt + lifetimeMs, refreshAt: issuedAt + Math.max(0, lifetimeMs - leewayMs) }
        return res.token
      } finally {
        this.minting = undefined
      }
    })()
    return this.minting
  }

  /**
   * A new token from `getToken`, unless the one that failed (`failed`; undefined when there
   * was none) was renewed already by another call: then that call's token. One `getToken`
   * call at a time, however many calls wait for it.
   */
  private renewToken(failed: string | undefined): Promise<string> {
    const state = this.renewable
    const getToken = this.options.getToken
    if (state === undefined || getToken === undefined) throw new Error('renewToken without getToken')
    if (state.token !== undefined && state.token !== failed) return Promise.resolve(state.token)
    state.renewing ??= (async () => {
      try {
        // Called after a tick, so that a getToken that throws at once still leaves `renewing` cleared by `finally`.
        const token = await Promise.resolve().then(getToken)
        if (typeof token !== 'string' || token === '') throw new TypeError('getToken() must return a non-empty string')
        state.token = token
        return token
      } catch (err) {
        // The failed token is not sent again: the next call asks getToken anew.
        state.token = undefined
        throw err
      } finally {
        state.renewing = undefined
      }
    })()
    return state.renewing
  }

  private async headersFor(auth: boolean): Promise<{ headers: Record<string, string>; token: string | undefined }> {
    const headers: Record<string, string> = { accept: 'application/json', ...(this.options.headers ?? {}) }
    if (!auth) return { headers, token: undefined }
    const c = this.options.credentials
    const token = await this.bearerToken()
    if (token !== undefined) headers.authorization = `Bearer ${token}`
    if (c !== undefined && 'storefrontKey' in c && c.storefrontKey !== undefined) headers['x-storefront-key'] = c.storefrontKey
    if (c !== undefined && 'guestId' in c && c.guestId !== undefined && token === undefined) headers['x-guest-id'] = c.guestId
    return { headers, token }
  }

  private url(path: string, query: object | undefined): string {
    const search = new URLSearchParams()
    for (const [k, v] of Object.entries(query ?? {}) as [string, QueryValue][]) {
      if (v !== undefined && v !== null) search.append(k, String(v))
    }
    const qs = search.toString()
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`
  }

  private backoff(attempt: number, retryAfter: number | undefined): number | undefined {
    if (retryAfter !== undefined) {
      const ms = retryAfter * 1000
      return ms <= this.maxDelayMs ? ms : undefined
    }
    const exp = this.baseDelayMs * 2 ** attempt
    // Equal jitter (half the delay fixed, half random) keeps clients that failed together
    // from retrying together, and never retries at once.
    return Math.min(this.maxDelayMs, exp / 2 + Math.random() * (exp / 2))
  }

  /** Sends one API call; resolves with the unwrapped `data` (or the bare reviews body). */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const auth = opts.auth ?? true
    let refreshed = false
    for (let attempt = 0; ; attempt++) {
      const { headers, token } = await this.headersFor(auth)
      let payload: string | undefined
      if (opts.body !== undefined) {
        headers['content-type'] = 'application/json'
        payload = JSON.stringify(opts.body)
      }
      let res: Response
      try {
        res = await this.fetchImpl(this.url(path, opts.query), {
          method,
          headers,
          ...(payload === undefined ? {} : { body: payload }),
          ...(opts.signal ? { signal: opts.signal } : {}),
          ...(opts.fresh ? { cache: 'no-cache' as const } : {}),
        })
      } catch (err) {
        throw new WishlistApiError({
          code: 'NETWORK_ERROR',
          message: err instanceof Error ? err.message : 'Network request failed',
          status: 0,
          cause: err,
        })
      }
      if (res.ok) {
        if (opts.text) return (await res.text()) as T
        if (res.status === 204) return undefined as T
        const body: unknown = await res.json()
        const isEnvelope = typeof body === 'object' && body !== null && (body as { ok?: unknown }).ok === true && 'data' in body
        return (isEnvelope ? (body as { data: unknown }).data : body) as T
      }
      const text = await res.text()
      let parsed: unknown = text
      try {
        parsed = text === '' ? undefined : JSON.parse(text)
      } catch {
        // not JSON: keep the text as details
      }
      const error = errorFromResponse(res.status, res.headers, parsed)
      // A minted token that the server no longer accepts (expired early, key rotated on
      // another node's clock): mint once more and repeat the call. Calls refused together
      // share one new token: only the token that failed is dropped.
      if (
        res.status === 401 &&
        isApiKey(this.options.credentials) &&
        !refreshed &&
        (error.code === 'TOKEN_EXPIRED' || error.code === 'INVALID_TOKEN')
      ) {
        refreshed = true
        if (this.minted?.token === token) this.minted = undefined
        attempt--
        continue
      }
      // An expired customer token (the server's 401 TOKEN_EXPIRED): renew it through
      // getToken and repeat the call once.
      if (res.status === 401 && this.renewable && token !== undefined && !refreshed && error.code === 'TOKEN_EXPIRED') {
        refreshed = true
        await this.renewToken(token)
        attempt--
        continue
      }
      if (!RETRYABLE.has(res.status) || attempt >= this.retries) throw error
      const delay = this.backoff(attempt, error.retryAfter)
      if (delay === undefined) throw error
      await this.sleep(delay)
    }
  }
}
