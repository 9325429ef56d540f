/**
 * A Shopify shop's Admin API tokens (`shopify_access_tokens`, one row per shop), as sealed
 * text (token-cipher.ts): this file never sees a token in clear. Every write moves
 * `generation` on; a refresh is claimed (`refresh_lease_until`) and written only over the
 * generation it refreshed, so of two instances refreshing at once one spends the refresh
 * token and the other reads the result.
 */
import type { Selectable } from 'kysely'
import type { ShopifyAccessTokensTable } from '../../db/schema.js'
import type { Db } from '../../db/types.js'

export type AccessTokensRow = Selectable<ShopifyAccessTokensTable>

/** What an exchange or a refresh writes (tokens sealed). */
export interface SealedTokens {
  access_token: string
  access_expires_at: number | null
  refresh_token: string | null
  refresh_expires_at: number | null
  scope: string
}

export const accessTokensRepo = {
  get(db: Db, shopId: string): Promise<AccessTokensRow | undefined> {
    return db.selectFrom('shopify_access_tokens').selectAll().where('shop_id', '=', shopId).executeTakeFirst()
  },

  /** The tokens of a session-token exchange, replacing any the shop held (a new generation, no claim). */
  async put(db: Db, shopId: string, tokens: SealedTokens, at: number): Promise<void> {
    await db
      .insertInto('shopify_access_tokens')
      .values({ shop_id: shopId, ...tokens, generation: 1, refresh_lease_until: null, updated_at: at })
      .onConflict((oc) =>
        oc.column('shop_id').doUpdateSet((eb) => ({
          ...tokens,
          generation: eb('shopify_access_tokens.generation', '+', 1),
          refresh_lease_until: null,
          updated_at: at,
        })),
      )
      .execute()
  },

  /** Claims the refresh of `generation` until `until`; false when the row moved on or another claim is running. */
  async claimRefresh(db: Db, shopId: string, generation: number, at: number, until: number): Promise<boolean> {
    const res = await db
      .updateTable('shopify_access_tokens')
      .set({ refresh_lease_until: until })
      .where('shop_id', '=', shopId)
      .where('generation', '=', generation)
      .where((eb) => eb.or([eb('refresh_lease_until', 'is', null), eb('refresh_lease_until', '<=', at)]))
      .executeTakeFirst()
    return res.numUpdatedRows > 0n
  },

  /** The refreshed tokens, written only over `generation` (the one refreshed); false when the row moved on meanwhile. */
  async putRefreshed(db: Db, shopId: string, generation: number, tokens: SealedTokens, at: number): Promise<boolean> {
    const res = await db
      .updateTable('shopify_access_tokens')
      .set({ ...tokens, generation: generation + 1, refresh_lease_until: null, updated_at: at })
      .where('shop_id', '=', shopId)
      .where('generation', '=', generation)
      .executeTakeFirst()
    return res.numUpdatedRows > 0n
  },

  /** Gives a claim up (the refresh failed and the tokens are kept). */
  async releaseClaim(db: Db, shopId: string, generation: number): Promise<void> {
    await db
      .updateTable('shopify_access_tokens')
      .set({ refresh_lease_until: null })
      .where('shop_id', '=', shopId)
      .where('generation', '=', generation)
      .execute()
  },

  /** Deletes the tokens if they are still `generation` (Shopify refused them); a newer exchange or refresh stays. */
  async removeGeneration(db: Db, shopId: string, generation: number): Promise<void> {
    await db.deleteFrom('shopify_access_tokens').where('shop_id', '=', shopId).where('generation', '=', generation).execute()
  },

  async remove(db: Db, shopId: string): Promise<void> {
    await db.deleteFrom('shopify_access_tokens').where('shop_id', '=', shopId).execute()
  },
}
