/**
 * Making shopper notifications (docs/notifications.md, "Who is notified (consent, opt-out)"
 * and "How often (frequency)"): the rule engine and its three sources. The notification
 * worker (notification-worker.ts) sends what this writes.
 *
 * - `enqueueNotifications(trx, shop, candidates, at)`: for each (owner, signal, product), in
 *   the caller's transaction: an owner without a contact is skipped (nothing written); an
 *   owner who opted out gets a `suppressed` row (`opted_out`); one who had a notification of
 *   the same product and signal within `notification_cooldown_hours` (`cooldown`), or
 *   `notifications_per_day` notifications in the last 24 hours (`daily_cap`), too; anyone
 *   else a `queued` notification and one `pending` delivery per channel the shop has for
 *   that signal. Only `queued` notifications count for the rules.
 * - Product signals (`notifyQueuedSignals`, from product-fan-out.ts `writeQueuedSignals`):
 *   the holders of a product whose variant changed, NOTIFY_BATCH per transaction.
 * - Item added and reminder (`makeScheduledNotifications`, from the notification worker's
 *   pass): the shop's wishlist adds read in order from a cursor (`notification_cursors`).
 *
 * A shop's channels, for a signal: Klaviyo while its key is connected and not refused
 * (`check_state` other than `invalid`: an unreachable Klaviyo delays messages, never drops
 * them); Shopify Flow while an enabled workflow of the shop starts with the signal's trigger
 * (customers only: a Flow trigger names a Shopify customer). A shop without any (or
 * uninstalled) makes nothing: one query says so.
 */
import { type Transaction, sql } from 'kysely'
import type { Database, NotificationDeliveriesTable, NotificationsTable, OwnerType } from '../../db/schema.js'
import type { Db } from '../../db/types.js'
import { backendOf, lockedForUpdate } from '../../db/dialect.js'
import { newOrderedId } from '../../lib/ids.js'
import { DAY_MS } from '../../lib/time.js'
import type { Owner } from '../auth/auth.types.js'
import type { Shop } from '../shops/shops.types.js'
import { type NotificationMessage, NOTIFICATION_SIGNALS, type NotificationSignal } from './channel.js'
import { FLOW_TRIGGERS } from './flow.js'

export { optOutUrl } from './opt-out.js'

/** The product-signal webhook events (events/product-signals.ts), whose signals notify too. */
export type ProductSignal = 'wishlist.product.back_in_stock' | 'wishlist.product.price_dropped' | 'wishlist.product.low_stock'

/**
 * What the rules need of a shop: its domain (product URLs), whether the app is uninstalled,
 * its frequency settings and its currency (the messages' prices are in it; null: unknown).
 */
export interface NotifyShop {
  id: string
  domain: string
  uninstalledAt: number | null
  settings: Pick<Shop['settings'], 'notification_cooldown_hours' | 'notifications_per_day' | 'reminder_after_days' | 'currency'>
}

/** The shop as the rules read it, in the caller's transaction; undefined when it is gone. */
export async function notifyShop(db: Db, shopId: string): Promise<NotifyShop | undefined> {
  const row = await db
    .selectFrom('shops')
    .select(['id', 'domain', 'uninstalled_at', 'notification_cooldown_hours', 'notifications_per_day', 'reminder_after_days', 'currency'])
    .where('id', '=', shopId)
    .executeTakeFirst()
  if (row === undefined) return undefined
  return {
    id: row.id,
    domain: row.domain,
    uninstalledAt: row.uninstalled_at === null ? null : Number(row.uninstalled_at),
    settings: {
      notification_cooldown_hours: Number(row.notification_cooldown_hours),
      notifications_per_day: Number(row.notifications_per_day),
      reminder_after_days: Number(row.reminder_after_days),
      currency: row.currency ?? null,
    },
  }
}

/** The message's product part, as stored in `notifications.payload` (JSON) and sent as `NotificationMessage.product`. */
export type NotificationProduct = NotificationMessage['product']

