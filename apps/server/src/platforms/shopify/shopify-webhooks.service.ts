/**
 * Webhooks from Shopify (docs/api.md, "Webhooks from Shopify"). Each topic is mapped onto
 * what the service already does: the events intake (`product.updated`, `order.created`,
 * and the catalog forgetting a deleted product),
 * the privacy erasure, the shop's deletion. Nothing slow runs before the answer: outbound
 * webhooks go through the outbox and the worker, exports are made when the merchant asks.
 */
import type { Db } from '../../db/types.js'
import { AppError, type ErrorDetail, invalid } from '../../lib/errors.js'
import { linePriceProblem, MAX_LINE_QUANTITY } from '../../lib/money.js'
import { deeperThan, isEmailAddress, MAX_JSON_DEPTH } from '../../lib/text.js'
import { now } from '../../lib/time.js'
import type { RequestContext } from '../../modules/auth/auth.types.js'
import type { EventsService } from '../../modules/events/events.service.js'
import type { PrivacyService } from '../../modules/privacy/privacy.service.js'
import type { ShopsService } from '../../modules/shops/shops.service.js'
import type { Shop } from '../../modules/shops/shops.types.js'
import { type ShopifyAdmin, ShopifyAdminError } from './admin-api.js'
import type { ShopifyBilling } from './billing.js'
import { privacyRequestsRepo } from './privacy-requests.repo.js'
import { shopErasureRepo } from './shop-erasure.repo.js'
import { isShopDomain, webhookHmacValid } from './signatures.js'
import { receiptsOf, webhookReceiptsRepo } from './webhook-receipts.repo.js'

export const SHOPIFY_TOPICS = [
  'products/create',
  'products/update',
  'products/delete',
  'orders/create',
  'customers/redact',
  'customers/data_request',
  'shop/redact',
  'app/uninstalled',
  'app_subscriptions/update',
] as const
export type ShopifyTopic = (typeof SHOPIFY_TOPICS)[number]

export interface ShopifyDelivery {
  rawBody: Buffer
  hmac: string | undefined
  shopDomain: string | undefined
  topic: string | undefined
  /** `X-Shopify-Event-Id`, else `X-Shopify-Webhook-Id`. */
  eventId: string | undefined
  requestId: string
  /** Where a refused erasure is reported (the request's logger). */
  warn?: (fields: Record<string, unknown>, message: string) => void
}

export type DeliveryResult = 'processed' | 'duplicate' | 'ignored'

const signatureError = (message: string) => new AppError('INVALID_SIGNATURE', message)
/** The header checks made before the body is read (and again with it). */
export const WEBHOOK_DOMAIN_MESSAGE = 'X-Shopify-Shop-Domain must be a *.myshopify.com domain'

type Json = Record<string, unknown>
const utf8 = new TextDecoder('utf-8', { fatal: true })
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
/**
 * JSON.parse keeping integers beyond 2^53 exact, as their digits: Shopify's ids are JSON
 * numbers, and some (orders, line items) are larger than a double holds exactly. Uses the
 * reviver's source text (Node 22 and 24).
 */
