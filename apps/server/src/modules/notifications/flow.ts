/**
 * The Shopify Flow channel (docs/shopify.md, "Shopify Flow"): each notification fires the
 * wishlist's Flow trigger of its signal in the merchant's shop, with the Admin API's
 * `flowTriggerReceive(handle, payload)`; the merchant's workflows that start with that trigger
 * then send the e-mail, text or tag. One trigger per signal, each a `flow_trigger` extension of
 * the app (extensions/wishlist-flow-*); FLOW_TRIGGERS is their handles and fields, held equal to
 * the toml files by a test.
 *
 * The payload has every field of the trigger, keyed as Flow keys it: a reference field by
 * `customer_id` / `product_id` with Shopify's numeric id (Flow hands the workflow the Shopify
 * customer and product), any other by its `key`. A text field the notification does not know is
 * sent empty; a URL or decimal field it does not know means the trigger cannot be fired
 * (a permanent failure naming the field).
 *
 * Flow's trigger lifecycle callback (flow-lifecycle.routes.ts) says per shop and trigger
 * whether an enabled workflow starts with it; a trigger is fired only while one does: else the
 * notification is not sent, answered FLOW_NOT_ENABLED (permanent, and no error: `isFlowSkip`).
 *
 * Answers: `userErrors` (a payload Flow refuses, an unknown handle) and GraphQL errors are
 * permanent; a shop whose Admin API token Shopify refuses too; throttling (after the Admin API
 * client's own bounded waits) is retried after the time the shop's bucket needs; Shopify not
 * reached, failing (5xx) or the shop holding no token yet, later.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../../db/types.js'
import { now } from '../../lib/time.js'
import type { NotificationChannel, NotificationMessage, NotificationSignal, SendResult } from './channel.js'

/**
 * A shop's Admin API as the channel calls it: Shopify's platform hands its client
 * (platforms/shopify/admin-api.ts), whose failures carry a `reason` (AdminFailure).
 */
export interface FlowAdminApi {
  graphql<T>(shopId: string, query: string, variables?: Record<string, unknown>): Promise<T>
}

/** What a failure of the Admin API client says (its ShopifyAdminError, read by shape: generic code does not import a platform). */
interface AdminFailure extends Error {
  reason: 'no-token' | 'unauthorized' | 'throttled' | 'unreachable' | 'failed'
  status?: number
  retryAfterMs?: number
  errors?: unknown
}

const ADMIN_REASONS = ['no-token', 'unauthorized', 'throttled', 'unreachable', 'failed']
const isAdminFailure = (err: unknown): err is AdminFailure =>
  err instanceof Error && ADMIN_REASONS.includes(String((err as { reason?: unknown }).reason))

/** The field types the wishlist's triggers use: all of them among those Flow accepts on a trigger. */
export type FlowFieldType = 'customer_reference' | 'product_reference' | 'single_line_text_field' | 'number_decimal' | 'url'

/** Every field type Flow accepts on a trigger (Shopify CLI's trigger types; `schema.*` are custom types of a schema file). */
export const FLOW_TRIGGER_FIELD_TYPES: readonly string[] = [
  'customer_reference',
  'order_reference',
  'product_reference',
  'company_reference',
  'company_contact_reference',
  'boolean',
  'email',
  'single_line_text_field',
  'url',
  'number_decimal',
]

/** A trigger field: its payload key (`customer_id`, `product_id` for references) and type. */
export interface FlowField {
  key: string
  type: FlowFieldType
}

export interface FlowTrigger {
  /** The extension's handle, the `handle` of flowTriggerReceive. */
  handle: string
  fields: readonly FlowField[]
}

const CUSTOMER: FlowField = { key: 'customer_id', type: 'customer_reference' }
const PRODUCT: FlowField = { key: 'product_id', type: 'product_reference' }
const VARIANT: FlowField = { key: 'Variant ID', type: 'single_line_text_field' }
const PRODUCT_URL: FlowField = { key: 'Product URL', type: 'single_line_text_field' }
const PRICE: FlowField = { key: 'Price', type: 'number_decimal' }
const PREVIOUS_PRICE: FlowField = { key: 'Previous price', type: 'number_decimal' }
const CURRENCY: FlowField = { key: 'Currency', type: 'single_line_text_field' }
const INVENTORY: FlowField = { key: 'Inventory quantity', type: 'number_decimal' }
const OPT_OUT: FlowField = { key: 'Opt out URL', type: 'url' }

