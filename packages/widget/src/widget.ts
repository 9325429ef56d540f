/**
 * The storefront widget: one async <script> turns `[data-wishlist-product-id]` elements into
 * heart toggles, fills `[data-wishlist-count]` badges and renders reviews where
 * `[data-reviews-product-id]` asks. No framework; all text goes through textContent.
 * Guest identity and guest items use the same localStorage keys as wishlist-service-sdk/react.
 *
 * Proxy mode (a Shopify storefront: `window.Shopify.shop`, or `data-app-proxy` on the script
 * tag): every call goes to the shop's app proxy on the page's own origin (`/apps/wishlist`),
 * which signs it; the service takes the shopper's identity from the signed parameters. The
 * owner is always `me`. The theme says whether the shopper is logged in (`data-logged-in`,
 * which the app embed renders from Liquid's `customer`); without it, a `me` read sent without
 * a guest id (it answers only for a logged-in shopper) tells the widget which one it is.
 *
 * A guest's page view asks the service nothing: a guest with no guest id has nothing saved,
 * and a returning guest's list is this browser's copy (`wishlist:guest-list`), kept after
 * every read and change, and read again only when it is a day old or another script changed
 * the guest's items. A guest id is made on the first call that needs one (a change).
 */

import type { GuestItem as SdkGuestItem, Review as SdkReview, ReviewSummary } from 'wishlist-service-sdk'
import type { GUEST_ID_KEY as SDK_GUEST_ID_KEY, GUEST_ITEMS_KEY as SDK_GUEST_ITEMS_KEY } from 'wishlist-service-sdk/react'
import type { ApiError, Kit, Mount, Vars } from './kit.js'
import { en, LOCALES, type Strings } from './strings.js'

interface PageConfig {
  storefrontKey?: string
  apiBase?: string
  customerId?: string
  customerToken?: string
}
interface Item {
  productId: string
}
// The SDK's types and storage keys, imported as types only: checked against the API the SDK
// is generated from, and no byte of the SDK in the widget's scripts.
type GuestItem = SdkGuestItem
type Review = Pick<
  SdkReview,
  'id' | 'helpfulCount' | 'customerName' | 'rating' | 'title' | 'body' | 'verifiedPurchase' | 'replyBody' | 'createdAt'
>
type Summary = Pick<ReviewSummary, 'reviewCount' | 'averageRating' | 'bestRating' | 'worstRating'>

// The same keys as wishlist-service-sdk/react, so a guest keeps one identity across both.
const GUEST_ID_KEY: typeof SDK_GUEST_ID_KEY = 'wishlist:guest-id'
const GUEST_ITEMS_KEY: typeof SDK_GUEST_ITEMS_KEY = 'wishlist:guest-items'
const PRODUCT_ATTR = 'data-wishlist-product-id'
const doc = document
const win = window as Window & { WishlistConfig?: PageConfig; Wishlist?: unknown; Shopify?: { shop?: string } }
const script = (doc.currentScript ?? doc.querySelector('script[data-storefront-key],script[data-app-proxy]')) as HTMLScriptElement | null
const data = (name: string) => script?.getAttribute(`data-${name}`) ?? undefined
const config: PageConfig = win.WishlistConfig ?? {}
const storefrontKey = config.storefrontKey ?? data('storefront-key') ?? ''
const appProxy = data('app-proxy')
// A storefront key given on a Shopify page means the merchant wired the API directly.
const proxy = appProxy !== undefined || (!!win.Shopify?.shop && !storefrontKey)
const apiBase = (
  proxy
    ? new URL(appProxy || '/apps/wishlist', location.origin).href
    : (config.apiBase ?? data('api-base') ?? (script?.src ? new URL(script.src).origin : location.origin))
).replace(/\/+$/, '')
const customerId = config.customerId ?? data('customer-id')
const customerToken = config.customerToken ?? data('customer-token')
let customer = !proxy && !!(customerId && customerToken)
/** Proxy mode without the theme saying who the shopper is: the first read asks. */
const probe = proxy && data('logged-in') !== 'false'

// Chunks (`widget-<name>.js`) sit next to this script, wherever it is served from (the
// service, or a theme app extension's assets on Shopify's CDN).
const chunkBase = script?.src || `${location.origin}/`
const chunks = new Map<string, Promise<unknown>>()
const arrived = new Map<string, (value: unknown) => void>()
;(win as unknown as { __wishlistChunk: (name: string, value: unknown) => void }).__wishlistChunk = (name, value) =>
  arrived.get(name)?.(value)
function chunk<T>(name: string): Promise<T> {
  let loading = chunks.get(name)
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      arrived.set(name, resolve)
      const tag = doc.createElement('script')
      const url = new URL(`widget-${name}.js`, chunkBase)
      url.search = new URL(chunkBase).search
      tag.src = url.href
      tag.async = true
      tag.onerror = () => (chunks.delete(name), reject(new Error(`widget-${name}.js failed to load`)))
      doc.head.append(tag)
    })
    chunks.set(name, loading)
  }
  return loading as Promise<T>
}

