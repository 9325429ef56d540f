/**
 * Platform events (docs/api.md, "Platform events"). A batch is validated as a whole (one bad event → 400 with
 * its index, nothing applied), then applied in order in ONE transaction with the analytics
 * facts it causes and the product signals it queues, coalesced (product-fan-out.ts).
 */
import { Ajv, type ErrorObject } from 'ajv'
import addFormats from 'ajv-formats'
import type { Transaction } from 'kysely'
import type { Db } from '../../db/types.js'
import type { Database } from '../../db/schema.js'
import { type ErrorDetail, invalid, validationDetails } from '../../lib/errors.js'
import { normalizePlatformId, type PlatformKind } from '../../lib/platform-ids.js'
import { now, parseDateTime } from '../../lib/time.js'
import { recordFacts } from '../analytics/facts.js'
import { type OrderLine, recordOrderAttribution, recordSignals } from '../analytics/conversions.js'
import { linePriceProblem, toMicros } from '../../lib/money.js'
import type { RequestContext } from '../auth/auth.types.js'
import type { InvitationsService } from '../reviews/invitations.service.js'
import { recordPurchase } from '../reviews/purchases.js'
import type { WishlistsService } from '../wishlists/wishlists.service.js'
import { catalogRepo } from './catalog.repo.js'
import {
  type CartItemAddedEvent,
  EVENT_SCHEMAS,
  MAX_ORDER_LINE_ITEMS_PER_BATCH,
  type OrderCreatedEvent,
  type PlatformEvent,
  type ProductUpdatedEvent,
} from './events.schemas.js'
import { subscribedEvents } from './outbox.js'
import { contactsRepo } from '../notifications/contacts.js'
import { activeChannels, NOTIFICATION_SIGNAL_OF, takesSignal } from '../notifications/notify.js'
import { coalesce, type ProductFanOut, queueProductSignals } from './product-fan-out.js'
import { normalizePrice, productSignals, type VariantState } from './product-signals.js'
/** The analytics name of each product signal event. */
const SIGNAL_OF = {
  'wishlist.product.back_in_stock': 'back_in_stock',
  'wishlist.product.price_dropped': 'price_dropped',
  'wishlist.product.low_stock': 'low_stock',
} as const

/** Validation errors reported per batch; the rest are summarised by the first ones. */
const MAX_REPORTED_ERRORS = 50

export interface EventsServiceDeps {
  db: Db
  /** Purchase state and remove-on-purchase live with the wishlists. */
  wishlists: Pick<WishlistsService, 'purchaseForCustomer'>
  /** Every product of an order gets a review invitation. */
  invitations: Pick<InvitationsService, 'forOrder'>
}

const pid = (raw: string, kind: PlatformKind): string => normalizePlatformId(raw, kind) as string // schema-checked already

function compileValidators() {
  const ajv = new Ajv({ allErrors: false, coerceTypes: false, useDefaults: true, strict: false })
  addFormats.default(ajv)
  return {
    'cart.item_added': ajv.compile<CartItemAddedEvent>(EVENT_SCHEMAS['cart.item_added']),
    'product.updated': ajv.compile<ProductUpdatedEvent>(EVENT_SCHEMAS['product.updated']),
    'order.created': ajv.compile<OrderCreatedEvent>(EVENT_SCHEMAS['order.created']),
  }
}

/**
 * A price sent as a JSON number holds what its shortest decimal form shows: at most 6
 * decimals, as a decimal string may (rounding 7.1234567 would hide a real price drop).
 */
const PRICE_DECIMALS = 6
function fitsPriceDecimals(price: number): boolean {
  const text = String(price) // exponent form only below 1e-6 here (prices are ≤ 1e15)
  if (text.includes('e')) return price === 0
  return (text.split('.')[1]?.length ?? 0) <= PRICE_DECIMALS
}

/** A union (price: string | number) fails once per branch; report it once, plainly. */
function collapseAlternatives(errors: ErrorObject[]): ErrorObject[] {
  const unions = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath))
  if (unions.size === 0) return errors
  return errors
    .filter((e) => !unions.has(e.instancePath) || e.keyword === 'anyOf')
    .map((e) =>
      e.keyword !== 'anyOf'
        ? e
        : {
            ...e,
            message: e.instancePath.includes('/line_items/')
              ? 'must be a decimal string such as "19.99" or a non-negative number, below 1000000000'
              : 'must be a decimal string such as "19.99" or a non-negative number',
          },
    )
}

/** A request's product signals, gathered per product; `taken`: the events some webhook or notification channel of the shop takes. */
interface SignalScope {
  taken: Set<string>
  signals: Map<string, ProductFanOut>
  /** `product.updated` events not newer than the catalog's state (their `updated_at`), ignored. */
  stale: number
}