/** One notification an owner may be due. */
export interface NotificationCandidate {
  owner: Owner
  signal: NotificationSignal
  productId: string
  variantId: string | null
  product: NotificationProduct
}

export type ChannelName = NotificationDeliveriesTable['channel']

/** The channels a shop has now: Klaviyo for every signal, Flow for the signals whose trigger an enabled workflow uses. */
export interface ActiveChannels {
  klaviyo: boolean
  flow: ReadonlySet<NotificationSignal>
  /** Per signal, since when a channel of the shop has taken it (ms): adds before it make no notification of it. */
  since: Readonly<Partial<Record<NotificationSignal, number>>>
}

export interface EnqueueResult {
  queued: number
  suppressed: number
  /** Candidates not written: no contact, or no channel for the signal. */
  skipped: number
}

/** Holders (product signals) or adds (item added, reminders) a transaction makes notifications for at most. */
export const NOTIFY_BATCH = 500

/** Adds are read once this old, so that an add committed late (its transaction began earlier) is not passed by the cursor. */
export const ADD_SETTLE_MS = 5_000

const HOUR_MS = 3_600_000
const INSERT_ROWS = 1_000

const FLOW_SIGNAL_BY_HANDLE = new Map(Object.entries(FLOW_TRIGGERS).map(([signal, t]) => [t.handle, signal as NotificationSignal]))

/** The signal of a product-signal webhook event. */
export const NOTIFICATION_SIGNAL_OF: Readonly<Record<ProductSignal, NotificationSignal>> = {
  'wishlist.product.back_in_stock': 'back_in_stock',
  'wishlist.product.price_dropped': 'price_drop',
  'wishlist.product.low_stock': 'low_stock',
}

/**
 * The shop's channels, from one query (the cheap check every source makes first); undefined
 * when it has none, or the app is uninstalled from it.
 */
export async function activeChannels(db: Db, shop: Pick<Shop, 'id' | 'uninstalledAt'>): Promise<ActiveChannels | undefined> {
  if (shop.uninstalledAt !== null) return undefined
  const rows = await db
    .selectFrom('notification_channels')
    .select([sql<string>`'klaviyo'`.as('name'), 'connected_at as since'])
    .where('shop_id', '=', shop.id)
    .where('channel', '=', 'klaviyo')
    .where('check_state', '<>', 'invalid')
    .unionAll(
      db
        .selectFrom('shopify_flow_triggers')
        .select(['handle as name', 'status_at as since'])
        .where('shop_id', '=', shop.id)
        .where('has_enabled_flow', '=', 1),
    )
    .execute()
  if (rows.length === 0) return undefined
  const flow = new Set<NotificationSignal>()
  const since: Partial<Record<NotificationSignal, number>> = {}
  const taken = (signal: NotificationSignal, at: number) => (since[signal] = Math.min(since[signal] ?? at, at))
  let klaviyo = false
  for (const r of rows) {
    if (r.name === 'klaviyo') {
      klaviyo = true
      for (const signal of NOTIFICATION_SIGNALS) taken(signal, Number(r.since))
    } else {
      const signal = FLOW_SIGNAL_BY_HANDLE.get(r.name)
      if (signal !== undefined) {
        flow.add(signal)
        taken(signal, Number(r.since))
      }
    }
  }
  if (!klaviyo && flow.size === 0) return undefined
  return { klaviyo, flow, since }
}

/** The channels a notification of `signal` to an owner of `ownerType` goes through. */
export function channelsFor(channels: ActiveChannels, signal: NotificationSignal, ownerType: OwnerType): ChannelName[] {
  const out: ChannelName[] = []
  if (channels.klaviyo) out.push('klaviyo')
  if (channels.flow.has(signal) && ownerType === 'customer') out.push('flow')
  return out
}

/** Whether any channel takes `signal` (for some owner). */
export const takesSignal = (channels: ActiveChannels, signal: NotificationSignal): boolean => channels.klaviyo || channels.flow.has(signal)

const ownerKey = (type: string, id: string) => `${type} ${id}`