// The page's language: the script's data-locale, Shopify's, <html lang>; English when not shipped.
const wanted = data('locale') || (win as { Shopify?: { locale?: string } }).Shopify?.locale || doc.documentElement.lang || 'en'
const language = (tag: string) => tag.toLowerCase().split('-')[0]
const shipped = LOCALES.find((l) => l.toLowerCase() === wanted.toLowerCase()) ?? LOCALES.find((l) => language(l) === language(wanted))
let locale = 'en'
try {
  locale = shipped ? (Intl.getCanonicalLocales(wanted)[0] ?? shipped) : 'en'
} catch {
  locale = shipped ?? 'en'
}
let table: Strings = en
/** English texts a chunk brought for itself (the wishlist page's): the last resort. */
const english: Strings = {}
const strings: Promise<void> = shipped
  ? chunk<Strings>(`locale-${shipped}`).then(
      (t) => void (table = { ...en, ...t }),
      () => {},
    )
  : Promise.resolve()
// Made on first use: a page of hearts alone never needs it (Intl's first objects cost a slow phone tens of milliseconds).
let plural: Intl.PluralRules | undefined
const num = (value: number, options?: Intl.NumberFormatOptions) => new Intl.NumberFormat(locale, options).format(value)
const parsed = new Map<string, Strings>()
const overrides = (json: string | null | undefined): Strings => {
  if (!json) return {}
  let o = parsed.get(json)
  if (!o) {
    try {
      const v: unknown = JSON.parse(json)
      o = v && typeof v === 'object' ? (v as Strings) : {}
    } catch {
      o = {}
    }
    parsed.set(json, o)
  }
  return o
}
/** Merchant overrides (the element's or an ancestor's `data-strings`, then the script's), the locale, English. */
const lookup = (key: string, host?: Element | null): string | undefined => {
  // A blank override (null or "", as a theme setting left empty gives) falls through to the language.
  const given = (v: unknown) => (v === null || v === undefined || v === '' ? undefined : String(v))
  return (
    given(overrides(host?.closest('[data-strings]')?.getAttribute('data-strings'))[key]) ??
    given(overrides(data('strings'))[key]) ??
    table[key] ??
    english[key]
  )
}
/** Why the service refused (or could not be reached), as a sentence in the page's language. */
function why(err: unknown, host?: Element | null): string {
  const { code, status } = (err ?? {}) as Partial<ApiError>
  return t(
    status === undefined
      ? 'error.offline'
      : status === 429
        ? 'error.rateLimited'
        : code === 'ITEM_LIMIT' || code === 'WISHLIST_LIMIT'
          ? 'error.full'
          : status === 403
            ? 'error.plan'
            : status === 400
              ? 'error.invalid'
              : 'error.retry',
    {},
    host,
  )
}
function t(key: string, vars: Vars = {}, host?: Element | null): string {
  if (typeof vars.count === 'number') {
    const form = `${key}.${(plural ??= new Intl.PluralRules(locale)).select(vars.count)}`
    key = lookup(form, host) === undefined ? `${key}.other` : form
  }
  return (lookup(key, host) ?? key).replace(/\{(\w+)\}/g, (m, k: string) => {
    const v = vars[k]
    return v === undefined ? m : typeof v === 'number' ? num(v) : v
  })
}

let store: Storage | undefined
try {
  store = localStorage
  store.getItem(GUEST_ID_KEY)
} catch {
  store = undefined
}
const read = (key: string) => store?.getItem(key) ?? null
const write = (key: string, value: string | null) => {
  try {
    if (value === null) store?.removeItem(key)
    else store?.setItem(key, value)
  } catch {
    /* storage full or blocked: the server still has the state */
  }
}
const guestItems = (): GuestItem[] => {
  try {
    const v: unknown = JSON.parse(read(GUEST_ITEMS_KEY) ?? '[]')
    return Array.isArray(v) ? (v as GuestItem[]) : []
  } catch {
    return []
  }
}

/** The guest id in this browser's storage now: another script of the page (the React hooks) may have made it since this one started. */
const storedGuest = () => {
  const stored = read(GUEST_ID_KEY)
  return stored && /^[\w-]{8,64}$/.test(stored) ? stored : null
}
/** The guest id this browser kept from earlier pages (what a merge names). */
const keptGuest = storedGuest()
const guest = () => {
  const kept = storedGuest()
  if (kept) return kept
  // 128 random bits: a guest id is a bearer secret (a merge naming it takes the items).
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  const id = `g_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`
  write(GUEST_ID_KEY, id)
  return id
}
// While the proxy is asked who the shopper is, no guest id is sent (the read would answer for the guest).
let guestId = probe || customer ? null : keptGuest
const owner = () => (proxy ? 'me' : encodeURIComponent(customer ? (customerId ?? '') : (guestId ??= guest())))