export function createEventsService(deps: EventsServiceDeps) {
  const validators = compileValidators()

  /** Every event checked against its type's schema and rules; throws with all failing indexes. */
  function validate(events: Array<{ type: string }>): PlatformEvent[] {
    const details: ErrorDetail[] = []
    const fail = (index: number, path: string, message: string) => details.push({ path: `body.events.${index}${path}`, message, index })
    events.forEach((event, index) => {
      if (details.length >= MAX_REPORTED_ERRORS) return
      const check = validators[event.type as PlatformEvent['type']]
      if (!check(event)) {
        const errors = collapseAlternatives((check.errors ?? []) as ErrorObject[])
        details.push(
          ...validationDetails(
            errors.map((e) => ({ ...e, instancePath: `/events/${index}${e.instancePath}` })),
            'body',
            ['events'],
          ),
        )
        return
      }
      if (event.type === 'cart.item_added') {
        const e = event as CartItemAddedEvent
        if ((e.customer_id === undefined) === (e.guest_id === undefined))
          fail(index, '', 'must have exactly one of customer_id and guest_id')
      }
      if (event.type === 'product.updated') {
        const seen = new Set<string>()
        ;(event as ProductUpdatedEvent).variants.forEach((v, i) => {
          const id = pid(v.variant_id, 'ProductVariant')
          if (seen.has(id)) fail(index, `.variants.${i}.variant_id`, 'must not repeat a variant')
          seen.add(id)
          if (typeof v.price === 'number' && !fitsPriceDecimals(v.price))
            fail(index, `.variants.${i}.price`, `must have at most ${PRICE_DECIMALS} decimals`)
        })
      }
      if (event.type === 'order.created') {
        const e = event as OrderCreatedEvent
        // A price within its currency's minor unit and below 10^9 (lib/money.ts): every sum then stays exact.
        e.line_items.forEach((l, i) => {
          const problem = l.price === undefined || e.currency === undefined ? null : linePriceProblem(l.price, e.currency)
          if (problem !== null) fail(index, `.line_items.${i}.price`, problem)
        })
        if (e.currency === undefined && e.line_items.some((l) => l.price !== undefined))
          fail(index, '.currency', 'is required when a line item has a price')
      }
    })
    if (details.length === 0) {
      const lineItems = (events as PlatformEvent[]).reduce((n, e) => n + (e.type === 'order.created' ? e.line_items.length : 0), 0)
      if (lineItems > MAX_ORDER_LINE_ITEMS_PER_BATCH) {
        details.push({
          path: 'body.events',
          message: `must hold at most ${MAX_ORDER_LINE_ITEMS_PER_BATCH} order line items in all (this request has ${lineItems})`,
        })
      }
    }
    if (details.length > 0) throw invalid(details)
    return events as PlatformEvent[]
  }

  async function cartItemAdded(trx: Transaction<Database>, ctx: RequestContext, e: CartItemAddedEvent, at: number) {
    const owner =
      e.customer_id !== undefined
        ? { ownerType: 'customer' as const, ownerId: pid(e.customer_id, 'Customer') }
        : { ownerType: 'guest' as const, ownerId: e.guest_id as string }
    const occurredAt = e.occurred_at === undefined ? at : parseDateTime(e.occurred_at)
    await recordFacts(trx, ctx.shop.id, [{ type: 'cart_add', ...owner, productId: pid(e.product_id, 'Product'), occurredAt }])
  }

  async function productUpdated(trx: Transaction<Database>, ctx: RequestContext, e: ProductUpdatedEvent, at: number, scope: SignalScope) {
    const shopId = ctx.shop.id
    const productId = pid(e.product_id, 'Product')
    const next: VariantState[] = e.variants.map((v) => ({
      variant_id: pid(v.variant_id, 'ProductVariant'),
      price: normalizePrice(v.price),
      inventory_quantity: v.inventory_quantity,
    }))
    const previous = await catalogRepo.lockProduct(trx, shopId, productId)
    // A platform's update delivered late (or again) after a newer one changes nothing.
    const sourceUpdatedAt = e.updated_at === undefined ? (previous?.sourceUpdatedAt ?? null) : parseDateTime(e.updated_at)
    if (
      e.updated_at !== undefined &&
      previous?.sourceUpdatedAt != null &&
      sourceUpdatedAt !== null &&
      sourceUpdatedAt <= previous.sourceUpdatedAt
    ) {
      scope.stale += 1
      return
    }
    const handle = e.handle ?? previous?.handle ?? null
    const title = e.title ?? previous?.title ?? null
    const imageUrl = e.image_url ?? previous?.imageUrl ?? null
    await catalogRepo.upsertProduct(trx, shopId, productId, { handle, title, imageUrl, variants: next, sourceUpdatedAt }, at)
    // Only signals some webhook (outbox.ts) or notification channel of the shop takes are queued.
    const found = productSignals(previous?.variants ?? null, next)
    // Every signal is kept for attribution (conversions), whether or not a webhook takes it.
    await recordSignals(
      trx,
      shopId,
      found.map((c) => ({ productId, signal: SIGNAL_OF[c.event] })),
      at,
    )
    const changes = found.filter((c) => scope.taken.has(c.event))
    if (changes.length > 0) coalesce(scope.signals, productId, handle, changes)
  }

  async function orderCreated(trx: Transaction<Database>, ctx: RequestContext, e: OrderCreatedEvent, at: number) {
    const shopId = ctx.shop.id
    const orderId = e.order_id === undefined ? null : pid(e.order_id, 'Order')
    // A shop's order id is applied once (the platform may send an order again).
    const orderAt = e.occurred_at === undefined ? at : Math.min(parseDateTime(e.occurred_at), at)
    if (orderId !== null && !(await catalogRepo.recordOrder(trx, shopId, orderId, orderAt, at))) return
    const lines: OrderLine[] = e.line_items.map((l) => ({
      productId: pid(l.product_id, 'Product'),
      quantity: l.quantity ?? 1,
      priceMicros: l.price === undefined ? null : toMicros(normalizePrice(l.price)),
    }))
    const productIds = [...new Set(lines.map((l) => l.productId))]
    const customerId = e.customer_id === undefined ? undefined : pid(e.customer_id, 'Customer')
    if (customerId !== undefined) {
      const quantities = new Map<string, number>()
      for (const l of lines) quantities.set(l.productId, (quantities.get(l.productId) ?? 0) + l.quantity)
      // The customer's items of these products: bought (or removed, remove_on_purchase), then attributed.
      const held = await deps.wishlists.purchaseForCustomer(trx, shopId, customerId, {
        orderId,
        at: orderAt,
        quantities,
        remove: ctx.shop.settings.remove_on_purchase,
      })
      await recordOrderAttribution(trx, shopId, {
        customerId,
        at: orderAt,
        currency: e.currency ?? null,
        windowDays: ctx.shop.settings.attribution_window_days,
        lines,
        held,
      })
    }
    // The customer's e-mail, for notifications (one the merchant or the shopper gave stays).
    if (customerId !== undefined && e.email !== undefined) await contactsRepo.fromOrder(trx, shopId, customerId, e.email, at)
    // Reviews linked to this customer of these products become verified purchases.
    await recordPurchase(trx, shopId, { customerId, email: e.email, productIds }, at)
    await deps.invitations.forOrder(
      trx,
      ctx.shop,
      { orderId, customerId: customerId ?? null, email: e.email ?? null, productIds, locale: e.locale ?? null },
      at,
    )
  }

  return {
    /**
     * Validates the whole batch, then applies it atomically. Returns the number of events
     * accepted, and of those the `product.updated` ones ignored as older than the catalog's state.
     */
    async ingest(ctx: RequestContext, raw: Array<{ type: string }>): Promise<{ accepted: number; stale: number }> {
      const events = validate(raw)
      if (events.length === 0) return { accepted: 0, stale: 0 }
      const at = now()
      const stale = await deps.db.transaction().execute(async (trx) => {
        const scope: SignalScope = { taken: new Set(), signals: new Map(), stale: 0 }
        if (events.some((e) => e.type === 'product.updated')) {
          scope.taken = await subscribedEvents(trx, ctx.shop.id)
          // The signals a notification channel of the shop takes are queued too (notifications/notify.ts).
          const channels = await activeChannels(trx, ctx.shop)
          if (channels !== undefined)
            for (const [event, signal] of Object.entries(NOTIFICATION_SIGNAL_OF)) if (takesSignal(channels, signal)) scope.taken.add(event)
        }
        for (const e of events) {
          if (e.type === 'cart.item_added') await cartItemAdded(trx, ctx, e, at)
          else if (e.type === 'product.updated') await productUpdated(trx, ctx, e, at, scope)
          else await orderCreated(trx, ctx, e, at)
        }
        await queueProductSignals(trx, ctx.shop.id, scope.signals, at)
        return scope.stale
      })
      return { accepted: events.length, stale }
    },

    /**
     * The platform deleted the product: the catalog forgets it (docs/api.md, "Webhooks from
     * Shopify"). The id is read as the intake reads `product_id`; one that is neither digits
     * nor a product GID names nothing the catalog holds.
     */
    async forgetProduct(ctx: RequestContext, rawProductId: string): Promise<void> {
      const productId = normalizePlatformId(rawProductId, 'Product')
      if (productId !== null) await catalogRepo.deleteProduct(deps.db, ctx.shop.id, productId)
    },
  }
}

export type EventsService = ReturnType<typeof createEventsService>
