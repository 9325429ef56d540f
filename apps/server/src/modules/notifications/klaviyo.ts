/**
 * The Klaviyo channel (docs/notifications.md, "Klaviyo"): each notification becomes one event
 * of the merchant's Klaviyo account through Klaviyo's official client (`klaviyo-api`), which
 * the merchant's flows then turn into e-mails or texts. Also the check of a private key (an
 * authenticated read of the key's account) and the deletion of a shopper's Klaviyo profile
 * through the Data Privacy API (shopper erasure).
 *
 * The client is built per key: an `ApiKeySession` (never `ConfigWrapper`, which sets a
 * process-wide key) whose requests go to the configured base URL (every API class has a
 * `basePath` setter; KLAVIYO_BASE_URL, the tests' emulator) with a timeout, and whose own
 * retry loop is reduced to the one attempt: retries are the caller's, at the time `send`
 * says (Retry-After). No error of the client leaves this file: they carry the request and so
 * the key (`Authorization` header); callers get a `SendResult` or a check's outcome with a
 * reason that names the status and Klaviyo's error code only.
 */
import {
  AccountsApi,
  ApiKeySession,
  DataPrivacyApi,
  type DataPrivacyCreateDeletionJobQuery,
  type EventCreateQueryV2,
  EventsApi,
  ProfilesApi,
  RetryWithExponentialBackoff,
} from 'klaviyo-api'
import type { NotificationChannel, NotificationMessage, NotificationSignal, SendResult } from './channel.js'

/** Klaviyo's production API host: the default of KLAVIYO_BASE_URL. */
export const KLAVIYO_DEFAULT_BASE_URL = 'https://a.klaviyo.com'

/**
 * Create Event's rate limits ("XL": 350 per second, 3,500 per minute), as Klaviyo's API
 * reference states them for the endpoint (developers.klaviyo.com, API reference, Events,
 * "Create Event", and the client's own documentation of `EventsApi.createEvent`). Klaviyo
 * counts them per account, fixed windows of one second (burst) and one minute (steady):
 * every private key of one account shares them ("Rate limits, status codes, and errors").
 */
export const KLAVIYO_CREATE_EVENT_BURST_PER_SECOND = 350
export const KLAVIYO_CREATE_EVENT_STEADY_PER_MINUTE = 3500

/** How long one call to Klaviyo may take before it counts as unreachable (retried later). */
export const KLAVIYO_TIMEOUT_MS = 10_000

/** The metric (event name) of each signal in the merchant's Klaviyo account. */
export const KLAVIYO_METRICS: Readonly<Record<NotificationSignal, string>> = {
  back_in_stock: 'Wishlist Back In Stock',
  price_drop: 'Wishlist Price Drop',
  low_stock: 'Wishlist Low Stock',
  reminder: 'Wishlist Reminder',
  item_added: 'Wishlist Item Added',
}

/** Klaviyo's private keys: `pk_` and hex (what the check accepts before asking Klaviyo). */
export const KLAVIYO_PRIVATE_KEY_PATTERN = '^pk_[A-Za-z0-9_]{10,200}$'

export interface KlaviyoOptions {
  /** KLAVIYO_BASE_URL: where the client's requests go (no trailing slash). */
  baseUrl: string
  timeoutMs?: number
}

export type KeyCheck =
  { state: 'valid'; accountId: string | null } | { state: 'invalid'; reason: string } | { state: 'unreachable'; reason: string }

export type ProfileRef = { email: string } | { externalId: string }

export type DeletionResult = ({ ok: true } & { profiles: number }) | Extract<SendResult, { ok: false }>

/** The client's session: the key's header as the client writes it, a timeout, one attempt per call. */
class OneAttemptSession extends ApiKeySession {
  constructor(
    apiKey: string,
    private readonly timeoutMs: number,
  ) {
    // numRetries 0: the client's loop makes its one attempt and hands every failure back.
    super(apiKey, new RetryWithExponentialBackoff({ numRetries: 0 }))
  }