/** A call with the page's credentials; a guest's change or wishlist read (`asGuest`) gets a guest id, made if need be. */
async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  asGuest = method !== 'GET' || path.startsWith('/v1/wishlists/'),
  /** Past the browser's HTTP cache (the public reviews are cacheable for 5 minutes): after a vote or a submission. */
  fresh = false,
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (!proxy) headers['x-storefront-key'] = storefrontKey
  if (customer) {
    if (!proxy) headers.authorization = `Bearer ${customerToken}`
  } else if (guestId || asGuest) headers['x-guest-id'] = guestId ??= guest()
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(apiBase + path, {
    method,
    headers,
    body: body === undefined ? null : JSON.stringify(body),
    ...(fresh ? { cache: 'no-cache' as const } : {}),
  })
  const json = (await res.json().catch(() => ({}))) as {
    ok?: boolean
    data?: T
    error?: { code?: string; message?: string; details?: ApiError['details'] }
  }
  if (!res.ok)
    throw Object.assign(new Error(json.error?.message ?? `HTTP ${res.status}`), {
      code: json.error?.code ?? 'HTTP_ERROR',
      status: res.status,
      details: json.error?.details,
    })
  return (json.ok ? json.data : json) as T
}

interface Page {
  items: Item[]
  has_more: boolean
}
const pageOf = (offset: number, asGuest?: boolean) =>
  api<Page>('GET', `/v1/wishlists/${owner()}?limit=200&offset=${offset}`, undefined, asGuest)
/**
 * Proxy mode, unless the theme said the shopper is a guest: the first page of a logged-in
 * shopper's wishlist, or undefined for a guest (the proxied `me` read without a guest id is
 * refused), who then uses the guest id this browser kept, if any. Writes wait for it.
 */
let ready: Promise<Page | undefined> = Promise.resolve(undefined)
if (probe)
  ready = pageOf(0, false).then(
    (page) => ((customer = true), page),
    () => void (guestId = keptGuest),
  )

const saved = new Set<string>()
/**
 * The shopper's latest change per product, and when its request settled (`tick`; Infinity
 * while in flight): a load sent before it settled may not show it, so it is laid over the
 * load. One product's requests go one after the other (`lanes`), in click order.
 */
const recent = new Map<string, { on: boolean; settled: number }>()
const lanes = new Map<string, Promise<unknown>>()
let tick = 0

const LIST_KEY = 'wishlist:guest-list'
/** How long this browser's copy of a guest's list stands in for the service's. */
const LIST_MAX_AGE = 24 * 60 * 60 * 1000
/** This browser's copy of a guest's list: whose, when the service last said it, the guest items it went with, the products. */
interface KeptList {
  guest: string
  at: number
  items: string | null
  ids: string[]
}
/** When the service last told this page the guest's whole list (undefined until the first load). */
let listedAt: number | undefined
function keptList(): KeptList | undefined {
  try {
    const kept = JSON.parse(read(LIST_KEY) ?? 'null') as KeptList | null
    const age = Date.now() - (kept?.at ?? 0)
    // Guest items changed since (the React hooks, a removal on the wishlist page): the copy may be stale.
    if (kept?.guest === guestId && age >= 0 && age < LIST_MAX_AGE && kept.items === read(GUEST_ITEMS_KEY) && Array.isArray(kept.ids))
      return kept
  } catch {
    /* unreadable: ask the service */
  }
  return undefined
}
/** Keeps the guest's list as this page knows it, once no change is on its way (the hearts show only settled state then). */
function keepList(): void {
  if (customer || !guestId || listedAt === undefined || [...recent.values()].some((c) => c.settled === Infinity)) return
  write(LIST_KEY, JSON.stringify({ guest: guestId, at: listedAt, items: read(GUEST_ITEMS_KEY), ids: [...saved] } satisfies KeptList))
}
const emit = (name: string, detail: unknown) => doc.dispatchEvent(new CustomEvent(`wishlist:${name}`, { detail }))

