import type { Db } from '../../db/types.js'
import type { ApiKeyRow, KeyScope } from '../../db/schema.js'

export const apiKeysRepo = {
  /** Global lookup by key id (the token exchange knows nothing else). */
  async byId(db: Db, keyId: string): Promise<ApiKeyRow | undefined> {
    return db.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirst()
  },
  async insert(
    db: Db,
    shopId: string,
    row: { id: string; name: string; scope: KeyScope; secret_hash: string; created_at: number },
  ): Promise<void> {
    await db
      .insertInto('api_keys')
      .values({ shop_id: shopId, ...row, last_used_at: null, revoked_at: null })
      .execute()
  },
  async countActive(db: Db, shopId: string): Promise<number> {
    const row = await db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('shop_id', '=', shopId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  },
  async listActive(db: Db, shopId: string): Promise<ApiKeyRow[]> {
    return db
      .selectFrom('api_keys')
      .selectAll()
      .where('shop_id', '=', shopId)
      .where('revoked_at', 'is', null)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute()
  },
  /** Returns false when the key is unknown to this shop or already revoked. */
  async revoke(db: Db, shopId: string, keyId: string, at: number): Promise<boolean> {
    const res = await db
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('shop_id', '=', shopId)
      .where('id', '=', keyId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst()
    return Number(res.numUpdatedRows) > 0
  },
  async touch(db: Db, shopId: string, keyId: string, at: number): Promise<void> {
    await db.updateTable('api_keys').set({ last_used_at: at }).where('shop_id', '=', shopId).where('id', '=', keyId).execute()
  },
}