  override applyToRequest(config: Parameters<ApiKeySession['applyToRequest']>[0]): void {
    super.applyToRequest(config)
    config.timeout = this.timeoutMs
  }
}

function clients(privateKey: string, opts: KlaviyoOptions) {
  const session = new OneAttemptSession(privateKey, opts.timeoutMs ?? KLAVIYO_TIMEOUT_MS)
  const at = <T extends { basePath: string }>(api: T): T => {
    api.basePath = opts.baseUrl
    return api
  }
  return {
    events: at(new EventsApi(session)),
    accounts: at(new AccountsApi(session)),
    dataPrivacy: at(new DataPrivacyApi(session)),
    profiles: at(new ProfilesApi(session)),
  }
}

/** Retry-After (seconds, or an HTTP date) in ms; null when absent or unreadable. */
export function retryAfterMs(raw: unknown, nowMs = Date.now()): number | null {
  const value = Array.isArray(raw) ? raw[0] : raw
  if (typeof value !== 'string' && typeof value !== 'number') return null
  const text = String(value).trim()
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000
  const at = Date.parse(text)
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs)
}

/** Klaviyo's JSON:API error (`{errors: [{code, title, detail}]}`) as a short text; never the request. */
function klaviyoError(data: unknown): string {
  const first = (data as { errors?: { code?: unknown; detail?: unknown }[] } | null)?.errors?.[0]
  const parts = [first?.code, first?.detail].filter((p): p is string => typeof p === 'string' && p !== '')
  return parts.length > 0 ? `: ${parts.join(': ').slice(0, 300)}` : ''
}

/** The part of the client's errors (axios's) read here: the answer, if one came, and the error code. */
interface ClientError {
  isAxiosError: true
  code?: string
  message: string
  response?: { status: number; headers: Record<string, unknown>; data: unknown }
}
const isClientError = (err: unknown): err is ClientError =>
  typeof err === 'object' && err !== null && (err as { isAxiosError?: unknown }).isAxiosError === true

/** What a failed call means for the caller: 429 and 5xx and no answer are retried, other statuses are not. */
export function failureOf(err: unknown): Extract<SendResult, { ok: false }> {
  if (!isClientError(err)) return { ok: false, permanent: true, retryAfterMs: null, reason: `klaviyo client error: ${String(err)}` }
  const res = err.response
  if (!res) {
    // No answer: refused, reset, timed out, name not resolved.
    return { ok: false, permanent: false, retryAfterMs: null, reason: `klaviyo unreachable: ${err.code ?? err.message}` }
  }
  const reason = `klaviyo answered HTTP ${res.status}${klaviyoError(res.data)}`
  if (res.status === 429 || res.status >= 500 || res.status === 408)
    return { ok: false, permanent: false, retryAfterMs: retryAfterMs(res.headers['retry-after']), reason }
  // 400 (the event's shape), 401 (the key), 403 (the key's scopes), any other 4xx: sending again changes nothing.
  return { ok: false, permanent: true, retryAfterMs: null, reason }
}

/** A price as Klaviyo's numeric `value` (null when there is none or it is not a decimal). */
const amount = (price: string | null): number | null => (price !== null && /^-?[0-9]+(\.[0-9]+)?$/.test(price) ? Number(price) : null)

/**
 * The Create Event request of a notification: the signal's metric, the shopper's profile by
 * e-mail and external id (the customer id), the product's fields as properties (names as
 * Klaviyo's own ecommerce events write them; a field the message lacks is left out), the
 * message id as `unique_id` (Klaviyo records the first event of a profile, metric and
 * unique id only), `time`, and the current price as `value`.
 */