function paint(): void {
  for (const host of doc.querySelectorAll<HTMLElement>(`[${PRODUCT_ATTR}]`)) {
    const id = host.getAttribute(PRODUCT_ATTR) ?? ''
    let button = host.querySelector<HTMLButtonElement>('button.wl-heart')
    if (!button) {
      button = doc.createElement('button')
      button.type = 'button'
      button.className = 'wl-heart'
      button.innerHTML =
        '<svg viewBox="0 0 24 24" width="24" height="24" aria-hidden="true" focusable="false"><path d="M12 21s-7.5-4.6-9.6-9.2C.9 8.4 3 4.5 6.8 4.5c2.1 0 3.6 1.2 5.2 3 1.6-1.8 3.1-3 5.2-3 3.8 0 5.9 3.9 4.4 7.3C19.5 16.4 12 21 12 21z"/></svg>'
      button.addEventListener('click', () => void toggle(host))
      host.append(button)
    }
    const on = saved.has(id)
    const title = host.getAttribute('data-wishlist-product-title') ?? t('heart.product', {}, host)
    button.setAttribute('aria-pressed', String(on))
    button.setAttribute('aria-label', t(on ? 'heart.remove' : 'heart.add', { title }, host))
    button.title = button.getAttribute('aria-label') ?? ''
  }
  const count = String(saved.size)
  for (const badge of doc.querySelectorAll<HTMLElement>('[data-wishlist-count]')) {
    // Only real changes: the MutationObserver below would see a rewrite of the same text.
    if (badge.textContent !== count) badge.textContent = count
    badge.setAttribute('data-wishlist-count', count)
  }
}

async function toggle(host: HTMLElement): Promise<void> {
  const id = host.getAttribute(PRODUCT_ATTR) ?? ''
  const adding = !saved.has(id)
  const handle = host.getAttribute('data-wishlist-handle') ?? undefined
  const variant = host.getAttribute('data-wishlist-variant-id') ?? undefined
  // Optimistic: flip at once, roll back if the server refuses.
  if (adding) saved.add(id)
  else saved.delete(id)
  const change = { on: adding, settled: Infinity }
  recent.set(id, change)
  host.removeAttribute('data-wishlist-error')
  paint()
  const call = () =>
    adding
      ? api('POST', `/v1/wishlists/${owner()}/items`, {
          product_id: id,
          ...(variant ? { variant_id: variant } : {}),
          ...(handle ? { handle } : {}),
        })
      : api('DELETE', `/v1/wishlists/${owner()}/items/${encodeURIComponent(id)}`)
  const run = (lanes.get(id) ?? ready).then(call)
  lanes.set(
    id,
    run.catch(() => {}),
  )
  try {
    await run
    change.settled = ++tick
    if (!customer) {
      const rest = guestItems().filter((i) => i.product_id !== id)
      const item: GuestItem = {
        product_id: id,
        added_at: new Date().toISOString(),
        ...(variant ? { variant_id: variant } : {}),
        ...(handle ? { handle } : {}),
      }
      write(GUEST_ITEMS_KEY, JSON.stringify(adding ? [item, ...rest] : rest))
    }
    keepList()
    if (doc.querySelector('[data-wishlist-count]')) announce(t('count.announce', { count: saved.size }))
    emit('change', { productId: id, saved: adding, count: saved.size })
  } catch (err) {
    if (adding) saved.delete(id)
    else saved.add(id)
    Object.assign(change, { on: !adding, settled: ++tick })
    keepList()
    host.setAttribute('data-wishlist-error', (err as { code?: string }).code ?? 'ERROR')
    paint()
    // The heart flipped back: say why, in the page's language.
    const title = host.getAttribute('data-wishlist-product-title') ?? t('heart.product', {}, host)
    note(host, `${t(adding ? 'heart.addFailed' : 'heart.removeFailed', { title }, host)} ${why(err, host)}`)
    emit('error', { productId: id, error: err })
  }
}

/**
 * Guest items of this browser are merged once into the customer on login, then forgotten.
 * Returns whether it merged (a page read before is then out of date).
 */
async function mergeGuest(): Promise<boolean> {
  const items = guestItems()
  if (!customer || !keptGuest) return false
  write(LIST_KEY, null)
  if (!items.length) {
    write(GUEST_ID_KEY, null)
    return false
  }
  const registry = globalThis as unknown as Record<symbol, Map<string, Promise<unknown>> | undefined>
  const merges = (registry[Symbol.for('wishlist.merges')] ??= new Map())
  const key = `${proxy ? 'me' : customerId}|${keptGuest}`
  let pending = merges.get(key)
  if (!pending) {
    pending = api('POST', `/v1/wishlists/${owner()}/merge`, { guest_items: items, guest_id: keptGuest }).then(() => {
      write(GUEST_ITEMS_KEY, null)
      write(GUEST_ID_KEY, null)
    })
    merges.set(key, pending)
  }
  await pending.catch((err: unknown) => emit('error', { error: err }))
  return true
}

/** Every page of the list (200 items each, up to the 2,500-item limit): hearts and the count know every saved product. */
async function readList(first: Page | undefined): Promise<string[]> {
  const ids: string[] = []
  for (let more = true; more;) {
    const page = first ?? (await pageOf(ids.length))
    first = undefined
    for (const item of page.items) ids.push(item.productId)
    more = page.has_more && page.items.length > 0
  }
  return ids
}

