/**
 * A Shopify shop's catalog, backfilled from the Admin API (docs/shopify.md, "The catalog
 * sync"): after the shop's first token exchange, and on demand from the embedded admin.
 *
 * - One bulk operation (`bulkOperationRunQuery`, grouped so that each product's variants follow
 *   it) reads every product's id, handle, title, featured image, `updatedAt` and variants (id, price, inventory
 *   quantity). Shopify builds the file at its own pace at no query cost, where a paginated
 *   `products` query would spend the shop's throttle budget on every page and page variants
 *   again inside each product. The run polls the operation, then streams the JSONL result line
 *   by line: at most CATALOG_SYNC_BATCH products are held at once, whatever the catalog's size.
 * - Products are written through the events intake (`ingest`, the path of the products
 *   webhooks), one batch per transaction, with the product's Shopify `updatedAt`: a product
 *   first seen only sets its baseline (no signal, no event); one held with the same or a newer
 *   `updatedAt` (a webhook newer than the file) is left as it is, so a second sync rewrites
 *   nothing; one held older is brought up to date as a webhook would, its real changes
 *   signalled to the holders (a back-in-stock the file shows is not lost because its webhook
 *   was delivered late).
 * - One run per shop across instances: the run holds the shop's sync row under a lease,
 *   renewed at each poll and batch; a run whose lease passed (its instance stopped) is taken
 *   over at the next sweep, which every instance makes at start and every
 *   CATALOG_SYNC_SWEEP_MS. A run stopped by its instance's shutdown is left `running` for
 *   that takeover.
 */
import { randomUUID } from 'node:crypto'
import { createInterface } from 'node:readline'
import { Readable } from 'node:stream'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import { setTimeout as delay } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../../db/types.js'
import { now } from '../../lib/time.js'
import type { RequestContext } from '../../modules/auth/auth.types.js'
import type { EventsService } from '../../modules/events/events.service.js'
import type { ShopsService } from '../../modules/shops/shops.service.js'
import type { ShopifyAdmin } from './admin-api.js'
import { catalogSyncRepo } from './catalog-sync.repo.js'
import { productEvent } from './shopify-webhooks.service.js'

/** How long a run holds a shop's sync without renewing it (each poll and batch renews it). */
export const CATALOG_SYNC_LEASE_MS = 60_000
/** How often an instance looks for runs to take over. */
export const CATALOG_SYNC_SWEEP_MS = 60_000
/** Products written per transaction, and the most a run holds in memory. */
export const CATALOG_SYNC_BATCH = 100
/** Runs an instance takes over per sweep; the next sweep takes the rest. */
const SWEEP_LIMIT = 10
/** The first wait between two reads of the bulk operation, doubled up to BULK_POLL_MAX_MS. */
const BULK_POLL_MIN_MS = 250
const BULK_POLL_MAX_MS = 5_000
/** Longest download of the result file. */
const RESULT_TIMEOUT_MS = 10 * 60_000
/** Longest error message kept for the admin. */
const MAX_ERROR_LENGTH = 500

/** What the bulk operation reads: only what the catalog keeps. */
export const CATALOG_BULK_QUERY = `{
  products {
    edges {
      node {
        id
        handle
        title
        featuredImage {
          url
        }
        updatedAt
        variants {
          edges {
            node {
              id
              price
              inventoryQuantity
            }
          }
        }
      }
    }
  }
}`

const RUN_BULK = `mutation CatalogSyncRun($query: String!) {
  bulkOperationRunQuery(query: $query, groupObjects: true) {
    bulkOperation { id }
    userErrors { code message }
  }
}`
const CURRENT_BULK = 'query CatalogSyncCurrent { currentBulkOperation(type: QUERY) { id status query } }'
const POLL_BULK = 'query CatalogSyncPoll($id: ID!) { node(id: $id) { ... on BulkOperation { status errorCode url } } }'

