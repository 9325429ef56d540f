/**
 * Bulk import (docs/api.md, "Wishlists", import; growth plan, admin token): ≤ 500 items into each customer's
 * default list, all validated before anything is written, in one transaction. Skips items
 * already stored, repeated within the call, or beyond the item limit. Records analytics
 * adds; emits no webhooks. `dry_run` computes the same figures and writes nothing.
 */
import type { Static } from 'typebox'
import type { Db } from '../../db/types.js'
import { platformIdOf } from '../../lib/platform-ids.js'
import { now } from '../../lib/time.js'
import type { Owner, RequestContext } from '../auth/auth.types.js'
import { type AnalyticsFact, recordFacts } from '../analytics/facts.js'
import { type NewItem, wishlistsRepo } from './wishlists.repo.js'
import { addedAtOf, addFacts, serializeMetadata } from './wishlists.service.js'
import { itemFieldsOf } from './item-fields.js'
import { DEFAULT_LIST_ID, type ImportBody, type ImportResult, ITEM_LIMIT } from './wishlists.schemas.js'

export function createImportService(deps: { db: Db }) {
  const { db } = deps

  return {
    async run(ctx: RequestContext, input: Static<typeof ImportBody>['items'], dryRun: boolean): Promise<Static<typeof ImportResult>> {
      const shopId = ctx.shop.id
      const at = now()
      // Validate everything first: one bad item refuses the whole call, naming its index.
      const byCustomer = new Map<string, NewItem[]>()
      for (const [index, item] of input.entries()) {
        const customerId = platformIdOf(item.customer_id, 'Customer', `body.items.${index}.customer_id`)
        const fields = itemFieldsOf(item, `body.items.${index}`, index)
        const row: NewItem = {
          list_id: DEFAULT_LIST_ID,
          product_id: platformIdOf(item.product_id, 'Product', `body.items.${index}.product_id`),
          variant_id:
            item.variant_id === undefined ? null : platformIdOf(item.variant_id, 'ProductVariant', `body.items.${index}.variant_id`),
          handle: item.handle ?? null,
          metadata: serializeMetadata(item.metadata, `body.items.${index}.metadata`, index),
          added_at: addedAtOf(item.added_at, at),
          quantity: fields.quantity ?? 1,
          note: fields.note ?? null,
          priority: fields.priority ?? 'normal',
          purchased_at: null,
        }
        const list = byCustomer.get(customerId)
        if (list) list.push(row)
        else byCustomer.set(customerId, [row])
      }

      let imported = 0
      let skipped = 0
      await db.transaction().execute(async (trx) => {
        const facts: AnalyticsFact[] = []
        // Owners are locked in id order so that concurrent imports cannot deadlock.
        for (const customerId of [...byCustomer.keys()].sort()) {
          const owner: Owner = { type: 'customer', id: customerId }
          const rows = byCustomer.get(customerId) ?? []
          const ownerRow = dryRun
            ? await wishlistsRepo.getOwner(trx, shopId, owner)
            : await wishlistsRepo.ensureOwner(trx, shopId, owner, at)
          const unique = new Map<string, NewItem>()
          for (const r of rows) if (!unique.has(r.product_id)) unique.set(r.product_id, r)
          const present = ownerRow
            ? await wishlistsRepo.present(trx, shopId, owner, DEFAULT_LIST_ID, [...unique.keys()])
            : new Set<string>()
          const fresh = [...unique.values()].filter((r) => !present.has(r.product_id))
          const added = fresh.slice(0, Math.max(0, ITEM_LIMIT - (ownerRow?.item_count ?? 0)))
          imported += added.length
          skipped += rows.length - added.length
          if (dryRun || added.length === 0) continue
          await wishlistsRepo.insertItems(trx, shopId, owner, added)
          await wishlistsRepo.adjustItemCount(trx, shopId, owner, added.length, at)
          facts.push(
            ...addFacts(
              'add',
              owner,
              added.map((a) => a.product_id),
              at,
            ),
          )
        }
        // One batch for the whole call, last: the shop's analytics rollup rows are shared by
        // every writer of the shop, so they are locked only from here to the commit rather
        // than across every owner of the import, where concurrent imports queued on them
        // (docs/performance.md, "Changes for writes").
        await recordFacts(trx, shopId, facts)
      })
      return { customers: byCustomer.size, imported, skipped, dry_run: dryRun }
    },
  }
}

export type ImportService = ReturnType<typeof createImportService>