/** `where` over the owners (by type, then ids): the owner-keyed tables' own index prefix. */
function ownersFilter(owners: readonly Owner[]) {
  const byType = new Map<OwnerType, string[]>()
  for (const o of owners) byType.set(o.type, [...(byType.get(o.type) ?? []), o.id])
  return <T extends { owner_type: OwnerType; owner_id: string }>(eb: import('kysely').ExpressionBuilder<Record<string, T>, string>) =>
    eb.or([...byType].map(([type, ids]) => eb.and([eb(sql.ref('owner_type'), '=', type), eb(sql.ref('owner_id'), 'in', ids)])))
}

/**
 * The frequency rules and the write (module comment). `channels`: the shop's, when the caller
 * read them in this transaction. Owners are locked through their contact rows (PostgreSQL),
 * in a fixed order, so two transactions making notifications for one owner apply the rules
 * in turn. `at` is the notifications' time (ms).
 */
export async function enqueueNotifications(
  trx: Transaction<Database>,
  shop: NotifyShop,
  candidates: readonly NotificationCandidate[],
  at: number,
  channels?: ActiveChannels,
): Promise<EnqueueResult> {
  const result: EnqueueResult = { queued: 0, suppressed: 0, skipped: 0 }
  if (candidates.length === 0) return result
  const active = channels ?? (await activeChannels(trx, shop))
  if (active === undefined) return { ...result, skipped: candidates.length }
  const routed = candidates.filter((c) => channelsFor(active, c.signal, c.owner.type).length > 0)
  result.skipped = candidates.length - routed.length
  if (routed.length === 0) return result

  const owners = [...new Map(routed.map((c) => [ownerKey(c.owner.type, c.owner.id), c.owner])).values()]
  const byOwners = ownersFilter(owners)
  const contactRows = await lockedForUpdate(
    trx
      .selectFrom('notification_contacts')
      .select(['owner_type', 'owner_id'])
      .where('shop_id', '=', shop.id)
      .where((eb) => byOwners(eb as never))
      .orderBy('owner_type')
      .orderBy('owner_id'),
    backendOf(trx),
  ).execute()
  const contacts = new Set(contactRows.map((r) => ownerKey(r.owner_type, r.owner_id)))
  const reachable = routed.filter((c) => contacts.has(ownerKey(c.owner.type, c.owner.id)))
  result.skipped += routed.length - reachable.length
  if (reachable.length === 0) return result

  const optedOut = new Set(
    (
      await trx
        .selectFrom('notification_opt_outs')
        .select(['owner_type', 'owner_id'])
        .where('shop_id', '=', shop.id)
        .where((eb) => byOwners(eb as never))
        .execute()
    ).map((r) => ownerKey(r.owner_type, r.owner_id)),
  )
  const cooldownMs = shop.settings.notification_cooldown_hours * HOUR_MS
  const recentRows = await trx
    .selectFrom('notifications')
    .select(['owner_type', 'owner_id', 'product_id', 'signal', 'created_at'])
    .where('shop_id', '=', shop.id)
    .where((eb) => byOwners(eb as never))
    .where('created_at', '>', at - Math.max(cooldownMs, DAY_MS))
    .where('state', '=', 'queued')
    .execute()
  /** Per owner: the queued notifications that count (time, product and signal). */
  const recent = new Map<string, { at: number; product: string; signal: string }[]>()
  for (const r of recentRows) {
    const k = ownerKey(r.owner_type, r.owner_id)
    recent.set(k, [...(recent.get(k) ?? []), { at: Number(r.created_at), product: r.product_id, signal: r.signal }])
  }

  const notifications: NotificationsTable[] = []
  const deliveries: Omit<NotificationDeliveriesTable, 'attempts'>[] = []
  for (const c of reachable) {
    const k = ownerKey(c.owner.type, c.owner.id)
    const mine = recent.get(k) ?? []
    let reason: NotificationsTable['reason'] = null
    if (optedOut.has(k)) reason = 'opted_out'
    else if (mine.some((n) => n.product === c.productId && n.signal === c.signal && n.at > at - cooldownMs)) reason = 'cooldown'
    else if (mine.filter((n) => n.at > at - DAY_MS).length >= shop.settings.notifications_per_day) reason = 'daily_cap'
    const id = newOrderedId('ntf')
    notifications.push({
      shop_id: shop.id,
      id,
      owner_type: c.owner.type,
      owner_id: c.owner.id,
      signal: c.signal,
      product_id: c.productId,
      variant_id: c.variantId,
      payload: JSON.stringify(c.product),
      state: reason === null ? 'queued' : 'suppressed',
      reason,
      created_at: at,
    })
    if (reason !== null) {
      result.suppressed += 1
      continue
    }
    result.queued += 1
    recent.set(k, [...mine, { at, product: c.productId, signal: c.signal }])
    for (const channel of channelsFor(active, c.signal, c.owner.type)) {
      deliveries.push({
        shop_id: shop.id,
        id: newOrderedId('ndl'),
        notification_id: id,
        channel,
        state: 'pending',
        next_attempt_at: at,
        lease_owner: null,
        lease_until: null,
        last_error: null,
        created_at: at,
        sent_at: null,
      })
    }
  }
  // Plain multi-row inserts, 1,000 rows a statement at most (parameters within both backends' limits).
  for (let i = 0; i < notifications.length; i += INSERT_ROWS)
    await trx
      .insertInto('notifications')
      .values(notifications.slice(i, i + INSERT_ROWS))
      .execute()
  for (let i = 0; i < deliveries.length; i += INSERT_ROWS)
    await trx
      .insertInto('notification_deliveries')
      .values(deliveries.slice(i, i + INSERT_ROWS).map((d) => ({ ...d, attempts: 0 })))
      .execute()
  return result
}

