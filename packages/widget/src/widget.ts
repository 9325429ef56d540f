/**
 * The storefront widget: one async <script> turns `[data-wishlist-product-id]` elements into
 * heart toggles, fills `[data-wishlist-count]` badges and renders reviews where
 * `[data-reviews-product-id]` asks. No framework; all text goes through textContent.
 * Guest identity and guest items use the same localStorage keys as wishlist-service-sdk/react.
 *
 * Proxy mode (a Shopify storefront: `window.Shopify.shop`, or `data-app-proxy` on the script
 * tag): every call goes to the shop's app proxy on the page's own origin (`/apps/wishlist`),
 * which signs it; the service takes the shopper's identity from the signed parameters. The
 * owner is always `me`; a `me` read sent without a guest id answers only for a logged-in
 * shopper, which is how the widget learns which one it is.
 */

interface PageConfig {
  storefrontKey?: string
  apiBase?: string
  customerId?: string
  customerToken?: string
}
interface Item {
  productId: string
}
interface GuestItem {
  product_id: string
  handle?: string
  added_at?: string
}
interface Review {
  id: number
  customerName: string
  rating: number
  title: string | null
  body: string
  verifiedPurchase: boolean
  replyBody: string | null
  createdAt: string
}
interface Summary {
  reviewCount: number
  averageRating: number | null
  bestRating: number
  worstRating: number
}

const GUEST_ID_KEY = 'wishlist:guest-id'
const GUEST_ITEMS_KEY = 'wishlist:guest-items'
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
  proxy ? new URL(appProxy || '/apps/wishlist', location.origin).href : (config.apiBase ?? data('api-base') ?? (script?.src ? new URL(script.src).origin : location.origin))
).replace(/\/+$/, '')
const customerId = config.customerId ?? data('customer-id')
const customerToken = config.customerToken ?? data('customer-token')
let customer = !proxy && !!(customerId && customerToken)

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

const stored = read(GUEST_ID_KEY)
/** The guest id this browser kept from earlier pages (what a merge names). */
const keptGuest = stored && /^[\w-]{8,64}$/.test(stored) ? stored : null
const guest = () => {
  if (keptGuest) return keptGuest
  // 128 random bits: a guest id is a bearer secret (a merge naming it takes the items).
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  const id = `g_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`
  write(GUEST_ID_KEY, id)
  return id
}
// In proxy mode the guest id is sent only once the proxy has said the shopper is not logged in.
let guestId = proxy ? null : customer ? keptGuest : guest()
const owner = proxy ? 'me' : encodeURIComponent((customer ? customerId : guestId) ?? '')

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (!proxy) headers['x-storefront-key'] = storefrontKey
  if (customer) {
    if (!proxy) headers.authorization = `Bearer ${customerToken}`
  } else if (guestId) headers['x-guest-id'] = guestId
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(apiBase + path, { method, headers, body: body === undefined ? null : JSON.stringify(body) })
  const json = (await res.json().catch(() => ({}))) as { ok?: boolean; data?: T; error?: { code?: string; message?: string } }
  if (!res.ok) throw Object.assign(new Error(json.error?.message ?? `HTTP ${res.status}`), { code: json.error?.code ?? 'HTTP_ERROR', status: res.status })
  return (json.ok ? json.data : json) as T
}

interface Page {
  items: Item[]
  has_more: boolean
}
const pageOf = (offset: number) => api<Page>('GET', `/v1/wishlists/${owner}?limit=200&offset=${offset}`)
/**
 * Proxy mode: the first page of a logged-in shopper's wishlist, or undefined for a guest (the
 * proxied `me` read without a guest id is refused), who then gets a guest id. Writes wait for it.
 */