/** A guest's list, without a request when it can be: no guest id, nothing saved; this browser's copy while it stands. */
async function guestList(fresh: boolean): Promise<string[]> {
  guestId ??= storedGuest()
  const kept = fresh ? undefined : keptList()
  if (kept) return ((listedAt = kept.at), kept.ids)
  const asked = Date.now()
  const ids = guestId ? await readList(undefined) : []
  listedAt = asked
  return ids
}

/** Reads the list and paints; `fresh`: a guest's list from the service, not this browser's copy. */
async function load(fresh = false): Promise<void> {
  const sent = tick
  await strings
  let first = await ready
  ready = Promise.resolve(undefined)
  if (await mergeGuest()) first = undefined
  try {
    const ids = customer ? await readList(first) : await guestList(fresh)
    saved.clear()
    for (const id of ids) saved.add(id)
    for (const [id, change] of recent) {
      if (change.settled <= sent) recent.delete(id)
      else if (change.on) saved.add(id)
      else saved.delete(id)
    }
    keepList()
  } catch (err) {
    emit('error', { error: err })
  }
  paint()
}

const el = <K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] => {
  const node = doc.createElement(tag)
  node.className = className
  if (text !== undefined) node.textContent = text
  return node
}
const stars = (rating: number, label: string) => {
  const r = Math.round(rating)
  // Filled and empty stars differ in shape, not only colour; read as one image with a text label.
  const node = el('span', 'wl-stars', '★★★★★'.slice(0, r) + '☆☆☆☆☆'.slice(0, 5 - r))
  node.setAttribute('role', 'img')
  node.setAttribute('aria-label', label)
  return node
}
const rated = (rating: number, host?: Element | null) => t('reviews.rated', { rating: num(rating, { maximumFractionDigits: 1 }) }, host)

/** Reviews this browser found helpful (what the Helpful buttons show as pressed). */
const HELPFUL_KEY = 'wishlist:helpful'
const helpfulVotes = (): number[] => {
  try {
    const v: unknown = JSON.parse(read(HELPFUL_KEY) ?? '[]')
    return Array.isArray(v) ? (v as number[]) : []
  } catch {
    return []
  }
}

function helpfulButton(r: Review, host: HTMLElement): HTMLElement {
  const box = el('div', 'wl-helpful')
  const button = el('button', 'wl-helpful-button', t('reviews.helpful', {}, host))
  button.type = 'button'
  // Its name says which review it is for ("Helpful, review by Ann: Warm hat"), its visible text first.
  const of = t(r.title ? 'reviews.helpfulOf' : 'reviews.helpfulOfUntitled', { name: r.customerName, title: r.title }, host)
  button.setAttribute('aria-label', `${button.textContent}, ${of}`)
  const count = el('span', 'wl-helpful-count')
  // Why a vote did not count, next to its button (and said through the live region).
  const reason = el('span', 'wl-helpful-error')
  let n = r.helpfulCount
  const show = (on: boolean, shown: number) => {
    button.setAttribute('aria-pressed', String(on))
    count.textContent = shown > 0 ? t('reviews.helpfulCount', { count: shown }, host) : ''
  }
  show(helpfulVotes().includes(r.id), n)
  button.addEventListener('click', () => {
    // While the vote is sent the button keeps the focus (aria-disabled, not disabled) and ignores clicks.
    if (button.getAttribute('aria-disabled') === 'true') return
    const on = button.getAttribute('aria-pressed') !== 'true'
    button.setAttribute('aria-disabled', 'true')
    reason.textContent = ''
    // Optimistic: pressed (or not) at once, rolled back if the service refuses.
    show(on, Math.max(0, n + (on ? 1 : -1)))
    void ready
      .then(() => api<{ helpfulCount: number }>(on ? 'PUT' : 'DELETE', `/api/v1/reviews/${r.id}/helpful`))
      .then(
        (res) => {
          const votes = helpfulVotes().filter((v) => v !== r.id)
          write(HELPFUL_KEY, JSON.stringify(on ? [...votes, r.id].slice(-200) : votes))
          show(on, (n = res.helpfulCount))
        },
        (err: ApiError) => {
          show(!on, n)
          // The service's cap on one address's votes for a review lasts a day: said as such, not "in a moment".
          reason.textContent =
            err.code === 'RATE_LIMITED'
              ? t('reviews.helpfulLimited', {}, host)
              : `${t('reviews.helpfulFailed', {}, host)} ${why(err, host)}`
          urgent(reason.textContent)
          emit('error', { error: err })
        },
      )
      .finally(() => button.removeAttribute('aria-disabled'))
  })
  box.append(button, ' ', count, reason)
  return box
}

/** The latest read of each reviews block: an earlier one answering later is dropped. */
const reads = new WeakMap<HTMLElement, number>()