// ---- the product part of a message ----

interface CatalogView {
  title: string | null
  imageUrl: string | null
  handle: string | null
  defaultVariantId: string | null
  variants: { variant_id: string; price: string; inventory_quantity: number }[]
}

/** The catalog's view of several products, in one query. */
async function catalogViews(db: Db, shopId: string, productIds: string[]): Promise<Map<string, CatalogView>> {
  const out = new Map<string, CatalogView>()
  if (productIds.length === 0) return out
  const rows = await db
    .selectFrom('catalog_products')
    .select(['product_id', 'title', 'image_url', 'handle', 'default_variant_id', 'variants'])
    .where('shop_id', '=', shopId)
    .where('product_id', 'in', productIds)
    .execute()
  for (const row of rows)
    out.set(row.product_id, {
      title: row.title,
      imageUrl: row.image_url,
      handle: row.handle,
      defaultVariantId: row.default_variant_id,
      variants: JSON.parse(row.variants) as CatalogView['variants'],
    })
  return out
}

async function catalogView(db: Db, shopId: string, productId: string): Promise<CatalogView | undefined> {
  return (await catalogViews(db, shopId, [productId])).get(productId)
}

/** The product's page in the shop (`https://<domain>/products/<handle>`, the variant picked); null without a handle. */
export function productUrl(domain: string, handle: string | null, variantId: string | null): string | null {
  if (handle === null) return null
  const url = `https://${domain}/products/${encodeURIComponent(handle)}`
  return variantId === null ? url : `${url}?variant=${encodeURIComponent(variantId)}`
}

/** The product part of an add's message (item added, reminder): the catalog's title and the variant's price and stock. */
function productOfAdd(
  shop: NotifyShop,
  productId: string,
  variantId: string | null,
  itemHandle: string | null,
  catalog: CatalogView | undefined,
): NotificationProduct {
  const variant = variantId ?? catalog?.defaultVariantId ?? null
  const state = catalog?.variants.find((v) => v.variant_id === variant)
  return {
    productId,
    variantId: variant,
    title: catalog?.title ?? null,
    url: productUrl(shop.domain, itemHandle ?? catalog?.handle ?? null, variant),
    imageUrl: catalog?.imageUrl ?? null,
    price: state?.price ?? null,
    previousPrice: null,
    currency: shop.settings.currency,
    inventoryQuantity: state?.inventory_quantity ?? null,
  }
}