interface RunBulkData {
  bulkOperationRunQuery: { bulkOperation: { id: string } | null; userErrors: { code: string | null; message: string }[] }
}
interface CurrentBulkData {
  currentBulkOperation: { id: string; status: string; query: string } | null
}
interface PollBulkData {
  node: { status: string; errorCode: string | null; url: string | null } | null
}

/** A product line of the result, with the variant lines that followed it. */
interface BulkProduct {
  id: string
  handle?: unknown
  title?: unknown
  featuredImage?: unknown
  updatedAt?: unknown
  variants: { id?: unknown; price?: unknown; inventoryQuantity?: unknown }[]
}

/** The run no longer holds the shop's sync (taken over after its lease passed): it stops without writing. */
class LeaseLost extends Error {}

const sameQuery = (a: string, b: string) => a.replace(/\s+/g, ' ').trim() === b.replace(/\s+/g, ' ').trim()
const message = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, MAX_ERROR_LENGTH)

/** A result product as the products webhook's body, for the intake's one mapping of it. */
const asWebhookProduct = (p: BulkProduct) => ({
  id: p.id,
  handle: p.handle,
  title: p.title,
  featuredImage: p.featuredImage,
  updated_at: p.updatedAt,
  variants: p.variants.map((v) => ({ id: v.id, price: v.price, inventory_quantity: v.inventoryQuantity })),
})

export interface CatalogSyncDeps {
  db: Db
  admin: Pick<ShopifyAdmin, 'graphql'>
  shops: Pick<ShopsService, 'get'>
  events: Pick<EventsService, 'ingest'>
  log: FastifyBaseLogger
}

