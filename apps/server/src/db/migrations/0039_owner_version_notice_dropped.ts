import { type Kysely, sql } from 'kysely'
import type { Backend } from '../types.js'

/**
 * PostgreSQL: the owner-version trigger notifies the change feeds and no longer raises a
 * notice on the writing connection (0038). The notice let a write wait for its own
 * notification, which narrowed but never closed the window in which another instance served
 * the page from before the write. Instances now count each other's change feeds and, while
 * there is more than one, check the owner's version on every cached read (db/connect.ts),
 * so nothing waits for the notice any more.
 *
 * SQLite has no notifications: nothing to change.
 */
export async function up(db: Kysely<unknown>, backend: Backend): Promise<void> {
  if (backend !== 'postgres') return
  await sql`
    CREATE OR REPLACE FUNCTION wishlist_owners_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('wishlist_owner_versions', current_schema());
      RETURN NULL;
    END $$
  `.execute(db)
}