export function parseShopifyJson(text: string): unknown {
  const reviver = (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && !Number.isSafeInteger(value) && context?.source !== undefined && /^[0-9]+$/.test(context.source)
      ? context.source
      : value
  return JSON.parse(text, reviver as (key: string, value: unknown) => unknown)
}

/** Shopify ids arrive as JSON numbers (or, in newer payloads, strings / GIDs): as text. */
const idText = (v: unknown): string | undefined =>
  typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? String(v) : typeof v === 'string' && v !== '' ? v : undefined
const emailText = (v: unknown): string | undefined => (typeof v === 'string' && v.length <= 254 && isEmailAddress(v) ? v : undefined)

/**
 * Shopify signs the body only: topic, shop and event id are unsigned headers. So each
 * topic's body must have that topic's shape (a body of another topic, replayed under this
 * one, is refused), and a body that names its shop must name the header's. The problems,
 * none when the body agrees.
 */
export function webhookBodyProblems(topic: ShopifyTopic, body: Json, domain: string): ErrorDetail[] {
  const problems: ErrorDetail[] = []
  const need = (ok: boolean, path: string, message: string) => {
    if (!ok) problems.push({ path: `body.${path}`, message })
  }
  const id = (v: unknown, path: string) => need(idText(v) !== undefined, path, 'must be an id (a positive integer or a non-empty string)')
  const list = (v: unknown, path: string) => need(Array.isArray(v), path, 'must be an array')
  const object = (v: unknown, path: string): Json => {
    need(isObject(v), path, 'must be an object')
    return isObject(v) ? v : {}
  }
  const shopDomain = (v: unknown, path: string) => {
    need(typeof v === 'string', path, 'must be a string')
    if (typeof v === 'string') need(v.toLowerCase() === domain, path, 'must be the X-Shopify-Shop-Domain of the delivery')
  }
  switch (topic) {
    case 'products/create':
    case 'products/update':
      id(body.id, 'id')
      list(body.variants, 'variants')
      break
    case 'products/delete':
      id(body.id, 'id')
      break
    case 'orders/create':
      id(body.id, 'id')
      list(body.line_items, 'line_items')
      break
    case 'customers/redact':
      shopDomain(body.shop_domain, 'shop_domain')
      id(object(body.customer, 'customer').id, 'customer.id')
      list(body.orders_to_redact, 'orders_to_redact')
      break
    case 'customers/data_request':
      shopDomain(body.shop_domain, 'shop_domain')
      id(object(body.customer, 'customer').id, 'customer.id')
      id(object(body.data_request, 'data_request').id, 'data_request.id')
      break
    case 'shop/redact':
      id(body.shop_id, 'shop_id')
      shopDomain(body.shop_domain, 'shop_domain')
      break
    case 'app/uninstalled':
      id(body.id, 'id')
      shopDomain(body.myshopify_domain, 'myshopify_domain')
      break
    case 'app_subscriptions/update': {
      const subscription = object(body.app_subscription, 'app_subscription')
      const gid = subscription.admin_graphql_api_id
      need(
        typeof gid === 'string' && gid.startsWith('gid://shopify/AppSubscription/'),
        'app_subscription.admin_graphql_api_id',
        'must be an AppSubscription GID',
      )
      need(typeof subscription.status === 'string', 'app_subscription.status', 'must be a string')
      break
    }
  }
  return problems
}

/**
 * The product's image as `image_url`: the webhook's `image.src` (else its first `images[]`), or
 * the bulk read's `featuredImage.url`; only an http(s) URL of at most 2,048 characters.
 */
function imageOf(p: Json): { image_url?: string } {
  const images = Array.isArray(p.images) ? p.images.filter(isObject) : []
  const featured = isObject(p.featuredImage) ? p.featuredImage.url : undefined
  const src = isObject(p.image) ? p.image.src : (images[0]?.src ?? featured)
  return typeof src === 'string' && /^https?:\/\/\S+$/.test(src) && src.length <= 2048 ? { image_url: src } : {}
}

/** Shopify's product JSON as the intake's `product.updated` (with its `updated_at`); null when it has no variants to compare. */
export function productEvent(p: Json): Record<string, unknown> | null {
  const variants = Array.isArray(p.variants) ? p.variants.filter(isObject) : []
  if (variants.length === 0) return null
  return {
    type: 'product.updated',
    product_id: idText(p.id),
    ...(typeof p.handle === 'string' && p.handle !== '' ? { handle: p.handle } : {}),
    ...(typeof p.title === 'string' && p.title.trim() !== '' ? { title: p.title.trim().slice(0, 255) } : {}),
    ...imageOf(p),
    // Shopify delivers product webhooks late and out of order: the catalog applies them in this order.
    ...(typeof p.updated_at === 'string' ? { updated_at: p.updated_at } : {}),
    variants: variants.map((v) => ({
      variant_id: idText(v.id),
      price: v.price,
      // Untracked inventory comes without a quantity: nothing to compare.
      inventory_quantity: typeof v.inventory_quantity === 'number' ? v.inventory_quantity : 0,
    })),
  }
}

/**
 * Shopify's order JSON as the intake's `order.created`, field for field: `id`, `customer.id`,
 * `email`, `customer_locale` (as `locale`), `currency` (the shop currency, in which line prices are given), `processed_at`
 * (else `created_at`), and per line item `product_id`, `variant_id`, `quantity` (at most
 * the intake's 10,000), `price` (dropped when the order names no currency, or beyond the
 * intake's bounds for it). Null when no line item is a product (custom items only).
 */
export function orderEvent(o: Json): Record<string, unknown> | null {
  const customer = isObject(o.customer) ? o.customer : undefined
  // Prices mean something only in their currency: without one, the lines count without revenue.
  const currency = typeof o.currency === 'string' ? o.currency : undefined
  const lineItems = (Array.isArray(o.line_items) ? o.line_items.filter(isObject) : [])
    .filter((l) => idText(l.product_id) !== undefined)
    .map((l) => {
      // A wholesale line beyond the intake's bounds still counts as bought (its invitation,
      // the shopper's item): the quantity at the bound, the price dropped when out of bounds.
      const quantity =
        typeof l.quantity === 'number' && Number.isInteger(l.quantity) && l.quantity > MAX_LINE_QUANTITY ? MAX_LINE_QUANTITY : l.quantity
      const price =
        (typeof l.price === 'string' || typeof l.price === 'number') &&
        currency !== undefined &&
        linePriceProblem(l.price, currency) === null
          ? l.price
          : undefined
      return {
        product_id: idText(l.product_id),
        ...(idText(l.variant_id) ? { variant_id: idText(l.variant_id) } : {}),
        ...(quantity !== undefined && quantity !== null ? { quantity } : {}),
        ...(price !== undefined ? { price } : {}),
      }
    })
  if (lineItems.length === 0) return null
  const customerId = idText(customer?.id)
  const email = emailText(o.email) ?? emailText(customer?.email)
  const orderId = idText(o.id)
  // The language the buyer checked out in (a published language of the shop); dropped when odd.
  const locale =
    typeof o.customer_locale === 'string' && /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,3}$/.test(o.customer_locale)
      ? o.customer_locale
      : undefined
  return {
    type: 'order.created',
    ...(orderId ? { order_id: orderId } : {}),
    ...(customerId ? { customer_id: customerId } : {}),
    ...(email ? { email } : {}),
    ...(locale !== undefined ? { locale } : {}),
    ...(currency !== undefined ? { currency } : {}),
    ...(typeof (o.processed_at ?? o.created_at) === 'string' ? { occurred_at: o.processed_at ?? o.created_at } : {}),
    line_items: lineItems,
  }
}

