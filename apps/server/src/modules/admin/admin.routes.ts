import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { invalid, notFound } from '../../lib/errors.js'
import { storefrontStrings } from '../../lib/page-strings.js'
import { errors, Ok } from '../../lib/http-schemas.js'
import { isoMillis } from '../../lib/time.js'
import type { AuthService } from '../auth/auth.service.js'
import type { ShopsService } from '../shops/shops.service.js'
import type { Shop } from '../shops/shops.types.js'
import { ApiKeyView, CreateApiKey, CreatedApiKey, KeyIdParams, Settings, SettingsPatch, ShopView } from './admin.schemas.js'

const shopView = (shop: Shop) => ({
  id: shop.id,
  domain: shop.domain,
  plan: shop.plan,
  settings: shop.settings,
  storefrontKey: shop.storefrontKey,
  uninstalledAt: shop.uninstalledAt === null ? null : isoMillis(shop.uninstalledAt),
})

/** docs/api.md, "Admin endpoints": what the dashboard needs. Admin tokens only. */
export const adminRoutes: FastifyPluginAsyncTypebox<{ shops: ShopsService; auth: AuthService }> = async (app, { shops, auth }) => {
  const config = { access: ['admin' as const] }
  const tags = ['admin']

  app.get('/v1/admin/shop', { config, schema: { tags, response: { 200: Ok(ShopView), ...errors(401, 403, 429) } } }, async (request) => ({
    ok: true as const,
    data: shopView(request.ctx.shop),
  }))

  app.patch(
    '/v1/admin/settings',
    { config, schema: { tags, body: SettingsPatch, response: { 200: Ok(Settings), ...errors(400, 401, 403, 429) } } },
    async (request) => {
      const { storefront_strings: raw, ...rest } = request.body
      let patch: Parameters<ShopsService['updateSettings']>[1] = rest
      if (raw !== undefined) {
        const checked = storefrontStrings(raw, 'body.storefront_strings')
        if (!checked.ok) throw invalid(checked.details)
        patch = { ...rest, storefront_strings: checked.value }
      }
      return { ok: true as const, data: (await shops.updateSettings(request.ctx.shop.id, patch)).settings }
    },
  )

  app.get(
    '/v1/admin/api-keys',
    { config, schema: { tags, response: { 200: Ok(Type.Object({ apiKeys: Type.Array(ApiKeyView) })), ...errors(401, 403, 429) } } },
    async (request) => {
      const rows = await shops.listApiKeys(request.ctx.shop.id)
      return {
        ok: true as const,
        data: {
          apiKeys: rows.map((k) => ({
            keyId: k.id,
            name: k.name,
            scope: k.scope,
            createdAt: isoMillis(k.created_at),
            lastUsedAt: k.last_used_at === null ? null : isoMillis(k.last_used_at),
          })),
        },
      }
    },
  )

  app.post(
    '/v1/admin/api-keys',
    {
      config,
      schema: {
        tags,
        body: Type.Optional(CreateApiKey),
        response: { 201: Ok(CreatedApiKey), ...errors(400, 401, 403, 429) },
      },
      // Both fields are optional, so the body may be left out (it is validated as `{}`).
      preValidation: (request, _reply, done) => {
        request.body ??= {}
        done()
      },
    },
    async (request, reply) => {
      const key = await shops.createApiKey(request.ctx.shop.id, request.body)
      // The secret is shown only here: `private, no-store` like every admin answer (plugins/caching.ts).
      reply.code(201)
      return { ok: true as const, data: { ...key, createdAt: isoMillis(key.createdAt) } }
    },
  )

  app.delete(
    '/v1/admin/api-keys/:keyId',
    {
      config,
      schema: {
        tags,
        params: KeyIdParams,
        response: { 200: Ok(Type.Object({ deleted: Type.Literal(true) })), ...errors(401, 403, 404, 429) },
      },
    },
    async (request) => {
      if (!(await auth.revokeKey(request.ctx.shop.id, request.params.keyId))) throw notFound('API key')
      return { ok: true as const, data: { deleted: true as const } }
    },
  )

  app.post(
    '/v1/admin/storefront-key/rotate',
    { config, schema: { tags, response: { 200: Ok(Type.Object({ storefrontKey: Type.String() })), ...errors(401, 403, 429) } } },
    async (request) => ({
      ok: true as const,
      data: { storefrontKey: (await shops.rotateStorefrontKey(request.ctx.shop.id)).storefrontKey },
    }),
  )
}