// ---- source 1: product signals ----

/** A queued product signal as product-fan-out.ts keeps it. */
export interface FanOutSignal {
  event: ProductSignal
  variantId: string
  before: { price: string; inventoryQuantity: number }
  after: { price: string; inventoryQuantity: number }
}

export interface FanOutProgress {
  /** Signals whose holders have all been handled. */
  notified: number
  /** The last holder handled of signal `notified` (JSON `[owner_type, owner_id]`), null before the first. */
  notifyAfter: string | null
}

/**
 * Makes the notifications of a queued fan-out's signals for the holders of its product, from
 * `progress` on, NOTIFY_BATCH holders at most (in the caller's transaction). The holders are
 * the owners with a contact who hold the signal's variant (or the product without a variant,
 * when the signal's variant is the catalog's default) not yet bought. Returns how far it got;
 * `notified` = signals.length when done (at once for a shop without channels).
 */
export async function notifyQueuedSignals(
  trx: Transaction<Database>,
  fanOut: { shopId: string; productId: string; handle: string | null; signals: readonly FanOutSignal[] },
  progress: FanOutProgress,
  at: number,
  limit = NOTIFY_BATCH,
): Promise<FanOutProgress & { made: number }> {
  const { shopId, productId, signals } = fanOut
  const done = { notified: signals.length, notifyAfter: null, made: 0 }
  // The one cheap check first: a shop without channels costs nothing more (and its fan-out is done at once).
  const channels = await activeChannels(trx, { id: shopId, uninstalledAt: null })
  if (channels === undefined) return done
  const shop = await notifyShop(trx, shopId)
  if (shop === undefined || shop.uninstalledAt !== null) return done
  const catalog = await catalogView(trx, shopId, productId)
  let { notified, notifyAfter } = progress
  let budget = limit
  let made = 0
  while (notified < signals.length && budget > 0) {
    const s = signals[notified] as FanOutSignal
    const signal = NOTIFICATION_SIGNAL_OF[s.event]
    if (!takesSignal(channels, signal)) {
      notified += 1
      notifyAfter = null
      continue
    }
    const after = notifyAfter === null ? null : (JSON.parse(notifyAfter) as [OwnerType, string])
    const isDefault = catalog?.defaultVariantId === s.variantId
    let q = trx
      .selectFrom('wishlist_items as i')
      .innerJoin('notification_contacts as c', (j) =>
        j.onRef('c.shop_id', '=', 'i.shop_id').onRef('c.owner_type', '=', 'i.owner_type').onRef('c.owner_id', '=', 'i.owner_id'),
      )
      .select(['i.owner_type', 'i.owner_id'])
      .distinct()
      .where('i.shop_id', '=', shopId)
      .where('i.product_id', '=', productId)
      .where('i.purchased_at', 'is', null)
      .where((eb) =>
        isDefault ? eb.or([eb('i.variant_id', '=', s.variantId), eb('i.variant_id', 'is', null)]) : eb('i.variant_id', '=', s.variantId),
      )
    if (after !== null) q = q.where(sql<boolean>`(i.owner_type, i.owner_id) > (${after[0]}, ${after[1]})`)
    const asked = budget
    const holders = await q.orderBy('i.owner_type').orderBy('i.owner_id').limit(asked).execute()
    const product: NotificationProduct = {
      productId,
      variantId: s.variantId,
      title: catalog?.title ?? null,
      url: productUrl(shop.domain, fanOut.handle ?? catalog?.handle ?? null, s.variantId),
      imageUrl: catalog?.imageUrl ?? null,
      price: s.after.price,
      previousPrice: signal === 'price_drop' ? s.before.price : null,
      currency: shop.settings.currency,
      inventoryQuantity: s.after.inventoryQuantity,
    }
    const r = await enqueueNotifications(
      trx,
      shop,
      holders.map((h) => ({ owner: { type: h.owner_type, id: h.owner_id }, signal, productId, variantId: s.variantId, product })),
      at,
      channels,
    )
    made += r.queued + r.suppressed
    budget -= holders.length
    const last = holders.at(-1)
    if (holders.length < asked || last === undefined) {
      // Fewer holders than asked: this signal is done.
      notified += 1
      notifyAfter = null
    } else notifyAfter = JSON.stringify([last.owner_type, last.owner_id])
  }
  return { notified, notifyAfter, made }
}