/** The wishlist's Flow trigger of each signal, as extensions/wishlist-flow-<…>/shopify.extension.toml declares it. */
export const FLOW_TRIGGERS: Readonly<Record<NotificationSignal, FlowTrigger>> = {
  back_in_stock: {
    handle: 'wishlist-flow-back-in-stock',
    fields: [CUSTOMER, PRODUCT, VARIANT, PRODUCT_URL, PRICE, CURRENCY, INVENTORY, OPT_OUT],
  },
  price_drop: {
    handle: 'wishlist-flow-price-drop',
    fields: [CUSTOMER, PRODUCT, VARIANT, PRODUCT_URL, PRICE, PREVIOUS_PRICE, CURRENCY, OPT_OUT],
  },
  low_stock: {
    handle: 'wishlist-flow-low-stock',
    fields: [CUSTOMER, PRODUCT, VARIANT, PRODUCT_URL, PRICE, CURRENCY, INVENTORY, OPT_OUT],
  },
  reminder: { handle: 'wishlist-flow-reminder', fields: [CUSTOMER, PRODUCT, VARIANT, PRODUCT_URL, OPT_OUT] },
  item_added: { handle: 'wishlist-flow-item-added', fields: [CUSTOMER, PRODUCT, VARIANT, PRODUCT_URL, OPT_OUT] },
}

/** The largest payload Flow takes from a trigger: 50 KB of JSON (Shopify's trigger reference). */
export const FLOW_PAYLOAD_MAX_BYTES = 50_000

/** The reason of a notification not sent because no enabled workflow of the shop starts with its trigger. */
export const FLOW_NOT_ENABLED = 'flow_not_enabled'

/** Whether a result is a skip (no enabled workflow uses the trigger): not sent, and not a failure. */
export const isFlowSkip = (result: SendResult): boolean => !result.ok && result.reason.startsWith(`${FLOW_NOT_ENABLED}:`)

/** The wait asked of a throttled send when Shopify's answer gave none. */
export const FLOW_THROTTLE_FALLBACK_MS = 1_000

const MUTATION =
  'mutation WishlistFlowTrigger($handle: String!, $payload: JSON!) { flowTriggerReceive(handle: $handle, payload: $payload) { userErrors { field message } } }'

interface UserError {
  field: string[] | null
  message: string
}

/** What the notification says of each field's key (before it is typed). */
const SOURCES: Record<string, (m: NotificationMessage) => string | number | null> = {
  customer_id: (m) => m.shopper.customerId,
  product_id: (m) => m.product.productId,
  'Variant ID': (m) => m.product.variantId,
  'Product URL': (m) => m.product.url,
  Price: (m) => m.product.price,
  'Previous price': (m) => m.product.previousPrice,
  Currency: (m) => m.product.currency,
  'Inventory quantity': (m) => m.product.inventoryQuantity,
  'Opt out URL': (m) => m.optOutUrl,
}

class Unsendable extends Error {}

const SHOPIFY_ID = /^(?:gid:\/\/shopify\/[A-Za-z]+\/)?([1-9][0-9]{0,15})$/
const DECIMAL = /^-?[0-9]{1,15}(?:\.[0-9]{1,10})?$/

/** The field's value typed as Flow takes it; throws Unsendable when the notification cannot give one. */
function encode(field: FlowField, value: string | number | null): string | number {
  switch (field.type) {
    case 'customer_reference':
    case 'product_reference': {
      const id = value === null ? undefined : SHOPIFY_ID.exec(String(value))?.[1]
      if (id === undefined || !Number.isSafeInteger(Number(id)))
        throw new Unsendable(`${field.key} ${JSON.stringify(value)} is not a Shopify id`)
      return Number(id)
    }
    case 'single_line_text_field':
      return value === null ? '' : String(value)
    case 'number_decimal': {
      if (value === null) throw new Unsendable(`the notification has no ${field.key}`)
      if (typeof value === 'number' ? !Number.isFinite(value) : !DECIMAL.test(value))
        throw new Unsendable(`${field.key} ${JSON.stringify(value)} is not a decimal number`)
      return Number(value)
    }
    case 'url': {
      const url = value === null ? undefined : URL.parse(String(value))
      if (url === undefined || url === null || (url.protocol !== 'https:' && url.protocol !== 'http:'))
        throw new Unsendable(`${field.key} ${JSON.stringify(value)} is not an absolute http(s) URL`)
      return String(value)
    }
  }
}

