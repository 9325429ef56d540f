import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * A Shopify shop's Admin API access (platforms/shopify/admin-api.ts, docs/shopify.md "Admin API
 * access"): its expiring offline access token and refresh token, each sealed with
 * AES-256-GCM (SHOPIFY_TOKEN_KEY; never stored in clear), their expiries (null: none), the
 * granted scopes. `generation` moves on at every write: a refresh is written only over the
 * generation it refreshed (compare-and-swap), and `refresh_lease_until` is the claim of the
 * instance refreshing it, so two instances never spend one refresh token.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema
    .createTable('shopify_access_tokens')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('access_token', 'text', (c) => c.notNull())
    .addColumn('access_expires_at', 'bigint')
    .addColumn('refresh_token', 'text')
    .addColumn('refresh_expires_at', 'bigint')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('generation', 'integer', (c) => c.notNull())
    .addColumn('refresh_lease_until', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('shopify_access_tokens_pk', ['shop_id'])
    .execute()
}