// ---- sources 2 and 3: item added and reminders ----

type AddKind = 'item_added' | 'reminder'

interface AddRow {
  owner_type: OwnerType
  owner_id: string
  list_id: string
  product_id: string
  variant_id: string | null
  handle: string | null
  added_at: number
  purchased_at: number | null
}

/** The item's place in the cursor's order: JSON `[owner_type, owner_id, list_id, product_id]`. */
const itemKey = (r: Pick<AddRow, 'owner_type' | 'owner_id' | 'list_id' | 'product_id'>) =>
  JSON.stringify([r.owner_type, r.owner_id, r.list_id, r.product_id])

export interface ScheduledResult {
  /** Adds read (each advanced a cursor). */
  read: number
  /** Notifications written (queued or suppressed). */
  made: number
  /** Whether some shop has more adds to read now (call again). */
  more: boolean
}

/** The shops with a channel now (the candidates of the scheduled pass). */
async function shopsWithChannels(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom('notification_channels')
    .select('shop_id')
    .where('check_state', '<>', 'invalid')
    .union(db.selectFrom('shopify_flow_triggers').select('shop_id').where('has_enabled_flow', '=', 1))
    .execute()
  return rows.map((r) => r.shop_id).sort()
}

/**
 * One shop's adds of one kind after its cursor, `limit` at most, made into notifications in
 * one transaction with the cursor moved past them. Item added: adds up to `now − ADD_SETTLE_MS`;
 * reminder: adds up to `now − reminder_after_days`, not bought, of a product the owner has no
 * queued reminder of yet. Adds before the shop had a channel are passed over.
 */
