import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * A Shopify shop's catalog sync (platforms/shopify/catalog-sync.ts, docs/shopify.md "The
 * catalog sync"): one row per shop, absent until its first sync. `state` is `running`, `done`
 * or `failed`; `products_read` and `products_changed` count the current (or last) run's
 * products; `error` says why a run failed. `run_id` names the run that holds the row and
 * `lease_until` how long it holds it: a running sync whose lease has passed (its instance
 * stopped or crashed) is taken over by another run.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema
    .createTable('shopify_catalog_syncs')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('lease_until', 'bigint', (c) => c.notNull())
    .addColumn('products_read', 'integer', (c) => c.notNull())
    .addColumn('products_changed', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .addPrimaryKeyConstraint('shopify_catalog_syncs_pk', ['shop_id'])
    .execute()
  // The sweep for runs to take over reads the running ones only.
  await db.schema.createIndex('shopify_catalog_syncs_running').on('shopify_catalog_syncs').columns(['state', 'lease_until']).execute()
}
