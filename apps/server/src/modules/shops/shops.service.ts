import { LRUCache } from 'lru-cache'
import type { Db } from '../../db/types.js'
import { lockShopRow } from '../../db/dialect.js'
import type { KeyScope, Plan, ShopUpdate } from '../../db/schema.js'
import { AppError, notFound, invalid } from '../../lib/errors.js'
import { newId, newSecret } from '../../lib/ids.js'
import { hashSecret } from '../../lib/secrets.js'
import { now } from '../../lib/time.js'
import { apiKeysRepo } from '../auth/api-keys.repo.js'
import { shopsRepo } from './shops.repo.js'
import type { Shop, ShopSettings } from './shops.types.js'

export interface CreatedShop {
  shop: Shop
  apiKey: { keyId: string; secret: string; scope: KeyScope }
}

export interface CreatedKey {
  keyId: string
  secret: string
  name: string
  scope: KeyScope
  createdAt: number
}

/** Active API keys per shop; revoked keys do not count (revoking one frees its place). */
export const MAX_API_KEYS_PER_SHOP = 50

const DOMAIN = /^(?=.{3,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/

export function normalizeDomain(input: string): string {
  const domain = input.trim().toLowerCase()
  if (!DOMAIN.test(domain))
    throw invalid(
      [{ path: 'domain', message: 'must be a host name such as example.myshopify.com' }],
      `"${input}" is not a valid shop domain`,
    )
  return domain
}

/**
 * Shops, their settings, plans, API keys and storefront key. Reads of shops go through a
 * short-lived cache (credentialCacheTtlMs); this node invalidates it on every write, other
 * nodes see a change within the TTL.
 */
export function createShopsService(deps: { db: Db; cacheTtlMs: number }) {
  const { db } = deps
  // Concurrent loads of one shop share one query (`fetch`); a cache TTL of 0 keeps nothing past a millisecond.
  const cacheOptions = { max: 10_000, ttl: Math.max(1, deps.cacheTtlMs), ignoreFetchAbort: true }
  const byId: LRUCache<string, Shop> = new LRUCache({ ...cacheOptions, fetchMethod: async (id) => filed(await shopsRepo.byId(db, id)) })
  const byStorefrontKey: LRUCache<string, Shop> = new LRUCache({
    ...cacheOptions,
    fetchMethod: async (key) => filed(await shopsRepo.byStorefrontKey(db, key)),
  })
  const byDomainCache: LRUCache<string, Shop> = new LRUCache({
    ...cacheOptions,
    fetchMethod: async (domain) => filed(await shopsRepo.byDomain(db, domain)),
  })
  const filed = (shop: Shop | undefined) => shop && remember(shop)

  function remember(shop: Shop): Shop {
    byId.set(shop.id, shop)
    byStorefrontKey.set(shop.storefrontKey, shop)
    byDomainCache.set(shop.domain, shop)
    return shop
  }

  function forget(shop: Shop): void {
    byId.delete(shop.id)
    byStorefrontKey.delete(shop.storefrontKey)
    byDomainCache.delete(shop.domain)
  }

  const newShopRow = (id: string, domain: string, plan: Plan, at: number) => ({
    id,
    domain,
    plan,
    storefront_key: newSecret('sfk', 128),
    multi_wishlist_enabled: 0,
    reviews_auto_approve: 0,
    share_link_ttl_days: 30,
    remove_on_purchase: 0,
    created_at: at,
    updated_at: at,
  })

  async function mustGet(shopId: string): Promise<Shop> {
    const shop = await shopsRepo.byId(db, shopId)
    if (!shop) throw notFound('Shop')
    return shop
  }

  async function update(shopId: string, patch: ShopUpdate): Promise<Shop> {
    const before = await mustGet(shopId)
    const after = await shopsRepo.update(db, shopId, { ...patch, updated_at: now() })
    forget(before)
    if (!after) throw notFound('Shop')
    return remember(after)
  }

  /**
   * The shop of a domain a signed Shopify request proved, created when unknown (the plan
   * given, default settings, a storefront key, no API key). Concurrent first requests
   * create it once: the loser of the unique domain index reads the winner's row.
   */
  async function ensureByDomain(domain: string, plan: Plan): Promise<Shop> {
    const known = await byDomainCache.fetch(domain)
    if (known) return known
    const at = now()
    const shopId = newId('shop')
    try {
      await shopsRepo.insert(db, newShopRow(shopId, normalizeDomain(domain), plan, at))
    } catch (err) {
      const raced = await shopsRepo.byDomain(db, domain)
      if (raced) return remember(raced)
      throw err
    }
    return remember(await mustGet(shopId))
  }

  return {
    async create(input: { domain: string; plan: Plan }): Promise<CreatedShop> {
      const domain = normalizeDomain(input.domain)
      const at = now()
      const shopId = newId('shop')
      const keyId = newId('ak')
      const secret = newSecret('sk')
      await db.transaction().execute(async (trx) => {
        if (await shopsRepo.domainTaken(trx, domain)) {
          throw invalid([{ path: 'domain', message: 'already exists' }], `A shop with domain ${domain} already exists`)
        }
        await shopsRepo.insert(trx, newShopRow(shopId, domain, input.plan, at))
        await apiKeysRepo.insert(trx, shopId, {
          id: keyId,
          name: 'Default admin key',
          scope: 'admin',
          secret_hash: hashSecret(secret),
          created_at: at,
        })
      })
      return { shop: await mustGet(shopId), apiKey: { keyId, secret, scope: 'admin' } }
    },

    async get(shopId: string): Promise<Shop | undefined> {
      return byId.fetch(shopId)
    },

    async byStorefrontKey(key: string): Promise<Shop | undefined> {
      return byStorefrontKey.fetch(key)
    },

    /** `get` and `byStorefrontKey` while their answer is cached (the request hooks' synchronous path); undefined otherwise. */
    cached: (shopId: string): Shop | undefined => byId.get(shopId),
    cachedByStorefrontKey: (key: string): Shop | undefined => byStorefrontKey.get(key),

    byDomain: (domain: string) => shopsRepo.byDomain(db, normalizeDomain(domain)),

    /** `byDomain` of an already normalized domain, through the cache (the app proxy's path). */
    byDomainCached: (domain: string): Promise<Shop | undefined> => byDomainCache.fetch(domain),

    ensureByDomain,

    /** Sets or clears `uninstalledAt` (Shopify's `app/uninstalled`, and the next signed request). */
    async setUninstalled(shopId: string, at: number | null): Promise<Shop> {
      return update(shopId, { uninstalled_at: at })
    },

    /**
     * The shop a signed Shopify request to the app proved (a session token, a fresh app-proxy
     * request), signed at `signedAtSeconds`: created when unknown, and installed again when it
     * was uninstalled no later than that second (a request signed before the uninstall, still
     * in flight, does not undo it). The only way a shop is installed: webhooks never are.
     */
    async install(domain: string, plan: Plan, signedAtSeconds: number): Promise<Shop> {
      const shop = await ensureByDomain(domain, plan)
      if (shop.uninstalledAt === null || signedAtSeconds < Math.floor(shop.uninstalledAt / 1000)) return shop
      return update(shop.id, { uninstalled_at: null })
    },

    /** Shopify's `app/uninstalled`: the shop uninstalled at `at`, its Shopify id kept when it had none. */
    async uninstall(shopId: string, at: number, shopifyShopId: string): Promise<Shop> {
      const before = await mustGet(shopId)
      return update(shopId, { uninstalled_at: at, ...(before.shopifyShopId === null ? { shopify_shop_id: shopifyShopId } : {}) })
    },

    /**
     * The shop's numeric id at Shopify, as the Admin API gives it (it replaces one an
     * `app/uninstalled` body gave), and its store currency, kept as the `currency` setting
     * only when the shop has none (a merchant's own choice stays).
     */
    async setShopifyShopId(shopId: string, shopifyShopId: string, currency: string | null = null): Promise<Shop> {
      const before = await mustGet(shopId)
      const after = await shopsRepo.setShopifyShop(db, shopId, shopifyShopId, currency, now())
      forget(before)
      if (!after) throw notFound('Shop')
      return remember(after)
    },

    /** Drops every cached copy of the shop (after it was deleted). */
    forget,

    setPlan: (shopId: string, plan: Plan) => update(shopId, { plan }),

    async updateSettings(shopId: string, patch: Partial<ShopSettings>): Promise<Shop> {
      const row: ShopUpdate = {}
      if (patch.multi_wishlist_enabled !== undefined) row.multi_wishlist_enabled = patch.multi_wishlist_enabled ? 1 : 0
      if (patch.reviews_auto_approve !== undefined) row.reviews_auto_approve = patch.reviews_auto_approve ? 1 : 0
      if (patch.remove_on_purchase !== undefined) row.remove_on_purchase = patch.remove_on_purchase ? 1 : 0
      if (patch.share_link_ttl_days !== undefined) row.share_link_ttl_days = patch.share_link_ttl_days
      if (patch.attribution_window_days !== undefined) row.attribution_window_days = patch.attribution_window_days
      if (patch.notification_cooldown_hours !== undefined) row.notification_cooldown_hours = patch.notification_cooldown_hours
      if (patch.notifications_per_day !== undefined) row.notifications_per_day = patch.notifications_per_day
      if (patch.reminder_after_days !== undefined) row.reminder_after_days = patch.reminder_after_days
      if (patch.currency !== undefined) row.currency = patch.currency
      if (patch.storefront_strings !== undefined)
        row.storefront_strings = patch.storefront_strings === null ? null : JSON.stringify(patch.storefront_strings)
      return update(shopId, row)
    },

    async rotateStorefrontKey(shopId: string): Promise<Shop> {
      return update(shopId, { storefront_key: newSecret('sfk', 128) })
    },

    async createApiKey(shopId: string, input: { name?: string | undefined; scope?: KeyScope | undefined }): Promise<CreatedKey> {
      const key: CreatedKey = {
        keyId: newId('ak'),
        secret: newSecret('sk'),
        name: input.name?.trim() || (input.scope === 'customer' ? 'Customer key' : 'Admin key'),
        scope: input.scope ?? 'admin',
        createdAt: now(),
      }
      await db.transaction().execute(async (trx) => {
        // Serialises concurrent creates of one shop so the limit holds.
        await lockShopRow(trx, shopId, 'update')
        if ((await apiKeysRepo.countActive(trx, shopId)) >= MAX_API_KEYS_PER_SHOP) {
          throw new AppError('KEY_LIMIT', `A shop can have at most ${MAX_API_KEYS_PER_SHOP} active API keys; revoke one first`, {
            limit: MAX_API_KEYS_PER_SHOP,
          })
        }
        await apiKeysRepo.insert(trx, shopId, {
          id: key.keyId,
          name: key.name,
          scope: key.scope,
          secret_hash: hashSecret(key.secret),
          created_at: key.createdAt,
        })
      })
      return key
    },

    listApiKeys: (shopId: string) => apiKeysRepo.listActive(db, shopId),
  }
}

export type ShopsService = ReturnType<typeof createShopsService>
