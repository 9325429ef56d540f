/**
 * The served OpenAPI document serves a code generator and a newcomer: every operation is
 * named, summarised, described and secured (public ones with `security: []`), every
 * response is described, errors are named components, each example is valid against its
 * schema, and the outbound events are in the `webhooks` section.
 */
import { readFileSync } from 'node:fs'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { renderReference } from '../../scripts/openapi-reference.js'
import { DOCUMENT_ENV } from '../../scripts/served-document.js'
import { trimmedTextPattern } from '../../src/lib/http-schemas.js'
import { WEBHOOK_EVENTS } from '../../src/modules/events/outbox.js'
import { NOTE_MAX_CHARS } from '../../src/modules/wishlists/wishlists.schemas.js'
import { openapiPlugin } from '../../src/plugins/openapi.js'
import { createTestApp, type TestApp } from '../helpers/app.js'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the served document, read as each test expects
type Json = Record<string, any>
let t: TestApp
let doc: Json

beforeAll(async () => {
  // Shopify app mode on, as the published document has it (its routes are off otherwise).
  t = await createTestApp({ env: { SHOPIFY_API_SECRET: DOCUMENT_ENV.SHOPIFY_API_SECRET, SHOPIFY_API_KEY: DOCUMENT_ENV.SHOPIFY_API_KEY } })
  doc = (await t.call('GET', '/v1/openapi.json')).body
})
afterAll(() => t.close())

const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, op })),
  )

/** The served document with $refs to its components resolvable by Ajv. */
function validator() {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  ajv.addSchema({ $id: 'doc', components: doc.components }, 'doc')
  return (schema: Json, value: unknown) => {
    const rewritten = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'))
    const validate = ajv.compile(rewritten)
    return validate(value) ? [] : validate.errors
  }
}

