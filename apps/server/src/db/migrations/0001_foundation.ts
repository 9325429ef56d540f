import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'
import { withAutoId } from '../dialect.js'

export async function up(db: Kysely<unknown>, backend: Backend): Promise<void> {
  await db.schema
    .createTable('shops')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('domain', 'text', (c) => c.notNull().unique())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('storefront_key', 'text', (c) => c.notNull().unique())
    .addColumn('multi_wishlist_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('reviews_auto_approve', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('share_link_ttl_days', 'integer', (c) => c.notNull().defaultTo(30))
    .addColumn('remove_on_purchase', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('api_keys')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addPrimaryKeyConstraint('api_keys_pk', ['shop_id', 'id'])
    .execute()
  // The token exchange knows only the key id; ids are random, so this index is selective.
  await db.schema.createIndex('api_keys_by_id').on('api_keys').column('id').execute()

  await db.schema
    .createTable('outbox')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('dispatched', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('outbox_pk', ['shop_id', 'id'])
    .execute()
  await db.schema.createIndex('outbox_pending').on('outbox').columns(['dispatched', 'created_at']).execute()

  await withAutoId(db.schema.createTable('analytics_events'), backend)
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('analytics_events_by_time').on('analytics_events').columns(['shop_id', 'occurred_at']).execute()

  await db.schema
    .createTable('wishlist_owners')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('item_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('wishlist_owners_pk', ['shop_id', 'owner_type', 'owner_id'])
    .execute()

  await db.schema
    .createTable('wishlist_lists')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('wishlist_lists_pk', ['shop_id', 'owner_type', 'owner_id', 'id'])
    .addUniqueConstraint('wishlist_lists_name_uq', ['shop_id', 'owner_type', 'owner_id', 'name_key'])
    .execute()

  await db.schema
    .createTable('wishlist_items')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('list_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('variant_id', 'text')
    .addColumn('handle', 'text')
    .addColumn('metadata', 'text')
    .addColumn('added_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('wishlist_items_pk', ['shop_id', 'owner_type', 'owner_id', 'list_id', 'product_id'])
    .execute()
  // A page of one list, newest first, without touching the rest of the list or the shop.
  await db.schema
    .createIndex('wishlist_items_page')
    .on('wishlist_items')
    .columns(['shop_id', 'owner_type', 'owner_id', 'list_id', 'added_at'])
    .execute()
  // Who holds a product (analytics, product events, remove-on-purchase).
  await db.schema.createIndex('wishlist_items_by_product').on('wishlist_items').columns(['shop_id', 'product_id']).execute()

  await db.schema
    .createTable('share_links')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('list_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addPrimaryKeyConstraint('share_links_pk', ['shop_id', 'token'])
    .execute()
  // The public read knows only the token (≥128 random bits, so this index is selective).
  await db.schema.createIndex('share_links_by_token').on('share_links').column('token').execute()
  await db.schema.createIndex('share_links_by_list').on('share_links').columns(['shop_id', 'owner_type', 'owner_id', 'list_id']).execute()

  await db.schema
    .createTable('catalog_products')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('handle', 'text')
    .addColumn('default_variant_id', 'text')
    .addColumn('variants', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('catalog_products_pk', ['shop_id', 'product_id'])
    .execute()
}
