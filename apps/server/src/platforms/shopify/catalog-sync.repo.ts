/**
 * A Shopify shop's catalog sync (`shopify_catalog_syncs`, one row per shop): its state and the
 * lease of the run that holds it. Every write of a run names its `run_id`: a run whose lease
 * was taken over writes nothing more, and learns it from the write's result.
 */
import type { Selectable } from 'kysely'
import type { ShopifyCatalogSyncsTable } from '../../db/schema.js'
import type { Db } from '../../db/types.js'

export type CatalogSyncRow = Selectable<ShopifyCatalogSyncsTable>

export const catalogSyncRepo = {
  get(db: Db, shopId: string): Promise<CatalogSyncRow | undefined> {
    return db.selectFrom('shopify_catalog_syncs').selectAll().where('shop_id', '=', shopId).executeTakeFirst()
  },

  /**
   * Starts run `runId` of the shop's sync, holding it until `leaseUntil`: a first sync, one
   * after the last ended, or a takeover of a running one whose lease has passed. False when
   * another run holds it.
   */
  async claim(db: Db, shopId: string, runId: string, at: number, leaseUntil: number): Promise<boolean> {
    const run = {
      state: 'running' as const,
      run_id: runId,
      lease_until: leaseUntil,
      products_read: 0,
      products_changed: 0,
      error: null,
      started_at: at,
      finished_at: null,
    }
    const claimed = await db
      .insertInto('shopify_catalog_syncs')
      .values({ shop_id: shopId, ...run })
      .onConflict((oc) =>
        oc
          .column('shop_id')
          .doUpdateSet(run)
          .where((eb) => eb.or([eb('shopify_catalog_syncs.state', '!=', 'running'), eb('shopify_catalog_syncs.lease_until', '<=', at)])),
      )
      .returning('run_id')
      .executeTakeFirst()
    return claimed?.run_id === runId
  },

  /** The shops whose running sync's lease has passed at `at` (their run stopped): at most `limit`. */
  async abandoned(db: Db, at: number, limit: number): Promise<string[]> {
    const rows = await db
      .selectFrom('shopify_catalog_syncs')
      .select('shop_id')
      .where('state', '=', 'running')
      .where('lease_until', '<=', at)
      .orderBy('lease_until')
      .limit(limit)
      .execute()
    return rows.map((r) => r.shop_id)
  },

  /** The run's counts so far, its lease moved on to `leaseUntil`; false when the run no longer holds the sync. */
  async progress(db: Db, shopId: string, runId: string, read: number, changed: number, leaseUntil: number): Promise<boolean> {
    const res = await db
      .updateTable('shopify_catalog_syncs')
      .set({ products_read: read, products_changed: changed, lease_until: leaseUntil })
      .where('shop_id', '=', shopId)
      .where('run_id', '=', runId)
      .where('state', '=', 'running')
      .executeTakeFirst()
    return res.numUpdatedRows > 0n
  },

  /** Ends the run: `done`, or `failed` with its error. */
  async finish(db: Db, shopId: string, runId: string, end: { error: string | null; at: number }): Promise<void> {
    await db
      .updateTable('shopify_catalog_syncs')
      .set({ state: end.error === null ? 'done' : 'failed', error: end.error, finished_at: end.at, lease_until: end.at })
      .where('shop_id', '=', shopId)
      .where('run_id', '=', runId)
      .where('state', '=', 'running')
      .execute()
  },
}