describe('the OpenAPI document', () => {
  it('names, summarises, describes and secures every operation', () => {
    const ids = new Set<string>()
    for (const { where, op } of operations()) {
      expect({ where, operationId: typeof op.operationId }).toEqual({ where, operationId: 'string' })
      expect({ where, dup: ids.has(op.operationId) }).toEqual({ where, dup: false })
      ids.add(op.operationId)
      expect({ where, summary: op.summary?.length > 0, description: op.description?.length > 0 }).toEqual({
        where,
        summary: true,
        description: true,
      })
      expect({ where, security: Array.isArray(op.security) }).toEqual({ where, security: true })
      for (const [status, raw] of Object.entries(op.responses as Record<string, Json>)) {
        const response = raw.$ref ? doc.components.responses[raw.$ref.split('/').pop()] : raw
        expect({ where, status, description: response.description }).not.toMatchObject({ description: 'Default Response' })
        expect({ where, status, described: response.description.length > 0 }).toEqual({ where, status, described: true })
      }
    }
    expect(doc.paths['/v1/wishlists/shared/{shareToken}'].get.security).toEqual([])
    expect(doc.paths['/v1/auth/token'].post.security).toEqual([])
    expect(doc.paths['/api/v1/review-invitations/{token}'].get.security).toEqual([])
  })

  it('names the error components and refers to them', () => {
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['ErrorEnvelope', 'ReviewsError']))
    expect(JSON.stringify(doc)).not.toMatch(/def-\d/)
    expect(doc.paths['/v1/webhooks'].post.responses['400']).toEqual({ $ref: '#/components/responses/Error400' })
    expect(doc.components.responses.Error400.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' })
    expect(doc.paths['/api/v1/reviews'].post.responses['400']).toEqual({ $ref: '#/components/responses/ReviewsError400' })
    expect(doc.components.responses.ReviewsError400.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ReviewsError',
    })
    expect(doc.components.responses.Error429.headers['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' })
  })

  it('gives every example in the document, and each is valid against its schema', () => {
    const check = validator()
    let examples = 0
    for (const { where, op } of operations()) {
      const media = [
        op.requestBody?.content?.['application/json'],
        ...Object.values((op.responses ?? {}) as Record<string, Json>).map((r) => r.content?.['application/json']),
      ]
      for (const m of media) {
        if (m?.example === undefined) continue
        examples++
        expect({ where, errors: check(m.schema, m.example) }).toEqual({ where, errors: [] })
      }
    }
    for (const name of ['ErrorEnvelope', 'ReviewsError']) {
      const schema = doc.components.schemas[name]
      for (const example of schema.examples) expect({ name, errors: check(schema, example) }).toEqual({ name, errors: [] })
    }
    expect(examples).toBeGreaterThan(50)
  })

  it('marks query parameters that have a default as optional (top-products limit)', () => {
    const limit = doc.paths['/v1/analytics/top-products'].get.parameters.find((p: Json) => p.name === 'limit')
    expect(limit).toMatchObject({ in: 'query', required: false, schema: { default: 10, minimum: 1, maximum: 100 } })
  })

  it('documents each platform event type exactly, as a discriminated union', () => {
    const items = doc.paths['/v1/events'].post.requestBody.content['application/json'].schema.properties.events.items
    expect(items.discriminator).toEqual({
      propertyName: 'type',
      mapping: {
        'cart.item_added': '#/components/schemas/CartItemAddedEvent',
        'product.updated': '#/components/schemas/ProductUpdatedEvent',
        'order.created': '#/components/schemas/OrderCreatedEvent',
      },
    })
    expect(doc.components.schemas.ProductUpdatedEvent.required).toEqual(['type', 'product_id', 'variants'])
  })

  it('states the rules of the validation as the server applies them: patterns, trimmed bounds, e-mail and URL forms, required-one-of bodies', () => {
    const body = (path: string, method = 'post') => doc.paths[path][method].requestBody.content['application/json'].schema
    expect(doc.paths['/v1/wishlists/{customerId}'].get.parameters.find((p: Json) => p.name === 'customerId').schema.pattern).toBeTypeOf(
      'string',
    )
    expect(JSON.stringify(body('/v1/wishlists/{customerId}/items/bulk-delete'))).toContain('"minItems":1')
    expect(JSON.stringify(body('/v1/wishlists/{customerId}/merge'))).toContain('"required":["guest_id"]')
    expect(body('/v1/wishlists/{customerId}/lists').properties.name).toMatchObject({ pattern: trimmedTextPattern(1, 100), maxLength: 500 })
    expect(body('/api/v1/reviews/{id}/reply', 'put').properties.body).toMatchObject({ pattern: trimmedTextPattern(1, 5000) })
    expect(body('/api/v1/reviews').properties.customerName).toMatchObject({ pattern: trimmedTextPattern(1, 100) })
    expect(body('/api/v1/reviews').properties.title).toMatchObject({ pattern: trimmedTextPattern(0, 150) })
    expect(body('/api/v1/reviews').properties.productId.pattern).toBeTypeOf('string')
    // The server's own rules, not the stricter RFC formats.
    expect(body('/v1/webhooks').properties.url).toMatchObject({ maxLength: 2048, pattern: '^\\s*[Hh][Tt][Tt][Pp][Ss]?:' })
    expect(body('/api/v1/reviews').properties.customerEmail).toMatchObject({ pattern: '^\\s*[^\\s@]+@[^\\s@]+\\.[^\\s@]+\\s*$' })
    for (const schema of [
      body('/v1/webhooks').properties.url,
      body('/api/v1/reviews').properties.customerEmail,
      body('/api/v1/reviews').properties.photos.items,
    ]) {
      expect(schema.format).toBeUndefined()
    }
    // A body the server lets the caller leave out.
    expect(doc.paths['/v1/admin/api-keys'].post.requestBody.required).toBe(false)
    expect(doc.paths['/v1/webhooks'].post.requestBody.required).toBe(true)
  })

  it('states the limits the server applies: a note is at most 280 characters after trimming wherever an item takes one', async () => {
    const check = validator()
    const shop = await t.createShop('scale')
    const token = await shop.adminToken()
    const bodySchema = (path: string, method = 'post') => doc.paths[path][method].requestBody.content['application/json'].schema
    const note = (n: number) => `  ${'n'.repeat(n)}\n `
    // Each route that takes a note: the body with the note, and where a refusal names it.
    const routes = [
      {
        path: '/v1/wishlists/{customerId}/items',
        method: 'post',
        url: '/v1/wishlists/501/items',
        body: (n: number) => ({ product_id: '1', note: note(n) }),
        at: 'body.note',
      },
      {
        path: '/v1/wishlists/{customerId}/items/{productId}',
        method: 'patch',
        url: '/v1/wishlists/501/items/1',
        body: (n: number) => ({ note: note(n) }),
        at: 'body.note',
      },
      {
        path: '/v1/wishlists/{customerId}/merge',
        method: 'post',
        url: '/v1/wishlists/502/merge',
        body: (n: number) => ({ guest_items: [{ product_id: '2', note: note(n) }] }),
        at: 'body.guest_items.0.note',
      },
      {
        path: '/v1/wishlists/import',
        method: 'post',
        url: '/v1/wishlists/import',
        body: (n: number) => ({ items: [{ customer_id: '503', product_id: '3', note: note(n) }] }),
        at: 'body.items.0.note',
      },
    ]
    for (const { path, method, url, body, at } of routes) {
      const where = `${method.toUpperCase()} ${path}`
      const accepted = await t.call(method.toUpperCase() as 'POST', url, { token, body: body(NOTE_MAX_CHARS) })
      expect({ where, status: accepted.status }).toEqual({ where, status: method === 'post' && path.endsWith('/items') ? 201 : 200 })
      expect({ where, errors: check(bodySchema(path, method), body(NOTE_MAX_CHARS)) }).toEqual({ where, errors: [] })
      const refused = await t.call(method.toUpperCase() as 'POST', url, { token, body: body(NOTE_MAX_CHARS + 1) })
      expect({ where, status: refused.status, path: refused.body.error?.details?.[0]?.path }).toEqual({ where, status: 400, path: at })
      expect({ where, valid: check(bodySchema(path, method), body(NOTE_MAX_CHARS + 1))?.length === 0 }).toEqual({ where, valid: false })
    }
  })

  it('keeps each summary in one place: a route schema that sets one its operation docs also set is refused', async () => {
    const app = Fastify({ logger: false })
    const operationDocs = {
      'GET /v1/twice': { operationId: 'twice', summary: 'From the operation docs', description: 'Twice', responses: { 200: 'OK' } },
    }
    await app.register(openapiPlugin, { publicBaseUrl: 'http://wishlist.test', operationDocs, webhookEvents: {} })
    app.get('/v1/twice', { schema: { summary: 'From the route' } }, async () => ({}))
    app.get('/v1/once', { schema: { summary: 'Only here' } }, async () => ({}))
    await app.ready()
    expect(() => app.swagger()).toThrow('GET /v1/twice: the route schema sets summary, which its operation docs also set')
    await app.close()
  })

  it('is never stricter than the server: requests the server accepts are valid by the document', async () => {
    const check = validator()
    const shop = await t.createShop('scale', { multi_wishlist_enabled: true })
    const token = await shop.adminToken()
    const customer = await shop.customerToken('4242')
    const bodySchema = (path: string, method = 'post') => doc.paths[path][method].requestBody.content['application/json'].schema
    const accepted = [
      // Surrounding whitespace beyond the bound, dropped by the server.
      {
        method: 'POST',
        path: '/v1/wishlists/{customerId}/lists',
        url: '/v1/wishlists/me/lists',
        token: customer,
        body: { name: `   ${'n'.repeat(100)}\n\t ` },
      },
      {
        method: 'POST',
        path: '/api/v1/reviews',
        url: '/api/v1/reviews',
        token: customer,
        body: {
          productId: ' 7001 ',
          customerEmail: ' Ann..Lee@Example.COM ',
          customerName: `  ${'A'.repeat(100)}  `,
          rating: 5,
          title: `${'t'.repeat(150)}   `,
          body: `\n${'b'.repeat(5000)}\n`,
          photos: [' HTTPS://cdn.example.com/a photo.jpg '],
        },
      },
      // A URL a browser (and the server) takes, which RFC 3986 `uri` refuses.
      {
        method: 'POST',
        path: '/v1/webhooks',
        url: '/v1/webhooks',
        token,
        body: { url: ' HTTPS://hooks.example.com/wish list ', events: ['wishlist.item.added'] },
      },
    ] as const
    for (const { method, path, url, token: bearer, body } of accepted) {
      const res = await t.call(method, url, { token: bearer, body })
      expect({ url, status: res.status < 300 ? 'accepted' : res.body }).toEqual({ url, status: 'accepted' })
      expect({ url, errors: check(bodySchema(path), body) }).toEqual({ url, errors: [] })
    }
    // The bound itself still holds, in the document and in the server.
    const tooLong = { name: `  ${'n'.repeat(101)}  ` }
    expect(check(bodySchema('/v1/wishlists/{customerId}/lists'), tooLong)).not.toEqual([])
    expect((await t.call('POST', '/v1/wishlists/me/lists', { token: customer, body: tooLong })).status).toBe(400)
    // No body at all where the document says it is optional.
    const created = await t.call('POST', '/v1/admin/api-keys', { token })
    expect([created.status, created.body.data.scope]).toEqual([201, 'admin'])
  })

  it('lists on every operation the statuses any request can get: 408, 431 and 500, 400 with input, 413 and 415 with a body, 429 when rate limited, 503 with storage; 403 wherever a storefront key is taken', () => {
    // (Shopify's webhook route spends no rate-limit budget, but its 429 is the cap of unfinished bodies per address;
    // Flow's lifecycle callback, Shopify's too, has no such cap.)
    const unlimited = ['GET /healthz', 'GET /readyz', 'GET /widget.js', 'POST /v1/platforms/shopify/flow/lifecycle']
    for (const { where, op } of operations()) {
      const statuses = Object.keys(op.responses).map(Number)
      const [method] = where.split(' ') as [string]
      const expected = [408, 431, 500]
      // The uninstalled shop's storefront key is refused with 403 FORBIDDEN.
      if ((op.security ?? []).some((s: Json) => 'storefrontKey' in s)) expected.push(403)
      if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) expected.push(400, 413, 415)
      if ((op.parameters ?? []).length > 0) expected.push(400)
      if (!unlimited.includes(where)) expected.push(429)
      if (!['GET /healthz', 'GET /widget.js'].includes(where)) expected.push(503)
      expect({ where, missing: expected.filter((s) => !statuses.includes(s)) }).toEqual({ where, missing: [] })
      if (unlimited.includes(where)) expect({ where, has429: statuses.includes(429) }).toEqual({ where, has429: false })
    }
    // The path and query limits of the operations that had no 400.
    for (const [path, method] of [
      ['/v1/admin/api-keys/{keyId}', 'delete'],
      ['/v1/webhooks/{webhookId}', 'delete'],
      ['/v1/webhooks/{webhookId}/test', 'post'],
      ['/v1/wishlists/shared/{shareToken}', 'get'],
      ['/widget.js', 'get'],
    ] as const) {
      expect({ path, method, response: doc.paths[path][method].responses['400'] }).toMatchObject({
        path,
        method,
        response: { $ref: expect.stringMatching(/Error400/) },
      })
    }
    expect(doc.components.responses.Error408.description).toMatch(/^REQUEST_TIMEOUT/)
    expect(doc.components.responses.ReviewsError415.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ReviewsError',
    })
  })

  it("carries the server package's version and licence", () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string; license: string }
    expect(doc.info.version).toBe(pkg.version)
    expect(doc.info.license).toEqual({ name: pkg.license, identifier: pkg.license })
  })

  it('describes every outbound event in the webhooks section', () => {
    for (const event of [...WEBHOOK_EVENTS, 'webhook.test']) {
      const post = doc.webhooks[event]?.post
      expect({ event, summary: typeof post?.summary }).toEqual({ event, summary: 'string' })
      expect(post.requestBody.content['application/json'].schema.properties.event).toMatchObject({ const: event })
    }
  })

  it('is rendered in docs/reference.md (run `npm run docs:reference -w apps/server` when it is stale)', () => {
    const committed = readFileSync(new URL('../../../../docs/reference.md', import.meta.url), 'utf8')
    expect(committed === renderReference(doc), 'docs/reference.md is stale').toBe(true)
  })
})