export interface ShopifyWebhooksDeps {
  db: Db
  secret: string
  /** Hours a shop must have been uninstalled before `shop/redact` erases it (SHOPIFY_SHOP_REDACT_MIN_HOURS). */
  shopRedactMinHours: number
  shops: ShopsService
  events: Pick<EventsService, 'ingest' | 'forgetProduct'>
  privacy: Pick<PrivacyService, 'eraseCustomer'>
  /** The shops' Admin API access: it confirms uninstalls and orders, and an uninstall deletes the shop's tokens. */
  adminApi: Pick<ShopifyAdmin, 'graphql' | 'hasToken' | 'recordShopifyShopId' | 'forgetTokens'>
  /** Shopify Billing: a subscription's update is confirmed with the Admin API, which alone sets the plan. */
  billing: Pick<ShopifyBilling, 'confirm'>
}

/** Answers while the app is installed on the shop (its token works); Shopify refuses the token once it is not. */
const INSTALLED_QUERY = 'query AppInstalled { currentAppInstallation { id } }'
const ORDER_QUERY = 'query OrderOfShop($id: ID!) { order(id: $id) { id } }'
/** An order id as webhooks give it (a number, or its GID): the digits. */
const ORDER_ID = /^(?:gid:\/\/shopify\/Order\/)?([0-9]{1,20})$/

/** What the shop's Admin API said: its answer, `refused` (the shop's token: the app is not installed), or `no-token` (the shop holds none). */
type AdminAnswer<T> = { data: T } | 'refused' | 'no-token'

/** The Shopify shop id in an order's `order_status_url` (`https://{host}/{shop id}/orders/{token}/…`); null when it has none. */
export function orderStatusShopId(url: string): string | null {
  let path: string
  try {
    path = new URL(url).pathname
  } catch {
    return null
  }
  const match = /^\/([0-9]{1,20})\/orders\//.exec(path)
  return match ? match[1]! : null
}

