import { type SqlBool, sql } from 'kysely'
import type { OwnerType } from './schema.js'

/**
 * The owner-scope filter (shop, owner type, owner id) of the tables keyed by an owner, as
 * one `where`; `alias` qualifies the columns in a joined query (`i` for `wishlist_items as i`).
 */
export function ownedBy(shopId: string, owner: { type: OwnerType; id: string }, alias?: string) {
  const column = (name: string) => sql.ref(alias === undefined ? name : `${alias}.${name}`)
  return sql<SqlBool>`(${column('shop_id')} = ${shopId} and ${column('owner_type')} = ${owner.type} and ${column('owner_id')} = ${owner.id})`
}