/** The flowTriggerReceive payload of a notification: every field of its trigger. Throws Unsendable. */
export function flowPayload(message: NotificationMessage): Record<string, string | number> {
  const trigger = FLOW_TRIGGERS[message.signal]
  const payload: Record<string, string | number> = {}
  for (const field of trigger.fields) {
    const source = SOURCES[field.key]
    if (source === undefined) throw new Unsendable(`no source for the field ${field.key}`)
    payload[field.key] = encode(field, source(message))
  }
  const bytes = Buffer.byteLength(JSON.stringify(payload))
  if (bytes > FLOW_PAYLOAD_MAX_BYTES) throw new Unsendable(`the payload is ${bytes} bytes, beyond Flow's ${FLOW_PAYLOAD_MAX_BYTES}`)
  return payload
}

/** The signal whose trigger Flow names so (its handle; its title, as legacy callbacks named a trigger); undefined when none is. */
export function flowTriggerSignal(definitionId: string): NotificationSignal | undefined {
  const entry = Object.entries(FLOW_TRIGGERS).find(([, t]) => t.handle === definitionId)
  return (entry?.[0] ?? FLOW_TRIGGER_TITLES[definitionId]) as NotificationSignal | undefined
}

/** The triggers' merchant-facing names (the toml's `name`), by which a lifecycle callback may name them. */
export const FLOW_TRIGGER_TITLES: Readonly<Record<string, NotificationSignal>> = {
  'Wishlist item back in stock': 'back_in_stock',
  'Wishlist item price dropped': 'price_drop',
  'Wishlist item low in stock': 'low_stock',
  'Wishlist reminder due': 'reminder',
  'Wishlist item added': 'item_added',
}

/** A trigger's status in a shop, as the Channels page shows it. */
export interface FlowTriggerStatus {
  signal: NotificationSignal
  handle: string
  /** `enabled`: a workflow that starts with it is on; `disabled`: none is; `unknown`: Flow never said (not fired). */
  state: 'enabled' | 'disabled' | 'unknown'
  /** When Flow said so (ms), null when it never did. */
  since: number | null
}

export const flowTriggersRepo = {
  /**
   * Records what a lifecycle callback says, unless a callback at least as recent was recorded
   * (Flow: newer timestamps take precedence). True when it was written.
   */
  async record(db: Db, shopId: string, handle: string, enabled: boolean, statusAt: number, at: number): Promise<boolean> {
    const values = { has_enabled_flow: enabled ? 1 : 0, status_at: statusAt, updated_at: at }
    const res = await db
      .insertInto('shopify_flow_triggers')
      .values({ shop_id: shopId, handle, ...values })
      .onConflict((oc) => oc.columns(['shop_id', 'handle']).doUpdateSet(values).where('shopify_flow_triggers.status_at', '<', statusAt))
      .executeTakeFirst()
    return Number(res.numInsertedOrUpdatedRows ?? 0n) > 0
  },

  async ofShop(db: Db, shopId: string) {
    return db
      .selectFrom('shopify_flow_triggers')
      .select(['handle', 'has_enabled_flow', 'status_at'])
      .where('shop_id', '=', shopId)
      .execute()
  },

  async enabled(db: Db, shopId: string, handle: string): Promise<boolean> {
    const row = await db
      .selectFrom('shopify_flow_triggers')
      .select('has_enabled_flow')
      .where('shop_id', '=', shopId)
      .where('handle', '=', handle)
      .executeTakeFirst()
    return row !== undefined && Number(row.has_enabled_flow) === 1
  },
}

/** Every trigger's status in the shop, in FLOW_TRIGGERS' order. */
export async function flowTriggerStatus(db: Db, shopId: string): Promise<FlowTriggerStatus[]> {
  const rows = new Map((await flowTriggersRepo.ofShop(db, shopId)).map((r) => [r.handle, r]))
  return (Object.entries(FLOW_TRIGGERS) as [NotificationSignal, FlowTrigger][]).map(([signal, { handle }]) => {
    const row = rows.get(handle)
    return {
      signal,
      handle,
      state: row === undefined ? 'unknown' : Number(row.has_enabled_flow) === 1 ? 'enabled' : 'disabled',
      since: row === undefined ? null : Number(row.status_at),
    }
  })
}

export interface FlowChannelDeps {
  db: Db
  admin: FlowAdminApi
  log?: Pick<FastifyBaseLogger, 'warn'>
}

export interface FlowChannel extends NotificationChannel {
  readonly name: 'flow'
  /** Whether the shop has an enabled workflow starting with the signal's trigger (else `send` skips it). */
  enabled(shopId: string, signal: NotificationSignal): Promise<boolean>
  /** Every trigger's status in the shop. */
  status(shopId: string): Promise<FlowTriggerStatus[]>
}

const failure = (permanent: boolean, reason: string, retryAfterMs: number | null = null): SendResult => ({
  ok: false,
  permanent,
  retryAfterMs,
  reason,
})