let ready: Promise<Page | undefined> = Promise.resolve(undefined)
if (proxy)
  ready = pageOf(0).then(
    (page) => ((customer = true), page),
    () => void (guestId = guest()),
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
    const title = host.getAttribute('data-wishlist-product-title') ?? 'this product'
    button.setAttribute('aria-pressed', String(on))
    button.setAttribute('aria-label', on ? `Remove ${title} from wishlist` : `Add ${title} to wishlist`)
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
      ? api('POST', `/v1/wishlists/${owner}/items`, { product_id: id, ...(variant ? { variant_id: variant } : {}), ...(handle ? { handle } : {}) })
      : api('DELETE', `/v1/wishlists/${owner}/items/${encodeURIComponent(id)}`)
  const run = (lanes.get(id) ?? ready).then(call)
  lanes.set(id, run.catch(() => {}))
  try {
    await run
    change.settled = ++tick
    if (!customer) {
      const rest = guestItems().filter((i) => i.product_id !== id)
      write(GUEST_ITEMS_KEY, JSON.stringify(adding ? [{ product_id: id, added_at: new Date().toISOString(), ...(handle ? { handle } : {}) }, ...rest] : rest))
    }
    emit('change', { productId: id, saved: adding, count: saved.size })
  } catch (err) {
    if (adding) saved.delete(id)
    else saved.add(id)
    Object.assign(change, { on: !adding, settled: ++tick })
    host.setAttribute('data-wishlist-error', (err as { code?: string }).code ?? 'ERROR')
    paint()
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
  if (!items.length) {
    write(GUEST_ID_KEY, null)
    return false
  }
  const registry = globalThis as unknown as Record<symbol, Map<string, Promise<unknown>> | undefined>
  const merges = (registry[Symbol.for('wishlist.merges')] ??= new Map())
  const key = `${proxy ? owner : customerId}|${keptGuest}`
  let pending = merges.get(key)
  if (!pending) {
    pending = api('POST', `/v1/wishlists/${owner}/merge`, { guest_items: items, guest_id: keptGuest }).then(() => {
      write(GUEST_ITEMS_KEY, null)
      write(GUEST_ID_KEY, null)
    })
    merges.set(key, pending)
  }
  await pending.catch((err: unknown) => emit('error', { error: err }))
  return true
}

async function load(): Promise<void> {
  const sent = tick
  let first = await ready
  ready = Promise.resolve(undefined)
  if (await mergeGuest()) first = undefined
  try {
    // Every page (200 items each, up to the 2,500-item limit): hearts and the count know every saved product.
    const ids: string[] = []
    for (let more = true; more; ) {
      const page = first ?? (await pageOf(ids.length))
      first = undefined
      for (const item of page.items) ids.push(item.productId)
      more = page.has_more && page.items.length > 0
    }
    saved.clear()
    for (const id of ids) saved.add(id)
    for (const [id, change] of recent) {
      if (change.settled <= sent) recent.delete(id)
      else if (change.on) saved.add(id)
      else saved.delete(id)
    }
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
const stars = (rating: number) => '★★★★★'.slice(0, Math.round(rating)) + '☆☆☆☆☆'.slice(0, 5 - Math.round(rating))

async function renderReviews(host: HTMLElement): Promise<void> {
  if (host.getAttribute('data-reviews-state')) return
  host.setAttribute('data-reviews-state', 'loading')
  const id = encodeURIComponent(host.getAttribute('data-reviews-product-id') ?? '')
  const perPage = Number(host.getAttribute('data-reviews-per-page') ?? 5)
  try {
    const [summary, page] = await Promise.all([
      api<Summary>('GET', `/api/v1/products/${id}/reviews/summary`),
      api<{ data: Review[] }>('GET', `/api/v1/products/${id}/reviews?per_page=${perPage}`),
    ])
    const box = el('div', 'wl-reviews')
    const head = el('div', 'wl-summary')
    const avg = summary.averageRating ?? 0
    head.append(el('span', 'wl-stars', stars(avg)), ` ${summary.averageRating === null ? '–' : avg.toFixed(1)} · ${summary.reviewCount} review${summary.reviewCount === 1 ? '' : 's'}`)
    head.setAttribute('aria-label', `Rated ${avg.toFixed(1)} out of 5 from ${summary.reviewCount} reviews`)
    box.append(head)
    const list = el('ul', 'wl-review-list')
    for (const r of page.data) {
      const li = el('li', 'wl-review')
      const stars_ = el('span', 'wl-stars', stars(r.rating))
      stars_.setAttribute('aria-label', `${r.rating} out of 5`)
      li.append(stars_)
      if (r.title) li.append(el('strong', 'wl-review-title', ` ${r.title}`))
      li.append(el('p', 'wl-review-body', r.body))
      li.append(el('small', 'wl-review-meta', `${r.customerName}${r.verifiedPurchase ? ' · Verified purchase' : ''} · ${r.createdAt.slice(0, 10)}`))
      if (r.replyBody) {
        const reply = el('div', 'wl-review-reply')
        reply.append(el('strong', 'wl-review-reply-label', 'Reply from the shop'), el('p', 'wl-review-reply-body', r.replyBody))
        li.append(reply)
      }
      list.append(li)
    }
    box.append(list)
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
    host.replaceChildren(box)
    host.setAttribute('data-reviews-state', 'ready')
  } catch (err) {
    host.setAttribute('data-reviews-state', 'error')
    emit('error', { error: err })
  }
}

function scan(): void {
  paint()
  for (const host of doc.querySelectorAll<HTMLElement>('[data-reviews-product-id]')) void renderReviews(host)
}

const style = el('style', '')
// Sizes match the recommended placeholder CSS (README) so nothing moves when the widget runs.
style.textContent =
  '.wl-heart{all:unset;box-sizing:border-box;display:inline-flex;align-items:center;justify-content:center;width:100%;height:100%;min-width:40px;min-height:40px;cursor:pointer;border-radius:50%}' +
  '.wl-heart svg{fill:none;stroke:currentColor;stroke-width:2}.wl-heart[aria-pressed=true] svg{fill:#d33;stroke:#d33}' +
  '.wl-heart:focus-visible{outline:2px solid #1a73e8;outline-offset:2px}.wl-review-list{list-style:none;padding:0}.wl-stars{color:#e6a700}' +
  '.wl-review-reply{margin:.25em 0 0 1em;padding-left:.75em;border-left:3px solid #ddd}.wl-review-reply p{margin:.25em 0}'
doc.head.append(style)

let queued = false
new MutationObserver(() => {
  if (queued) return
  queued = true
  queueMicrotask(() => {
    queued = false
    scan()
  })
}).observe(doc.documentElement, { childList: true, subtree: true })

scan()
// `ready` settles once the first load (and any guest merge) has painted the hearts.
win.Wishlist = { refresh: load, ready: load(), scan, has: (id: string) => saved.has(id), get count() { return saved.size } }
