/**
 * The app proxy's path on each shop (docs/shopify.md, "Paths and languages"). The merchant
 * may change the proxy's subpath (`/apps/wishlist` → `/a/wish`); every proxied request names
 * the real one in its signed `path_prefix`. It is remembered per shop (`storefront_paths`),
 * so links made outside a proxied request (review invitations) point where the storefront
 * serves the pages, and published to the theme extension as an app-data metafield of the
 * app's installation (`app.metafields.wishlist.proxy_path` in Liquid), so the app embed loads
 * the widget from, and links the launcher to, that path. With it, the shop's primary
 * language is read (`shopLocales`, which needs the `read_locales` scope; without it the
 * primary language stays unknown and invitation links carry no language subfolder).
 *
 * Publishing needs the shop's Admin API token: it runs when a new path is seen, and when the
 * shop is granted a token; it runs in the background, a failure is logged and tried again at
 * the next occasion.
 */
import type { FastifyBaseLogger } from 'fastify'
import { LRUCache } from 'lru-cache'
import type { Db } from '../../db/types.js'
import { now } from '../../lib/time.js'
import { storefrontPaths } from '../../modules/storefront/storefront-paths.service.js'
import type { ShopifyAdmin } from './admin-api.js'

/** The metafield the app embed reads: `app.metafields.wishlist.proxy_path`. */
export const PROXY_PATH_METAFIELD = { namespace: 'wishlist', key: 'proxy_path' } as const

const INSTALLATION_QUERY = 'query WishlistInstallation { currentAppInstallation { id } }'
const SET_MUTATION = `mutation WishlistProxyPath($metafields: [MetafieldsSetInput!]!) {
  metafieldsSet(metafields: $metafields) { metafields { namespace key value } userErrors { field message code } }
}`
const LOCALES_QUERY = 'query WishlistShopLocales { shopLocales { locale primary } }'

export function createProxyPaths(deps: { db: Db; admin: Pick<ShopifyAdmin, 'graphql' | 'hasToken'>; log: FastifyBaseLogger }) {
  const { db, admin, log } = deps
  /** The path each shop was last seen with, on this instance: a request with the same path writes nothing. */
  const seen = new LRUCache<string, string>({ max: 10_000 })
  const running = new Map<string, Promise<void>>()

  async function publishNow(shopId: string): Promise<void> {
    const row = await storefrontPaths.get(db, shopId)
    if (row === undefined || !(await admin.hasToken(shopId))) return
    const installation = await admin.graphql<{ currentAppInstallation: { id: string } }>(shopId, INSTALLATION_QUERY)
    const set = await admin.graphql<{ metafieldsSet: { userErrors: { field: string[]; message: string }[] } }>(shopId, SET_MUTATION, {
      metafields: [
        {
          ownerId: installation.currentAppInstallation.id,
          ...PROXY_PATH_METAFIELD,
          type: 'single_line_text_field',
          value: row.proxy_path,
        },
      ],
    })
    if (set.metafieldsSet.userErrors.length > 0) throw new Error(`metafieldsSet: ${JSON.stringify(set.metafieldsSet.userErrors)}`)
    let primaryLocale = row.primary_locale
    try {
      const read = await admin.graphql<{ shopLocales: { locale: string; primary: boolean }[] }>(shopId, LOCALES_QUERY)
      primaryLocale = read.shopLocales.find((l) => l.primary)?.locale ?? primaryLocale
    } catch (err) {
      log.info(
        { shopId, err },
        'the shop’s languages could not be read (read_locales scope?): invitation links carry no language subfolder',
      )
    }
    await storefrontPaths.setPublished(db, shopId, { path: row.proxy_path, primaryLocale }, now())
  }

  /** Publishes the shop's path (one run per shop at a time); never throws. */
  function publish(shopId: string): Promise<void> {
    const current = running.get(shopId)
    if (current !== undefined) return current.then(() => publish(shopId))
    const run = publishNow(shopId)
      .catch((err: unknown) => log.warn({ shopId, err }, 'the app proxy path could not be published to the theme extension'))
      .finally(() => running.delete(shopId))
    running.set(shopId, run)
    return run
  }

  return {
    /** A signed request of the shop named `path`: remembered when new, and published when the metafield holds another. */
    async seen(shopId: string, path: string): Promise<void> {
      if (seen.get(shopId) === path) return
      const row = await storefrontPaths.get(db, shopId)
      if (row?.proxy_path !== path) await storefrontPaths.setProxyPath(db, shopId, path, now())
      seen.set(shopId, path)
      if (row?.published_path !== path) void publish(shopId)
    },
    publish,
    /** Runs still going (tests, shutdown). */
    settled: () => Promise.all([...running.values()]).then(() => undefined),
  }
}

export type ProxyPaths = ReturnType<typeof createProxyPaths>