/**
 * Reads and draws a reviews block; `again`: once more, past the browser's cache (after a
 * submission, or the shopper's retry after a failed read). Focus inside the block stays inside.
 */
async function renderReviews(host: HTMLElement, again = false): Promise<void> {
  if (host.getAttribute('data-reviews-state') && !again) return
  host.setAttribute('data-reviews-state', 'loading')
  const mine = (reads.get(host) ?? 0) + 1
  reads.set(host, mine)
  const id = encodeURIComponent(host.getAttribute('data-reviews-product-id') ?? '')
  const perPage = Number(host.getAttribute('data-reviews-per-page') ?? 5)
  const parts = host.getAttribute('data-reviews-show')?.split(/\s+/)
  const shows = (part: string) => !parts || parts.includes(part)
  try {
    const [summary, page] = await Promise.all([
      api<Summary>('GET', `/api/v1/products/${id}/reviews/summary`, undefined, undefined, again),
      api<{ data: Review[] }>('GET', `/api/v1/products/${id}/reviews?per_page=${perPage}`, undefined, undefined, again),
      strings,
    ])
    if (reads.get(host) !== mine) return
    const box = el('div', 'wl-reviews')
    const head = el('p', 'wl-summary')
    if (summary.averageRating === null || summary.reviewCount === 0) head.append(el('span', 'wl-none', t('reviews.none', {}, host)))
    else {
      const avg = summary.averageRating
      head.append(
        stars(avg, rated(avg, host)),
        ` ${num(avg, { minimumFractionDigits: 1, maximumFractionDigits: 1 })} · ${t('reviews.count', { count: summary.reviewCount }, host)}`,
      )
    }
    if (shows('summary')) box.append(head)
    const list = el('ul', 'wl-review-list')
    const date = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' })
    for (const r of page.data) {
      const li = el('li', 'wl-review')
      li.append(stars(r.rating, rated(r.rating, host)))
      if (r.title) li.append(' ', el('strong', 'wl-review-title', r.title))
      li.append(el('p', 'wl-review-body', r.body))
      li.append(
        el(
          'small',
          'wl-review-meta',
          `${r.customerName}${r.verifiedPurchase ? ` · ${t('reviews.verified', {}, host)}` : ''} · ${date.format(new Date(r.createdAt))}`,
        ),
      )
      if (r.replyBody) {
        const reply = el('div', 'wl-review-reply')
        reply.append(el('strong', 'wl-review-reply-label', t('reviews.reply', {}, host)), el('p', 'wl-review-reply-body', r.replyBody))
        li.append(reply)
      }
      if (shows('helpful')) li.append(helpfulButton(r, host))
      list.append(li)
    }
    if (shows('list') && page.data.length) box.append(list)
    if (summary.reviewCount > 0) {
      const ld = doc.createElement('script')
      ld.type = 'application/ld+json'
      ld.textContent = JSON.stringify({
        '@context': 'https://schema.org',
        '@type': 'Product',
        name: host.getAttribute('data-reviews-product-name') ?? undefined,
        aggregateRating: {
          '@type': 'AggregateRating',
          ratingValue: summary.averageRating,
          reviewCount: summary.reviewCount,
          bestRating: summary.bestRating,
          worstRating: summary.worstRating,
        },
      }).replace(/</g, '\\u003c')
      box.append(ld)
    }
    const focused = host.contains(doc.activeElement)
    host.replaceChildren(box)
    host.setAttribute('data-reviews-state', 'ready')
    if (focused) {
      box.tabIndex = -1
      box.focus()
    }
  } catch (err) {
    await strings
    if (reads.get(host) !== mine) return
    // Said in place, where the reviews would be, with a way to try again.
    const text = `${t('reviews.failed', {}, host)} ${why(err, host)}`
    const box = el('div', 'wl-reviews-error')
    const retry = el('button', 'wl-reviews-retry', t('reviews.retry', {}, host))
    retry.type = 'button'
    retry.addEventListener('click', () => {
      if (retry.getAttribute('aria-disabled') === 'true') return
      retry.setAttribute('aria-disabled', 'true')
      void renderReviews(host, true)
    })
    box.append(el('p', 'wl-reviews-failed', text), retry)
    const focused = host.contains(doc.activeElement)
    host.replaceChildren(box)
    host.setAttribute('data-reviews-state', 'error')
    if (focused) retry.focus()
    announce(text)
    emit('error', { error: err })
  }
}

/**
 * The live regions: polite (what changed: the count after a toggle, a form's result) and
 * assertive (what was refused). They are in the document from the script's start, empty:
 * screen readers announce a change of a region they already know, not a region created and
 * filled at once. A message is written a moment after the region is emptied, so the same
 * text twice is announced twice.
 */
