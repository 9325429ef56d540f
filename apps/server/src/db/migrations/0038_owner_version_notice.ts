import { type Kysely, sql } from 'kysely'
import type { Backend } from '../types.js'

/**
 * PostgreSQL: the statement that tells the listening instances about a moved owner version
 * (migration 0006's `pg_notify`, sent at commit) also tells the connection that ran it, as a
 * notice (`wishlist_owner_versions`). The service then knows which of its transactions will
 * notify, and answers such a write only once its own change feed has heard the
 * notification (db/connect.ts): when the writer answers, PostgreSQL has woken the other
 * instances' listeners too (which narrows the window in which they serve the page from
 * before the write; it does not close it).
 *
 * SQLite has no notifications (its change stamp reads `PRAGMA data_version`): nothing to change.
 */
export async function up(db: Kysely<unknown>, backend: Backend): Promise<void> {
  if (backend !== 'postgres') return
  await sql`
    CREATE OR REPLACE FUNCTION wishlist_owners_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('wishlist_owner_versions', current_schema());
      RAISE NOTICE 'wishlist_owner_versions';
      RETURN NULL;
    END $$
  `.execute(db)
}