/** A failed call's result: what to retry, when. */
function adminFailure(err: unknown): SendResult {
  if (!isAdminFailure(err)) return failure(false, `flowTriggerReceive failed: ${err instanceof Error ? err.message : String(err)}`)
  switch (err.reason) {
    case 'throttled':
      return failure(false, err.message, err.retryAfterMs ?? FLOW_THROTTLE_FALLBACK_MS)
    case 'unreachable':
      return failure(false, err.message, err.status === 429 ? FLOW_THROTTLE_FALLBACK_MS : null)
    case 'no-token':
      return failure(false, err.message)
    case 'unauthorized':
      return failure(true, err.message)
    case 'failed': {
      // Shopify's own failure inside an answered request: worth another try.
      const codes = Array.isArray(err.errors) ? (err.errors as { extensions?: { code?: string } }[]).map((e) => e.extensions?.code) : []
      const internal = codes.includes('INTERNAL_SERVER_ERROR') || (err.status !== undefined && err.status >= 500)
      return failure(!internal, err.message)
    }
  }
}

export function createFlowChannel(deps: FlowChannelDeps): FlowChannel {
  const { db, admin } = deps
  return {
    name: 'flow',
    enabled: (shopId, signal) => flowTriggersRepo.enabled(db, shopId, FLOW_TRIGGERS[signal].handle),
    status: (shopId) => flowTriggerStatus(db, shopId),

    async send(message: NotificationMessage): Promise<SendResult> {
      const { handle } = FLOW_TRIGGERS[message.signal]
      if (!(await flowTriggersRepo.enabled(db, message.shopId, handle)))
        return failure(true, `${FLOW_NOT_ENABLED}: no enabled workflow of the shop starts with ${handle}`)
      let payload: Record<string, string | number>
      try {
        payload = flowPayload(message)
      } catch (err) {
        if (err instanceof Unsendable) return failure(true, `${handle} cannot be fired: ${err.message}`)
        throw err
      }
      let data: { flowTriggerReceive: { userErrors: UserError[] } | null }
      try {
        data = await admin.graphql(message.shopId, MUTATION, { handle, payload })
      } catch (err) {
        const result = adminFailure(err)
        deps.log?.warn({ shopId: message.shopId, handle, result }, 'Shopify Flow trigger not fired')
        return result
      }
      const userErrors = data.flowTriggerReceive?.userErrors ?? []
      if (userErrors.length > 0) {
        const reason = `Flow refused ${handle}: ${userErrors.map((e) => (e.field?.length ? `${e.field.join('.')}: ${e.message}` : e.message)).join('; ')}`
        deps.log?.warn({ shopId: message.shopId, handle, userErrors }, 'Shopify Flow refused the trigger payload')
        return failure(true, reason)
      }
      return { ok: true }
    },
  }
}

export interface FlowLifecycleBody {
  flow_trigger_definition_id: string
  has_enabled_flow: boolean
  shop_id: number | string
  shopify_domain: string
  timestamp: string
}

/** A lifecycle callback's body when it has Flow's shape; undefined otherwise. */
export function lifecycleBody(body: unknown): FlowLifecycleBody | undefined {
  if (typeof body !== 'object' || body === null) return undefined
  const b = body as Record<string, unknown>
  if (typeof b.flow_trigger_definition_id !== 'string' || b.flow_trigger_definition_id.length > 200) return undefined
  if (typeof b.has_enabled_flow !== 'boolean') return undefined
  if (typeof b.shopify_domain !== 'string') return undefined
  if (!(typeof b.shop_id === 'number' || typeof b.shop_id === 'string') || !/^[0-9]{1,20}$/.test(String(b.shop_id))) return undefined
  if (typeof b.timestamp !== 'string' || !Number.isFinite(Date.parse(b.timestamp))) return undefined
  return b as unknown as FlowLifecycleBody
}

/**
 * Applies a verified lifecycle callback of a known shop: `recorded`, `stale` (a newer one
 * was recorded), or `ignored` (a trigger that is not the wishlist's).
 */
export async function applyLifecycle(db: Db, shopId: string, body: FlowLifecycleBody): Promise<'recorded' | 'stale' | 'ignored'> {
  const signal = flowTriggerSignal(body.flow_trigger_definition_id)
  if (signal === undefined) return 'ignored'
  const written = await flowTriggersRepo.record(
    db,
    shopId,
    FLOW_TRIGGERS[signal].handle,
    body.has_enabled_flow,
    Date.parse(body.timestamp),
    now(),
  )
  return written ? 'recorded' : 'stale'
}