export function createCatalogSync(deps: CatalogSyncDeps) {
  const { db, admin, log } = deps
  /** This instance's runs, by shop. */
  const runs = new Map<string, Promise<void>>()
  const stopping = new AbortController()
  let sweeper: NodeJS.Timeout | undefined

  /** The bulk operation's id: a new one, or the one Shopify still runs for this query (a run taken over). */
  async function startBulk(shopId: string): Promise<string> {
    const { bulkOperationRunQuery: started } = await admin.graphql<RunBulkData>(shopId, RUN_BULK, { query: CATALOG_BULK_QUERY })
    if (started.bulkOperation !== null) return started.bulkOperation.id
    if (started.userErrors.some((e) => e.code === 'OPERATION_IN_PROGRESS')) {
      const { currentBulkOperation: current } = await admin.graphql<CurrentBulkData>(shopId, CURRENT_BULK)
      if (current !== null && ['CREATED', 'RUNNING'].includes(current.status) && sameQuery(current.query, CATALOG_BULK_QUERY))
        return current.id
    }
    throw new Error(`Shopify refused the catalog's bulk query: ${started.userErrors.map((e) => e.message).join('; ')}`)
  }

  /** Polls the operation until it ends, renewing the lease; its result's URL (null: no product). */
  async function completed(shopId: string, runId: string, operationId: string): Promise<string | null> {
    for (let wait = BULK_POLL_MIN_MS; ; wait = Math.min(2 * wait, BULK_POLL_MAX_MS)) {
      const { node } = await admin.graphql<PollBulkData>(shopId, POLL_BULK, { id: operationId })
      if (node === null) throw new Error(`Shopify knows no bulk operation ${operationId}`)
      if (node.status === 'COMPLETED') return node.url
      if (!['CREATED', 'RUNNING'].includes(node.status))
        throw new Error(`Shopify's bulk operation ended ${node.status}${node.errorCode === null ? '' : ` (${node.errorCode})`}`)
      if (!(await catalogSyncRepo.progress(db, shopId, runId, 0, 0, now() + CATALOG_SYNC_LEASE_MS))) throw new LeaseLost()
      await delay(wait, undefined, { signal: stopping.signal })
    }
  }

  /** Streams the result into the catalog, CATALOG_SYNC_BATCH products per transaction. */
  async function apply(ctx: RequestContext, runId: string, url: string): Promise<void> {
    const res = await fetch(url, { signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(RESULT_TIMEOUT_MS)]) })
    if (!res.ok || res.body === null) throw new Error(`Shopify's bulk result could not be read (${res.status})`)
    const lines = createInterface({ input: Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), crlfDelay: Infinity })
    let read = 0
    let changed = 0
    let batch: BulkProduct[] = []
    let product: BulkProduct | undefined
    const write = async () => {
      const events = batch.map((p) => productEvent(asWebhookProduct(p))).filter((e) => e !== null)
      const { accepted, stale } = await deps.events.ingest(ctx, events as { type: string }[])
      read += batch.length
      changed += accepted - stale
      batch = []
      if (!(await catalogSyncRepo.progress(db, ctx.shop.id, runId, read, changed, now() + CATALOG_SYNC_LEASE_MS))) throw new LeaseLost()
    }
    for await (const line of lines) {
      if (line.trim() === '') continue
      const node = JSON.parse(line) as Record<string, unknown>
      if (typeof node.__parentId === 'string') {
        // Grouped results put a product's variants right after it.
        if (product?.id !== node.__parentId) throw new Error("Shopify's bulk result lists a variant away from its product")
        product.variants.push(node)
        continue
      }
      if (product !== undefined) batch.push(product)
      if (batch.length >= CATALOG_SYNC_BATCH) await write()
      product = { ...node, id: String(node.id), variants: [] }
    }
    if (product !== undefined) batch.push(product)
    if (batch.length > 0) await write()
  }

  async function run(shopId: string, runId: string): Promise<void> {
    let error: string | null = null
    try {
      const shop = await deps.shops.get(shopId)
      if (shop === undefined) throw new Error('The shop is gone')
      const url = await completed(shopId, runId, await startBulk(shopId))
      const ctx: RequestContext = { shop, actor: { kind: 'admin', keyId: 'shopify-catalog-sync' }, requestId: runId }
      if (url !== null) await apply(ctx, runId, url)
    } catch (err) {
      // Taken over, or stopped with the instance: the run that holds the sync (or takes it over) finishes it.
      if (err instanceof LeaseLost || stopping.signal.aborted) return
      error = message(err)
      log.warn({ shopId, err: error }, 'Shopify catalog sync failed')
    }
    await catalogSyncRepo.finish(db, shopId, runId, { error, at: now() })
  }

  /** Starts the shop's sync in the background, unless a run holds it already. */
  async function start(shopId: string): Promise<void> {
    const runId = randomUUID()
    const at = now()
    if (!stopping.signal.aborted && (await catalogSyncRepo.claim(db, shopId, runId, at, at + CATALOG_SYNC_LEASE_MS))) {
      const running = run(shopId, runId)
        .catch((err: unknown) => log.error({ shopId, err: message(err) }, 'Shopify catalog sync could not record its end'))
        .finally(() => runs.delete(shopId))
      runs.set(shopId, running)
    }
  }

  /** Takes over the runs whose lease passed. */
  async function sweep(): Promise<void> {
    try {
      for (const shopId of await catalogSyncRepo.abandoned(db, now(), SWEEP_LIMIT)) await start(shopId)
    } catch (err) {
      log.warn({ err: message(err) }, 'Shopify catalog sync sweep failed: tried again at the next one')
    }
  }

  return {
    start,

    /** Sweeps now and every CATALOG_SYNC_SWEEP_MS until `close`. */
    startSweeping(): Promise<void> {
      sweeper = setInterval(() => void sweep(), CATALOG_SYNC_SWEEP_MS).unref()
      return sweep()
    },

    /** Stops sweeping and this instance's runs (left `running`, for a takeover), and waits for them. */
    async close(): Promise<void> {
      clearInterval(sweeper)
      stopping.abort()
      await Promise.allSettled(runs.values())
    },
  }
}

export type CatalogSync = ReturnType<typeof createCatalogSync>