const HIDDEN = 'position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0'
const region = (role: string, politeness: string) => {
  const node = el('div', 'wl-vh')
  node.setAttribute('role', role)
  node.setAttribute('aria-live', politeness)
  node.setAttribute('aria-atomic', 'true')
  node.setAttribute('data-wishlist-live', politeness)
  // Hidden on its own: the widget's stylesheet arrives with the page's work, later.
  node.style.cssText = HIDDEN
  let timer: ReturnType<typeof setTimeout> | undefined
  return {
    node,
    say(text: string) {
      clearTimeout(timer)
      node.textContent = ''
      timer = setTimeout(() => (node.textContent = text), 100)
    },
  }
}
const polite = region('status', 'polite')
const assertive = region('alert', 'assertive')
const attach = () => doc.body.append(polite.node, assertive.node)
if (doc.body) attach()
else doc.addEventListener('DOMContentLoaded', attach, { once: true })
const announce = polite.say
const urgent = assertive.say
/**
 * A refused heart also shows why: the assertive region itself appears next to the heart (below
 * it, or above it near the viewport's bottom; never over it, never wider than the screen; clicks
 * go through it) until the shopper's next key or click, or 10 s.
 */
let noteTimer: ReturnType<typeof setTimeout> | undefined
function note(host: Element, text: string): void {
  const r = host.getBoundingClientRect()
  const box = assertive.node
  const hide = () => {
    box.className = 'wl-vh'
    box.style.cssText = HIDDEN
    doc.removeEventListener('keydown', hide, true)
    doc.removeEventListener('pointerdown', hide, true)
  }
  box.className = ''
  box.style.cssText =
    `position:fixed;z-index:2147483647;left:${Math.max(8, Math.min(r.left, innerWidth - 288))}px;max-width:min(280px,calc(100vw - 16px));` +
    `${r.bottom + 96 < innerHeight ? `top:${r.bottom + 6}` : `bottom:${innerHeight - r.top + 6}`}px;padding:8px 12px;border-radius:6px;` +
    'background:#1f1f1f;color:#fff;font:14px/1.4 system-ui,sans-serif;box-shadow:0 2px 8px rgba(0,0,0,.3);pointer-events:none'
  urgent(text)
  doc.addEventListener('keydown', hide, true)
  doc.addEventListener('pointerdown', hide, true)
  clearTimeout(noteTimer)
  noteTimer = setTimeout(hide, 10_000)
}

const kit: Kit = {
  api,
  ready: () => ready.then(() => strings),
  customer: () => customer,
  t,
  num,
  get locale() {
    return locale
  },
  announce,
  alert: urgent,
  why,
  english: (texts) => void Object.assign(english, texts),
  refresh: () => load(true),
  reviews: (productId) =>
    Promise.all(
      [...doc.querySelectorAll<HTMLElement>('[data-reviews-product-id]')]
        .filter((host) => host.getAttribute('data-reviews-product-id') === productId)
        .map((host) => renderReviews(host, true)),
    ).then(() => {}),
  stars,
  forget: (productId) => write(GUEST_ITEMS_KEY, JSON.stringify(guestItems().filter((i) => i.product_id !== productId))),
}

/** Lazy parts: the review form opens on its button; the guest wishlist page and the notification form fill their containers. */
function mount(host: HTMLElement, name: string, opener?: HTMLElement | null): void {
  if (host.hasAttribute('data-wishlist-bound')) return
  host.setAttribute('data-wishlist-bound', '')
  const start = () =>
    void chunk<Mount>(name).then(
      (fn) => fn(kit, host),
      (err: unknown) => emit('error', { error: err }),
    )
  if (!opener) return start()
  opener.addEventListener('click', start, { once: true })
}

/**
 * Reviews are read and drawn once their element comes within 200 px of the viewport: the
 * reviews below a product page's fold cost neither a request nor main-thread time until the
 * shopper scrolls towards them (search engines' renderers use a viewport as tall as the page).
 */
const nearby =
  typeof IntersectionObserver === 'function'
    ? new IntersectionObserver(
        (entries) => {
          for (const entry of entries) {
            if (!entry.isIntersecting) continue
            nearby?.unobserve(entry.target)
            void renderReviews(entry.target as HTMLElement)
          }
        },
        { rootMargin: '200px 0px' },
      )
    : undefined

