import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Db } from '../../db/types.js'
import { notFound } from '../../lib/errors.js'
import { errors, Ok } from '../../lib/http-schemas.js'
import { platformIdOf } from '../../lib/platform-ids.js'
import { now } from '../../lib/time.js'
import type { Owner } from '../auth/auth.types.js'
import { contactsRepo, contactView } from './contacts.js'
import { ContactView, CustomerParams, MerchantContactBody, ShopperContactBody } from './contacts.schemas.js'
import { OwnerParams } from '../wishlists/wishlists.schemas.js'
import { optOutsRepo } from './opt-out.js'

/** The contact as stored, with the owner's opt-out. */
async function answer(db: Db, shopId: string, owner: Owner) {
  const row = await contactsRepo.get(db, shopId, owner)
  if (row === undefined) throw notFound('Contact')
  return { ok: true as const, data: contactView(row, await optOutsRepo.isOptedOut(db, shopId, owner)) }
}

/**
 * Who may be notified (docs/notifications.md, "Who is notified (consent, opt-out)"): the
 * merchant's e-mail of a customer (admin token). The shopper's own routes are
 * `shopperContactsRoutes`, part of the storefront API.
 */
export const contactsRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, { db }) => {
  app.put(
    '/v1/admin/customers/:customerId/contact',
    {
      config: { access: ['admin'] },
      schema: {
        tags: ['admin'],
        params: CustomerParams,
        body: MerchantContactBody,
        response: { 200: Ok(ContactView), ...errors(400, 401, 403, 429) },
      },
    },
    async (request) => {
      const shopId = request.ctx.shop.id
      const owner: Owner = { type: 'customer', id: platformIdOf(request.params.customerId, 'Customer', 'params.customerId') }
      await contactsRepo.put(db, shopId, owner, { email: request.body.email, source: 'merchant', consentText: null }, now())
      return answer(db, shopId, owner)
    },
  )
}

/**
 * The shopper's own e-mail with consent (customer token or guest mode, on their own owner id
 * or `me`, as the wishlist routes): part of the storefront API, so also served through a
 * platform's signed proxy (Shopify's app proxy: the logged-in customer it names, or the guest id).
 */
export const shopperContactsRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, { db }) => {
  // The shopper's own: a customer token (starter plan or above, as the headless API) or guest mode.
  const own = { access: ['customer' as const, 'guest' as const], owner: 'customerId', bearerPlan: 'starter' as const }

  app.put(
    '/v1/wishlists/:customerId/contact',
    {
      config: own,
      schema: {
        tags: ['wishlists'],
        params: OwnerParams,
        body: ShopperContactBody,
        response: { 200: Ok(ContactView), ...errors(400, 401, 403, 429) },
      },
    },
    async (request) => {
      const shopId = request.ctx.shop.id
      const owner = request.owner
      const at = now()
      await db.transaction().execute(async (trx) => {
        await contactsRepo.put(
          trx,
          shopId,
          owner,
          { email: request.body.email, source: 'shopper', consentText: request.body.consent_text },
          at,
        )
        // The owner's own new consent lifts their earlier opt-out.
        await trx
          .deleteFrom('notification_opt_outs')
          .where('shop_id', '=', shopId)
          .where('owner_type', '=', owner.type)
          .where('owner_id', '=', owner.id)
          .execute()
      })
      return answer(db, shopId, owner)
    },
  )

  app.delete(
    '/v1/wishlists/:customerId/contact',
    {
      config: own,
      schema: {
        tags: ['wishlists'],
        params: OwnerParams,
        response: { 200: Ok(Type.Object({ deleted: Type.Literal(true) })), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      if (!(await contactsRepo.remove(db, request.ctx.shop.id, request.owner))) throw notFound('Contact')
      return { ok: true as const, data: { deleted: true as const } }
    },
  )
}
