import type { Kysely } from 'kysely'
import { type Migration, type MigrationProvider, type MigrationResultSet, Migrator } from 'kysely/migration'
import type { Backend, Db } from './types.js'
import type { Storage } from './connect.js'
import { currentSchema } from './dialect.js'
import * as m0001 from './migrations/0001_foundation.js'
import * as m0002 from './migrations/0002_wishlists.js'
import * as m0003 from './migrations/0003_webhooks.js'
import * as m0004 from './migrations/0004_reviews.js'
import * as m0005 from './migrations/0005_analytics.js'
import * as m0006 from './migrations/0006_owner_versions.js'
import * as m0007 from './migrations/0007_analytics_inbox.js'
import * as m0008 from './migrations/0008_outbox_retention.js'
import * as m0009 from './migrations/0009_webhook_delivery_retention.js'
import * as m0010 from './migrations/0010_shop_first_keys.js'
import * as m0011 from './migrations/0011_queued_fan_out.js'
import * as m0012 from './migrations/0012_list_name_keys.js'
import * as m0013 from './migrations/0013_review_invitations.js'
import * as m0014 from './migrations/0014_shopify_app.js'
import * as m0015 from './migrations/0015_shopify_receipt_retention.js'
import * as m0016 from './migrations/0016_wish_to_purchase.js'
import * as m0019 from './migrations/0019_catalog_titles.js'
import * as m0020 from './migrations/0020_packed_purchase_lags.js'
import * as m0021 from './migrations/0021_share_link_notify.js'
import * as m0022 from './migrations/0022_shopify_webhook_proofs.js'
import * as m0023 from './migrations/0023_exact_revenue_sums.js'
import * as m0024 from './migrations/0024_shopify_access_tokens.js'
import * as m0025 from './migrations/0025_shopify_catalog_syncs.js'
import * as m0026 from './migrations/0026_shopify_subscriptions.js'
import * as m0027 from './migrations/0027_one_statement_writes.js'
import * as m0028 from './migrations/0028_purchase_lag_totals.js'
import * as m0029 from './migrations/0029_storefront_paths_and_invitation_locales.js'
import * as m0030 from './migrations/0030_notification_channels.js'
import * as m0031 from './migrations/0031_shopify_flow_triggers.js'
import * as m0032 from './migrations/0032_shopper_notifications.js'
import * as m0033 from './migrations/0033_channel_attribution.js'
import * as m0034 from './migrations/0034_notification_frequency.js'
import * as m0035 from './migrations/0035_catalog_images.js'
import * as m0036 from './migrations/0036_notification_send_leases.js'
import * as m0037 from './migrations/0037_shop_currency.js'
import * as m0038 from './migrations/0038_owner_version_notice.js'
import * as m0039 from './migrations/0039_owner_version_notice_dropped.js'

interface BackendMigration {
  up(db: Kysely<unknown>, backend: Backend): Promise<void>
}

/** Ordered by name; add new files here. Each migration may branch on the backend. */
const MIGRATIONS: Record<string, BackendMigration> = {
  '0001_foundation': m0001,
  '0002_wishlists': m0002,
  '0003_webhooks': m0003,
  '0004_reviews': m0004,
  '0005_analytics': m0005,
  '0006_owner_versions': m0006,
  '0007_analytics_inbox': m0007,
  '0008_outbox_retention': m0008,
  '0009_webhook_delivery_retention': m0009,
  '0010_shop_first_keys': m0010,
  '0011_queued_fan_out': m0011,
  '0012_list_name_keys': m0012,
  '0013_review_invitations': m0013,
  '0014_shopify_app': m0014,
  '0015_shopify_receipt_retention': m0015,
  '0016_wish_to_purchase': m0016,
  '0019_catalog_titles': m0019,
  '0020_packed_purchase_lags': m0020,
  '0021_share_link_notify': m0021,
  '0022_shopify_webhook_proofs': m0022,
  '0023_exact_revenue_sums': m0023,
  '0024_shopify_access_tokens': m0024,
  '0025_shopify_catalog_syncs': m0025,
  '0026_shopify_subscriptions': m0026,
  '0027_one_statement_writes': m0027,
  '0028_purchase_lag_totals': m0028,
  '0029_storefront_paths_and_invitation_locales': m0029,
  '0030_notification_channels': m0030,
  '0031_shopify_flow_triggers': m0031,
  '0032_shopper_notifications': m0032,
  '0033_channel_attribution': m0033,
  '0034_notification_frequency': m0034,
  '0035_catalog_images': m0035,
  '0036_notification_send_leases': m0036,
  '0037_shop_currency': m0037,
  '0038_owner_version_notice': m0038,
  '0039_owner_version_notice_dropped': m0039,
}

class StaticProvider implements MigrationProvider {
  constructor(private readonly backend: Backend) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {}
    for (const [name, m] of Object.entries(MIGRATIONS)) {
      out[name] = { up: (db) => m.up(db, this.backend) }
    }
    return out
  }
}

/** The migrations this code knows, oldest first: a database that has applied others is newer than the code. */
export const KNOWN_MIGRATIONS: readonly string[] = Object.keys(MIGRATIONS)

/** Applies pending migrations; safe to run concurrently from several processes (Kysely locks). */
export const migrateToLatest = (storage: Storage): Promise<string[]> => migrate(storage, (m) => m.migrateToLatest())

/** Applies pending migrations up to and including `name` (tests that rebuild an older schema). */
export const migrateTo = (storage: Storage, name: string): Promise<string[]> => migrate(storage, (m) => m.migrateTo(name))

/**
 * Over the storage's session connection (DATABASE_DIRECT_URL behind a transaction pooler):
 * Kysely's migrator takes a lock and reads its bookkeeping between transactions.
 */
async function migrate(storage: Storage, step: (migrator: Migrator) => Promise<MigrationResultSet>): Promise<string[]> {
  return storage.session ? storage.session((db) => migrateOver(db, storage.backend, step)) : migrateOver(storage.db, storage.backend, step)
}

async function migrateOver(db: Db, backend: Backend, step: (migrator: Migrator) => Promise<MigrationResultSet>): Promise<string[]> {
  // Kysely looks for its bookkeeping tables across every schema it can see unless told
  // which one to use; pin it to the connection's own (search_path) schema so databases
  // holding several schemas (one per test file, or per tenant group) never mix them up.
  const migrationTableSchema = await currentSchema(db)
  const migrator = new Migrator({
    db,
    provider: new StaticProvider(backend),
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  })
  let { error, results } = await step(migrator)
  // Before it runs anything, Kysely's migrator lists the tables of every schema it can see
  // (pg_get_serial_sequence per column), which fails when another schema of the database is
  // being altered or dropped at that moment (other test files, other tenants' migrations):
  // "schema … does not exist", "column … does not exist". Nothing was applied; try again.
  for (let tries = 1; error && backend === 'postgres' && !results?.some((r) => r.status === 'Error') && tries < 5; tries++) {
    const code = (error as { code?: unknown }).code
    if (code !== '3F000' && code !== '42703' && code !== '42P01') break
    ;({ error, results } = await step(migrator))
  }
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`)
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