function scan(): void {
  paint()
  for (const host of doc.querySelectorAll<HTMLElement>('[data-reviews-product-id]:not([data-reviews-state])'))
    if (nearby) nearby.observe(host)
    else void renderReviews(host)
  for (const host of doc.querySelectorAll<HTMLElement>('[data-wishlist-review-form]')) {
    let opener = host.querySelector<HTMLElement>('[data-wishlist-review-open]')
    if (!opener && !host.hasAttribute('data-wishlist-bound')) {
      const made = (opener = el('button', 'wl-open', t('form.open', {}, host)))
      // Labelled again once the page's language has arrived.
      void strings.then(() => (made.textContent = t('form.open', {}, host)))
      opener.setAttribute('type', 'button')
      opener.setAttribute('data-wishlist-review-open', '')
      host.append(opener)
    }
    mount(host, 'review-form', opener)
  }
  for (const host of doc.querySelectorAll<HTMLElement>('[data-wishlist-guest-list]')) mount(host, 'wishlist-page')
  for (const host of doc.querySelectorAll<HTMLElement>('[data-wishlist-notify-form]')) mount(host, 'notify-form')
}

const style = el('style', '')
// Sizes match the recommended placeholder CSS (README) so nothing moves when the widget runs.
// The host clips (overflow:hidden), so its baseline stays its bottom edge whether empty or holding
// the button: an inline-block host on a line of text does not move when the heart appears.
style.textContent =
  '[data-wishlist-product-id]{overflow:hidden}.wl-heart{all:unset;box-sizing:border-box;display:inline-flex;align-items:center;justify-content:center;width:100%;height:100%;min-width:40px;min-height:40px;cursor:pointer;border-radius:50%}' +
  '.wl-heart svg{fill:none;stroke:currentColor;stroke-width:2}.wl-heart[aria-pressed=true] svg{fill:var(--wishlist-heart-color,#c8102e);stroke:var(--wishlist-heart-color,#c8102e)}' +
  '.wl-heart:focus-visible{outline:2px solid #1a5fb4;outline-offset:-3px}.wl-review-list{list-style:none;padding:0}.wl-stars{color:var(--wishlist-star-color,#8a5a00);letter-spacing:.05em}' +
  '.wl-review-reply{margin:.25em 0 0 1em;padding-left:.75em;border-left:3px solid #ddd}.wl-review-reply p{margin:.25em 0}' +
  '.wl-vh{position:absolute!important;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}' +
  '.wl-helpful-button[aria-pressed=true]{font-weight:bold}.wl-helpful-button[aria-pressed=true]:before{content:"✓ "}' +
  '.wl-helpful-button[aria-disabled=true]{cursor:progress}.wl-helpful-error{display:block}.wl-helpful-error,.wl-reviews-failed{color:#b00020}' +
  'html:has(.wishlist-launcher){scroll-padding-bottom:5.5rem}.wishlist-launcher.wl-aside{opacity:0;pointer-events:none}'

/**
 * The launcher (the app embed's fixed wishlist button) never hides the control that has focus:
 * the page scrolls focused controls clear of it (scroll-padding above), and where it cannot (the
 * page's end), the launcher steps aside while a control it would cover has focus.
 */
function aside(): void {
  const launcher = doc.querySelector('.wishlist-launcher')
  const focused = doc.activeElement
  if (!launcher) return
  launcher.classList.remove('wl-aside')
  if (!focused || focused === doc.body || launcher.contains(focused)) return
  const a = launcher.getBoundingClientRect()
  const b = focused.getBoundingClientRect()
  if (b.right > a.left && b.left < a.right && b.bottom > a.top && b.top < a.bottom) launcher.classList.add('wl-aside')
}
let asideQueued = false
const asideSoon = () => {
  if (asideQueued) return
  asideQueued = true
  requestAnimationFrame(() => ((asideQueued = false), aside()))
}

let queued = false
const observer = new MutationObserver(() => {
  if (queued) return
  queued = true
  queueMicrotask(() => {
    queued = false
    scan()
  })
})

/**
 * The page's work starts once the page has loaded (its images painted), or 3 s after this
 * script ran if it has not by then: the shop's own content and largest image come first, and
 * the work is a task of its own rather than part of this script's evaluation (two short tasks
 * rather than one long one on a slow phone). The hearts' space is reserved meanwhile.
 */
const started = new Promise<void>((resolve) => {
  if (doc.readyState === 'complete') return void setTimeout(resolve)
  win.addEventListener('load', () => resolve(), { once: true })
  setTimeout(resolve, 3000)
})
// `ready` settles once the first load (and any guest merge) has painted the hearts. Nothing is
// drawn before the page's language has arrived: a heart is never labelled in English on a page
// in another language (a slow language chunk delays the hearts, never their words).
win.Wishlist = {
  refresh: () => load(true),
  ready: Promise.all([started, strings]).then(() => {
    doc.head.append(style)
    doc.addEventListener('focusin', asideSoon)
    doc.addEventListener('focusout', asideSoon)
    win.addEventListener('scroll', asideSoon, { passive: true })
    win.addEventListener('resize', asideSoon, { passive: true })
    observer.observe(doc.documentElement, { childList: true, subtree: true })
    scan()
    return load()
  }),
  scan,
  has: (id: string) => saved.has(id),
  get count() {
    return saved.size
  },
}
