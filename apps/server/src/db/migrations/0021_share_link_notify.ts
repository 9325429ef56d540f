import { type Kysely, sql } from 'kysely'
import type { Backend } from '../types.js'

/**
 * PostgreSQL: a change to `share_links` (a revocation, a new link, a shop's erasure) tells the
 * listening instances, as a change to `wishlist_owners` does (migration 0006), so that their
 * change stamp moves and a share link they keep in memory is looked up again
 * (modules/wishlists/share.service.ts). SQLite needs nothing: its stamp follows every commit
 * of another connection (PRAGMA data_version).
 */
export async function up(db: Kysely<unknown>, backend: Backend): Promise<void> {
  if (backend !== 'postgres') return
  await sql`CREATE TRIGGER share_links_notify AFTER INSERT OR UPDATE OR DELETE ON share_links FOR EACH STATEMENT EXECUTE FUNCTION wishlist_owners_notify()`.execute(
    db,
  )
}
