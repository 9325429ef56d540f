import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ErrorEnvelope, ReviewsErrorBody } from '../lib/http-schemas.js'

/** OpenAPI 3.1 generated from the route schemas that also validate requests; UI at /docs. */
export const openapiPlugin = fp(
  async (app: FastifyInstance, opts: { publicBaseUrl: string }) => {
    app.addSchema(ErrorEnvelope)
    app.addSchema(ReviewsErrorBody)
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Wishlist service',
          version: '1.0.0',
          description: 'Wishlists, share links, analytics, webhooks (/v1) and product reviews (/api/v1). Behaviour beyond the schemas: docs/api.md in the repository.',
        },
        servers: [{ url: opts.publicBaseUrl }],
        components: {
          securitySchemes: {
            bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
            storefrontKey: { type: 'apiKey', in: 'header', name: 'X-Storefront-Key' },
            guestId: { type: 'apiKey', in: 'header', name: 'X-Guest-Id' },
            guestIdQuery: { type: 'apiKey', in: 'query', name: 'guest_id' },
          },
        },
      },
      // Security requirements follow each route's declared access.
      transform: ({ schema, url, route }) => {
        const access = route.config?.access ?? []
        const security: Record<string, string[]>[] = []
        if (access.includes('admin') || access.includes('customer')) security.push({ bearer: [] })
        if (access.includes('guest')) security.push({ storefrontKey: [], guestId: [] }, { storefrontKey: [], guestIdQuery: [] })
        if (access.includes('storefront')) security.push({ storefrontKey: [] })
        const hide = url.startsWith('/docs')
        return { schema: { ...schema, ...(security.length ? { security } : {}), ...(hide ? { hide: true } : {}) } as typeof schema, url }
      },
    })
    // The API reference is not API traffic: it spends no rate-limit budget, like the
    // OpenAPI document and the operations endpoints.
    app.addHook('onRoute', (route) => {
      if (route.url.startsWith('/docs')) route.config = { ...route.config, rateLimit: false }
    })
    await app.register(swaggerUi, { routePrefix: '/docs' })
  },
  { name: 'openapi' },
)