export function eventRequest(message: NotificationMessage): EventCreateQueryV2 {
  const p = message.product
  const properties = Object.fromEntries(
    Object.entries({
      Signal: message.signal,
      ProductID: p.productId,
      VariantID: p.variantId,
      ProductName: p.title,
      URL: p.url,
      ImageURL: p.imageUrl,
      Price: p.price,
      PreviousPrice: p.previousPrice,
      Currency: p.currency,
      InventoryQuantity: p.inventoryQuantity,
      OptOutURL: message.optOutUrl,
    }).filter(([, v]) => v !== null),
  )
  const value = amount(p.price)
  return {
    data: {
      type: 'event',
      attributes: {
        properties,
        time: new Date(message.occurredAt),
        ...(value === null ? {} : { value, ...(p.currency === null ? {} : { valueCurrency: p.currency }) }),
        uniqueId: message.id,
        metric: { data: { type: 'metric', attributes: { name: KLAVIYO_METRICS[message.signal] } } },
        profile: { data: { type: 'profile', attributes: { email: message.shopper.email, externalId: message.shopper.customerId } } },
      },
    },
  }
}

/** The channel of one merchant's private key. */
export function createKlaviyoChannel(privateKey: string, opts: KlaviyoOptions): NotificationChannel {
  const api = clients(privateKey, opts)
  return {
    name: 'klaviyo',
    async send(message: NotificationMessage): Promise<SendResult> {
      try {
        await api.events.createEvent(eventRequest(message))
        return { ok: true }
      } catch (err) {
        return failureOf(err)
      }
    },
  }
}

/**
 * Whether Klaviyo takes the key: Get Accounts (the one account the key belongs to), the
 * cheapest authenticated read. 401 and 403 (a key without the `accounts:read` scope) are
 * `invalid`; no answer, 429 and 5xx are `unreachable` (try again later).
 */
export async function checkKey(privateKey: string, opts: KlaviyoOptions): Promise<KeyCheck> {
  if (!new RegExp(KLAVIYO_PRIVATE_KEY_PATTERN).test(privateKey)) return { state: 'invalid', reason: 'not a Klaviyo private key (pk_…)' }
  try {
    const { body } = await clients(privateKey, opts).accounts.getAccounts({ fieldsAccount: ['contact_information.organization_name'] })
    const id = (body as { data?: { id?: unknown }[] } | undefined)?.data?.[0]?.id
    return { state: 'valid', accountId: typeof id === 'string' ? id : null }
  } catch (err) {
    const failure = failureOf(err)
    return failure.permanent ? { state: 'invalid', reason: failure.reason } : { state: 'unreachable', reason: failure.reason }
  }
}

/** A value inside a Klaviyo filter's double quotes. */
const filterText = (value: string) => `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`

/**
 * Asks Klaviyo to delete a shopper's profiles (Data Privacy API, Request Profile Deletion,
 * asynchronous on Klaviyo's side). By e-mail: one request. By external id: the Data Privacy
 * API takes an e-mail, a phone number or Klaviyo's own profile id but no external id, so
 * the profiles whose `external_id` it is are looked up first (Get Profiles, `profiles:read`)
 * and each is deleted by its Klaviyo id; none found is done (`profiles: 0`).
 */
export async function requestProfileDeletion(privateKey: string, profile: ProfileRef, opts: KlaviyoOptions): Promise<DeletionResult> {
  const api = clients(privateKey, opts)
  const job = (attributes: { email: string } | { id: string }): DataPrivacyCreateDeletionJobQuery => ({
    data: {
      type: 'data-privacy-deletion-job',
      attributes: {
        profile: {
          data:
            'email' in attributes
              ? { type: 'profile', attributes: { email: attributes.email } }
              : { type: 'profile', id: attributes.id, attributes: {} },
        },
      },
    },
  })
  try {
    if ('email' in profile) {
      await api.dataPrivacy.requestProfileDeletion(job({ email: profile.email }))
      return { ok: true, profiles: 1 }
    }
    const { body } = await api.profiles.getProfiles({
      filter: `equals(external_id,${filterText(profile.externalId)})`,
      fieldsProfile: ['id'],
    })
    const ids = (body.data ?? []).map((p) => p.id).filter((id): id is string => typeof id === 'string')
    for (const id of ids) await api.dataPrivacy.requestProfileDeletion(job({ id }))
    return { ok: true, profiles: ids.length }
  } catch (err) {
    return failureOf(err)
  }
}