export function createShopifyWebhooks(deps: ShopifyWebhooksDeps) {
  const { db } = deps

  const contextOf = (shop: Shop, requestId: string): RequestContext => ({
    shop,
    actor: { kind: 'admin', keyId: 'shopify-webhook' },
    requestId,
  })

  /**
   * Asks the shop's Admin API to prove a delivery. Shopify not reached, throttling, or
   * answering anything else is 503 UNAVAILABLE: Shopify delivers the webhook again later,
   * rather than the service acting on a body it could not prove.
   */
  async function ask<T>(topic: ShopifyTopic, run: () => Promise<T>): Promise<AdminAnswer<T>> {
    try {
      return { data: await run() }
    } catch (err) {
      if (!(err instanceof ShopifyAdminError)) throw err
      if (err.reason === 'no-token') return 'no-token'
      if (err.reason === 'unauthorized' || err.status === 403) return 'refused'
      throw new AppError('UNAVAILABLE', `Shopify's Admin API could not prove this ${topic} delivery (${err.reason}): retry later`)
    }
  }

  /**
   * An order must be the shop's (else 400 VALIDATION_ERROR, nothing written). With an
   * `order_status_url`, the shop id in its path must be the shop's Shopify id (read from the
   * Admin API first when it is not known yet and the shop holds a token); without one, a shop
   * holding a token must find the order in its Admin API.
   */
  async function orderOfShop(shop: Shop, body: Json): Promise<void> {
    const url = body.order_status_url
    if (url !== undefined && url !== null) {
      let shopifyShopId = shop.shopifyShopId
      if (shopifyShopId === null) {
        const read = await ask('orders/create', () => deps.adminApi.recordShopifyShopId(shop.id))
        if (typeof read === 'string') return // unknown, and no token to read it with: nothing to compare
        shopifyShopId = read.data
      }
      if ((typeof url === 'string' ? orderStatusShopId(url) : null) !== shopifyShopId)
        throw invalid([{ path: 'body.order_status_url', message: 'must be an order status URL of the X-Shopify-Shop-Domain shop' }])
      return
    }
    const id = ORDER_ID.exec(idText(body.id) as string)?.[1]
    const unknownOrder = () => invalid([{ path: 'body.id', message: "must be an order the shop's Admin API knows" }])
    // An id that is no order id names no order of the shop: refused when the shop could ask.
    if (id === undefined) {
      if (await deps.adminApi.hasToken(shop.id)) throw unknownOrder()
      return
    }
    const known = await ask('orders/create', () =>
      deps.adminApi.graphql<{ order: { id: string } | null }>(shop.id, ORDER_QUERY, { id: `gid://shopify/Order/${id}` }),
    )
    if (typeof known !== 'string' && known.data.order === null) throw unknownOrder()
  }

  /** Applies a delivery; 'ignored' when it changed nothing on purpose (a product update older than the catalog's state). */
  async function apply(shop: Shop, topic: ShopifyTopic, body: Json, requestId: string): Promise<DeliveryResult> {
    const ctx = contextOf(shop, requestId)
    switch (topic) {
      case 'products/create':
      case 'products/update': {
        const event = productEvent(body)
        if (event && (await deps.events.ingest(ctx, [event as { type: string }])).stale > 0) return 'ignored'
        return 'processed'
      }
      case 'products/delete': {
        const productId = idText(body.id)
        if (productId) await deps.events.forgetProduct(ctx, productId)
        return 'processed'
      }
      case 'orders/create': {
        const event = orderEvent(body)
        if (event) await deps.events.ingest(ctx, [event as { type: string }])
        return 'processed'
      }
      case 'customers/redact': {
        const customer = isObject(body.customer) ? body.customer : {}
        const customerId = idText(customer.id)
        if (customerId) await deps.privacy.eraseCustomer(ctx, { customerId, email: emailText(customer.email) })
        return 'processed'
      }
      case 'customers/data_request': {
        const customer = isObject(body.customer) ? body.customer : {}
        const customerId = idText(customer.id)
        if (customerId) await privacyRequestsRepo.record(db, shop.id, customerId, emailText(customer.email))
        return 'processed'
      }
      case 'app/uninstalled':
        await deps.shops.uninstall(shop.id, now(), idText(body.id) as string)
        await deps.adminApi.forgetTokens(shop.id)
        return 'processed'
      case 'shop/redact':
        return 'processed' // handled before: nothing is claimed for it
      case 'app_subscriptions/update': {
        // The body's status is not believed (it may be stale, or replayed): the plan follows the Admin API's answer.
        const confirmed = await ask(topic, () => deps.billing.confirm(shop))
        return typeof confirmed === 'string' ? 'ignored' : 'processed'
      }
    }
  }

  /**
   * Why a delivery for a known shop must not act, before anything is claimed: a warning's
   * text (answered `ignored`), or undefined when it may. `shop/redact` is decided here whole.
   */
  function refusal(shop: Shop, topic: ShopifyTopic, body: Json): string | undefined {
    const uninstalled = shop.uninstalledAt !== null
    switch (topic) {
      case 'shop/redact': {
        if (!uninstalled) return 'shop/redact for a shop the app is installed on: ignored, nothing erased'
        const hours = (now() - (shop.uninstalledAt as number)) / 3_600_000
        if (hours < deps.shopRedactMinHours)
          return `shop/redact for a shop uninstalled ${hours.toFixed(1)} h ago (less than ${deps.shopRedactMinHours} h): ignored, nothing erased`
        if (shop.shopifyShopId === null || shop.shopifyShopId !== idText(body.shop_id))
          return "shop/redact whose shop_id is not the shop's Shopify id: ignored, nothing erased"
        return undefined
      }
      case 'app/uninstalled':
        if (uninstalled) return 'app/uninstalled for a shop already uninstalled: ignored'
        if (shop.shopifyShopId !== null && shop.shopifyShopId !== idText(body.id))
          return "app/uninstalled whose id is not the shop's Shopify id: ignored"
        return undefined
      case 'customers/redact':
      case 'customers/data_request':
        return undefined // Shopify sends these after an uninstall too
      default:
        return uninstalled ? `${topic} for a shop the app is uninstalled from: ignored` : undefined
    }
  }

  return {
    async receive(d: ShopifyDelivery): Promise<DeliveryResult> {
      if (!webhookHmacValid(d.rawBody, d.hmac, deps.secret))
        throw signatureError('X-Shopify-Hmac-Sha256 is missing or does not match the body')
      const domain = d.shopDomain?.toLowerCase()
      if (domain === undefined || !isShopDomain(domain)) throw signatureError(WEBHOOK_DOMAIN_MESSAGE)
      const topic = d.topic
      if (topic === undefined || !(SHOPIFY_TOPICS as readonly string[]).includes(topic)) return 'ignored'
      let body: unknown
      try {
        body = parseShopifyJson(utf8.decode(d.rawBody))
      } catch {
        throw new AppError('INVALID_JSON', 'The request body is not valid JSON (UTF-8)')
      }
      if (deeperThan(body, MAX_JSON_DEPTH))
        throw new AppError('INVALID_JSON', `The request body nests deeper than ${MAX_JSON_DEPTH} levels`)
      if (!isObject(body)) throw invalid([{ path: 'body', message: 'must be object' }], 'The webhook body must be a JSON object')
      // Before anything is written (a receipt): a refused body burns no event id.
      const problems = webhookBodyProblems(topic as ShopifyTopic, body, domain)
      if (problems.length > 0) throw invalid(problems)

      // Only Shopify's signed requests to the app install a shop; a webhook never creates one.
      // Read past the cache: whether the shop is uninstalled decides.
      const shop = await deps.shops.byDomain(domain)
      const warn = (message: string) => d.warn?.({ shop: domain, topic, requestId: d.requestId }, message)
      if (!shop) {
        warn(`${topic} for a shop the app does not know: ignored, nothing written`)
        return 'ignored'
      }
      if (topic === 'orders/create') await orderOfShop(shop, body)
      const refused = refusal(shop, topic as ShopifyTopic, body)
      if (refused !== undefined) {
        warn(refused)
        return 'ignored'
      }
      if (topic === 'shop/redact') {
        // Nothing is claimed: the erasure deletes the shop's receipts with it, and a redelivery finds no shop.
        await shopErasureRepo.erase(db, shop.id)
        deps.shops.forget(shop)
        return 'processed'
      }
      // An uninstall of a shop holding a token is Shopify's to confirm, even for a body seen before.
      const uninstall = topic === 'app/uninstalled' ? await ask(topic, () => deps.adminApi.graphql(shop.id, INSTALLED_QUERY)) : 'no-token'
      if (typeof uninstall !== 'string') {
        warn("app/uninstalled while the shop's Admin API token still works: the app is installed, the body is stale: ignored")
        return 'ignored'
      }
      const receipts = receiptsOf(topic, d.rawBody, d.eventId)
      const claimed = await webhookReceiptsRepo.claim(db, shop.id, receipts)
      if (!claimed && uninstall !== 'refused') return 'duplicate'
      try {
        return await apply(shop, topic as ShopifyTopic, body, d.requestId)
      } catch (err) {
        // Not processed: Shopify's retry must find the delivery unclaimed.
        if (claimed) await webhookReceiptsRepo.release(db, shop.id, receipts).catch(() => undefined)
        throw err
      }
    },
  }
}

export type ShopifyWebhooks = ReturnType<typeof createShopifyWebhooks>
