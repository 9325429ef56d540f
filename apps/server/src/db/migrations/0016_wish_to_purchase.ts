import { type Kysely, sql } from 'kysely'
import type { Backend } from '../types.js'

/**
 * From wish to purchase (docs/api.md, "Item fields" and "Conversions"):
 * - `wishlist_items` gains `quantity` (1), `note` (null), `priority` ('normal') and
 *   `purchased_at` (null): every existing row keeps its content and takes the defaults.
 * - `shops.attribution_window_days` (30).
 * - `orders`: the order ids a shop's `order.created` events applied (a repeat applies once).
 * - Attribution read models, kept like the other rollups (modules/analytics/conversions.ts):
 *   `analytics_holdings.held_since`, `analytics_releases` (when an owner last stopped holding
 *   a product), `analytics_signals` (back-in-stock, price-drop and low-stock signals by
 *   product), `analytics_daily`'s order columns, `analytics_revenue_daily` and
 *   `analytics_product_revenue` (minor units per currency), `analytics_purchase_lags`
 *   (days from add to purchase, in tenths of a day, by the add's day), `analytics_currencies`.
 */
export async function up(db: Kysely<unknown>, backend: Backend): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  const addColumns = async (table: string, columns: [string, string][]) => {
    for (const [name, type] of columns) await sql`alter table ${sql.table(table)} add column ${sql.raw(name)} ${sql.raw(type)}`.execute(db)
  }
  await addColumns('wishlist_items', [
    ['quantity', 'integer not null default 1'],
    ['note', 'text'],
    ['priority', "text not null default 'normal'"],
    ['purchased_at', 'bigint'],
  ])
  await addColumns('shops', [['attribution_window_days', 'integer not null default 30']])
  await addColumns('analytics_holdings', [['held_since', 'bigint']])
  await addColumns('analytics_daily', [
    ['orders_influenced', 'integer not null default 0'],
    ['lines_influenced', 'integer not null default 0'],
    ['purchased', 'integer not null default 0'],
    ['signal_back_in_stock', 'integer not null default 0'],
    ['signal_price_dropped', 'integer not null default 0'],
    ['signal_low_stock', 'integer not null default 0'],
  ])
  // Pairs held before this migration: since their oldest item.
  await sql`update analytics_holdings set held_since = (
      select min(i.added_at) from wishlist_items i
      where i.shop_id = analytics_holdings.shop_id and i.owner_type = analytics_holdings.owner_type
        and i.owner_id = analytics_holdings.owner_id and i.product_id = analytics_holdings.product_id)`.execute(db)

  await db.schema
    .createTable('orders')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('orders_pk', ['shop_id', 'order_id'])
    .execute()

  await db.schema
    .createTable('analytics_releases')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('held_since', 'bigint')
    .addColumn('released_at', 'bigint', (c) => c.notNull())
    .addColumn('purchased', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('analytics_releases_pk', ['shop_id', 'owner_type', 'owner_id', 'product_id'])
    .execute()

  await db.schema
    .createTable('analytics_signals')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('signal', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_signals_pk', ['shop_id', 'product_id', 'at', 'signal'])
    .execute()

  await db.schema
    .createTable('analytics_revenue_daily')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_revenue_daily_pk', ['shop_id', 'day', 'currency'])
    .execute()

  await db.schema
    .createTable('analytics_purchase_lags')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('lag', 'integer', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_purchase_lags_pk', ['shop_id', 'day', 'lag'])
    .execute()

  await db.schema
    .createTable('analytics_product_revenue')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('purchases', 'integer', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_product_revenue_pk', ['shop_id', 'product_id', 'currency'])
    .execute()
  // top-products?sort=revenue reads the first `limit` entries of one currency and stops.
  await db.schema
    .createIndex('analytics_product_revenue_top')
    .on('analytics_product_revenue')
    .columns(['shop_id', 'currency', 'amount desc', 'product_id'])
    .execute()

  await db.schema
    .createTable('analytics_currencies')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('lines', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_currencies_pk', ['shop_id', 'currency'])
    .execute()
  void backend
}