async function scanAdds(db: Db, shopId: string, kind: AddKind, now: number, limit: number): Promise<{ read: number; made: number }> {
  return db.transaction().execute(async (trx) => {
    const channels = await activeChannels(trx, { id: shopId, uninstalledAt: null })
    if (channels === undefined || !takesSignal(channels, kind)) return { read: 0, made: 0 }
    const shop = await notifyShop(trx, shopId)
    if (shop === undefined || shop.uninstalledAt !== null) return { read: 0, made: 0 }
    const cursor = await lockedForUpdate(
      trx.selectFrom('notification_cursors').select(['added_at', 'item_key']).where('shop_id', '=', shopId).where('kind', '=', kind),
      backendOf(trx),
    ).executeTakeFirst()
    const upTo = kind === 'item_added' ? now - ADD_SETTLE_MS : now - shop.settings.reminder_after_days * DAY_MS
    // Adds made before the shop had a channel make nothing (a channel connected later does not replay the past).
    const since = channels.since[kind] ?? now
    let from: { at: number; key: string | null } = { at: since, key: null }
    if (cursor !== undefined && Number(cursor.added_at) >= since) from = { at: Number(cursor.added_at), key: cursor.item_key }
    let q = trx
      .selectFrom('wishlist_items')
      .select(['owner_type', 'owner_id', 'list_id', 'product_id', 'variant_id', 'handle', 'added_at', 'purchased_at'])
      .where('shop_id', '=', shopId)
      .where('added_at', '<=', upTo)
    if (from.key === null) q = q.where('added_at', '>=', from.at)
    else {
      const [t, o, l, p] = JSON.parse(from.key) as [string, string, string, string]
      q = q.where(sql<boolean>`(added_at, owner_type, owner_id, list_id, product_id) > (${from.at}, ${t}, ${o}, ${l}, ${p})`)
    }
    const adds = (await q
      .orderBy('added_at')
      .orderBy('owner_type')
      .orderBy('owner_id')
      .orderBy('list_id')
      .orderBy('product_id')
      .limit(limit)
      .execute()) as AddRow[]
    if (adds.length === 0) return { read: 0, made: 0 }
    let wanted = kind === 'reminder' ? adds.filter((a) => a.purchased_at === null) : adds
    if (kind === 'reminder' && wanted.length > 0) {
      // One reminder per owner and product, whatever the lists and adds.
      const owners = wanted.map((a) => ({ type: a.owner_type, id: a.owner_id }))
      const byOwners = ownersFilter(owners)
      const reminded = new Set(
        (
          await trx
            .selectFrom('notifications')
            .select(['owner_type', 'owner_id', 'product_id'])
            .where('shop_id', '=', shopId)
            .where((eb) => byOwners(eb as never))
            .where('signal', '=', 'reminder')
            .where('state', '=', 'queued')
            .execute()
        ).map((r) => `${ownerKey(r.owner_type, r.owner_id)} ${r.product_id}`),
      )
      const seen = new Set<string>()
      wanted = wanted.filter((a) => {
        const k = `${ownerKey(a.owner_type, a.owner_id)} ${a.product_id}`
        if (reminded.has(k) || seen.has(k)) return false
        seen.add(k)
        return true
      })
    }
    const catalogs = await catalogViews(trx, shopId, [...new Set(wanted.map((a) => a.product_id))])
    const r = await enqueueNotifications(
      trx,
      shop,
      wanted.map((a) => {
        const product = productOfAdd(shop, a.product_id, a.variant_id, a.handle, catalogs.get(a.product_id))
        return {
          owner: { type: a.owner_type, id: a.owner_id },
          signal: kind,
          productId: a.product_id,
          variantId: product.variantId,
          product,
        }
      }),
      now,
      channels,
    )
    const last = adds.at(-1) as AddRow
    const values = { added_at: Number(last.added_at), item_key: itemKey(last), updated_at: now }
    await trx
      .insertInto('notification_cursors')
      .values({ shop_id: shopId, kind, ...values })
      .onConflict((oc) => oc.columns(['shop_id', 'kind']).doUpdateSet(values))
      .execute()
    return { read: adds.length, made: r.queued + r.suppressed }
  })
}

/** Where the next scheduled pass starts in the list of shops. */
let nextStart = 0

/**
 * The scheduled sources, for the notification worker's pass: each shop with a channel has its
 * adds after its cursors made into item-added and reminder notifications, `limit` adds at most
 * in all (an equal part per shop and kind, at least one), one transaction per shop and kind,
 * `limit` of those transactions at most, each call starting one shop further. `more`: some shop
 * read a full part (call again at once). Shops without a channel cost nothing beyond the one
 * query that lists the others.
 */
export async function makeScheduledNotifications(db: Db, now: number, limit: number = NOTIFY_BATCH): Promise<ScheduledResult> {
  const listed = await shopsWithChannels(db)
  const result: ScheduledResult = { read: 0, made: 0, more: false }
  if (listed.length === 0) return result
  // Each call starts one shop further, so that a limit smaller than the shops' share reaches every shop in turn.
  const start = nextStart++ % listed.length
  const shops = [...listed.slice(start), ...listed.slice(0, start)]
  const share = Math.max(1, Math.floor(limit / (shops.length * 2)))
  // At most `limit` scans a call too, so that many shops with nothing new cost a bounded pass.
  let scans = 0
  for (const shopId of shops) {
    for (const kind of ['item_added', 'reminder'] as const) {
      if (result.read >= limit) {
        result.more = true
        return result
      }
      // The shops not reached wait for the next pass (the rotation reaches them); nothing says there is more.
      if (scans++ >= limit) return result
      const r = await scanAdds(db, shopId, kind, now, Math.min(share, limit - result.read))
      result.read += r.read
      result.made += r.made
      if (r.read === share) result.more = true
    }
  }
  return result
}
