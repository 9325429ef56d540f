/** POST /v1/wishlists/import (admin token, growth plan and above). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, Ok } from '../../lib/http-schemas.js'
import type { ImportService } from './import.service.js'
import { ImportBody, ImportResult } from './wishlists.schemas.js'

export const importRoutes: FastifyPluginAsyncTypebox<{ imports: ImportService }> = async (app, { imports }) => {
  app.post(
    '/v1/wishlists/import',
    {
      config: { access: ['admin'], plan: 'growth', batches: ['items'] },
      schema: { tags: ['import'], body: ImportBody, response: { 200: Ok(ImportResult), ...errors(400, 401, 403, 429) } },
    },
    async (request) => ({ ok: true as const, data: await imports.run(request.ctx, request.body.items, request.body.dry_run ?? false) }),
  )
}
