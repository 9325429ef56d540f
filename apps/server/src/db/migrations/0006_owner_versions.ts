import { type Kysely, sql } from 'kysely'
import type { Backend } from '../types.js'

/**
 * `wishlist_owners.version`, the key of the GET-page cache (modules/wishlists/page-cache.ts):
 * it changes in the writing transaction whenever anything the owner's page shows changes
 * (their items or lists, or the catalog default variant of a product they hold). Triggers
 * keep it, so every writer (API, events intake, privacy CLI) moves it. Values are never
 * reused for an owner: SQLite takes a random 53-bit integer per change, PostgreSQL the
 * writing transaction's id (one move per transaction however many rows it writes).
 */
export async function up(db: Kysely<unknown>, backend: Backend): Promise<void> {
  await db.schema
    .alterTable('wishlist_owners')
    .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute()

  if (backend === 'sqlite') {
    const bump = (row: 'NEW' | 'OLD') =>
      `UPDATE wishlist_owners SET version = (random() >> 11) WHERE shop_id = ${row}.shop_id AND owner_type = ${row}.owner_type AND owner_id = ${row}.owner_id;`
    await sql.raw(`CREATE TRIGGER wishlist_owners_version_ai AFTER INSERT ON wishlist_owners BEGIN ${bump('NEW')} END`).execute(db)
    for (const table of ['wishlist_items', 'wishlist_lists']) {
      await sql.raw(`CREATE TRIGGER ${table}_version_ai AFTER INSERT ON ${table} BEGIN ${bump('NEW')} END`).execute(db)
      await sql.raw(`CREATE TRIGGER ${table}_version_ad AFTER DELETE ON ${table} BEGIN ${bump('OLD')} END`).execute(db)
      await sql.raw(`CREATE TRIGGER ${table}_version_au AFTER UPDATE ON ${table} BEGIN ${bump('OLD')} ${bump('NEW')} END`).execute(db)
    }
    const holders = (row: 'NEW' | 'OLD') =>
      `UPDATE wishlist_owners SET version = (random() >> 11) WHERE shop_id = ${row}.shop_id AND (owner_type, owner_id) IN (SELECT owner_type, owner_id FROM wishlist_items WHERE shop_id = ${row}.shop_id AND product_id = ${row}.product_id);`
    await sql
      .raw(
        `CREATE TRIGGER catalog_products_version_ai AFTER INSERT ON catalog_products WHEN NEW.default_variant_id IS NOT NULL BEGIN ${holders('NEW')} END`,
      )
      .execute(db)
    await sql
      .raw(
        `CREATE TRIGGER catalog_products_version_au AFTER UPDATE ON catalog_products WHEN NEW.default_variant_id IS NOT OLD.default_variant_id BEGIN ${holders('NEW')} END`,
      )
      .execute(db)
    await sql
      .raw(
        `CREATE TRIGGER catalog_products_version_ad AFTER DELETE ON catalog_products WHEN OLD.default_variant_id IS NOT NULL BEGIN ${holders('OLD')} END`,
      )
      .execute(db)
    return
  }

  // PostgreSQL: the transaction id; the `IS DISTINCT FROM` skips rewriting a row the
  // transaction has already moved (a 500-item import updates its owner once, not 500 times).
  await sql`
    CREATE FUNCTION wishlist_owner_version_now() RETURNS bigint LANGUAGE sql VOLATILE AS $$ SELECT pg_current_xact_id()::text::bigint $$
  `.execute(db)
  await sql`
    CREATE FUNCTION wishlist_owner_version_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.version := wishlist_owner_version_now();
      RETURN NEW;
    END $$
  `.execute(db)
  await sql`CREATE TRIGGER wishlist_owners_version_bi BEFORE INSERT ON wishlist_owners FOR EACH ROW EXECUTE FUNCTION wishlist_owner_version_insert()`.execute(
    db,
  )
  await sql`
    CREATE FUNCTION wishlist_owner_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE v bigint := wishlist_owner_version_now();
    BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE wishlist_owners SET version = v
          WHERE shop_id = OLD.shop_id AND owner_type = OLD.owner_type AND owner_id = OLD.owner_id AND version IS DISTINCT FROM v;
      END IF;
      IF TG_OP IN ('UPDATE', 'INSERT') THEN
        UPDATE wishlist_owners SET version = v
          WHERE shop_id = NEW.shop_id AND owner_type = NEW.owner_type AND owner_id = NEW.owner_id AND version IS DISTINCT FROM v;
      END IF;
      RETURN NULL;
    END $$
  `.execute(db)
  for (const table of ['wishlist_items', 'wishlist_lists']) {
    await sql
      .raw(
        `CREATE TRIGGER ${table}_version AFTER INSERT OR UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION wishlist_owner_version_bump()`,
      )
      .execute(db)
  }
  await sql`
    CREATE FUNCTION catalog_default_variant_bump() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      v bigint := wishlist_owner_version_now();
      p record;
    BEGIN
      IF TG_OP = 'DELETE' THEN p := OLD; ELSE p := NEW; END IF;
      IF TG_OP = 'UPDATE' AND NEW.default_variant_id IS NOT DISTINCT FROM OLD.default_variant_id THEN RETURN NULL; END IF;
      IF TG_OP <> 'UPDATE' AND p.default_variant_id IS NULL THEN RETURN NULL; END IF;
      UPDATE wishlist_owners o SET version = v
        FROM (SELECT DISTINCT owner_type, owner_id FROM wishlist_items WHERE shop_id = p.shop_id AND product_id = p.product_id) h
        WHERE o.shop_id = p.shop_id AND o.owner_type = h.owner_type AND o.owner_id = h.owner_id AND o.version IS DISTINCT FROM v;
      RETURN NULL;
    END $$
  `.execute(db)
  await sql`CREATE TRIGGER catalog_products_version AFTER INSERT OR UPDATE OR DELETE ON catalog_products FOR EACH ROW EXECUTE FUNCTION catalog_default_variant_bump()`.execute(
    db,
  )

  // Every statement that may move a version tells the listening instances, at commit
  // (PostgreSQL delivers notifications of committed transactions only, one per transaction
  // for equal payloads). The payload is the schema, so databases holding several schemas
  // (tests, tenant groups) do not disturb each other. Used by db/connect.ts (changeStamp).
  await sql`
    CREATE FUNCTION wishlist_owners_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('wishlist_owner_versions', current_schema());
      RETURN NULL;
    END $$
  `.execute(db)
  await sql`CREATE TRIGGER wishlist_owners_notify AFTER INSERT OR UPDATE OR DELETE ON wishlist_owners FOR EACH STATEMENT EXECUTE FUNCTION wishlist_owners_notify()`.execute(
    db,
  )
}
