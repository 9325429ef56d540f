import { Writable } from 'node:stream'
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { LOG_REDACT, LOG_SERIALIZERS } from '../../src/app.js'
import { loggingApp } from '../helpers/logs.js'

describe('logs', () => {
  it('carry a request id per request and never a secret, token or storefront key', async () => {
    const { app, lines, close } = await loggingApp()
    try {
      const created = await app.services.shops.create({ domain: 'logs.myshopify.com', plan: 'starter' })
      const token = await app.inject({
        method: 'POST',
        url: '/v1/auth/token',
        payload: { api_key: created.apiKey.keyId, api_secret: created.apiKey.secret },
      })
      const jwt = token.json().data.token as string
      await app.inject({ method: 'GET', url: '/v1/admin/shop', headers: { authorization: `Bearer ${jwt}` } })
      await app.inject({
        method: 'GET',
        url: '/v1/admin/shop',
        headers: { 'x-storefront-key': created.shop.storefrontKey, 'x-guest-id': 'guest-12345678' },
      })
      await app.inject({ method: 'POST', url: '/v1/admin/api-keys', headers: { authorization: `Bearer ${jwt}` }, payload: { name: 'x' } })
      const log = lines.join('')
      // One summary line per request (app.ts: disableRequestLogging + onResponse).
      const completed = lines.filter((l) => l.includes('"msg":"request completed"'))
      expect(completed).toHaveLength(4)
      for (const line of completed) expect(line).toMatch(/"reqId":"req_[^"]+".*"statusCode":\d{3}/)
      for (const secret of [created.apiKey.secret, jwt, created.shop.storefrontKey]) expect(log).not.toContain(secret)
    } finally {
      await close()
    }
  })

  it('tie the lines logged while answering a request to its access line by the request id', async () => {
    const { app, lines, close } = await loggingApp()
    try {
      app.get('/v1/test-logging-boom', { config: { access: ['public'] } }, async (request) => {
        request.log.child({ step: 'lookup' }).debug('looking up')
        throw new Error('boom')
      })
      const quiet = await app.inject({ method: 'GET', url: '/v1/nothing' })
      const res = await app.inject({ method: 'GET', url: '/v1/test-logging-boom' })
      expect(res.statusCode).toBe(500)
      const records = lines.map(
        (l) => JSON.parse(l) as { reqId?: string; msg: string; level: number; step?: string; err?: { message: string } },
      )
      const of = (id: unknown) => records.filter((r) => r.reqId === id)
      // A request that logs nothing itself still gets its access line, and only that.
      expect(of(quiet.headers['x-request-id']).map((r) => r.msg)).toEqual(['request completed'])
      const failed = of(res.headers['x-request-id'])
      expect(failed.map((r) => r.msg)).toEqual(['looking up', 'unhandled error', 'request completed'])
      expect(failed[0]).toMatchObject({ level: 20, step: 'lookup' })
      expect(failed[1]).toMatchObject({ level: 50, err: { message: 'boom' } })
    } finally {
      await close()
    }
  })

  it('write the access line exactly as pino would write it, with share tokens redacted', async () => {
    const { app, lines, close } = await loggingApp()
    try {
      const created = await app.services.shops.create({ domain: 'logs-shape.myshopify.com', plan: 'starter' })
      await app.inject({ method: 'GET', url: '/v1/wishlists/shared/tok_secret-share-token?x=1', headers: { host: 'shop.example:8080' } })
      await app.inject({
        method: 'GET',
        url: '/v1/wishlists/me?limit=5',
        headers: { 'x-storefront-key': created.shop.storefrontKey, 'x-guest-id': 'guest-12345678' },
      })
      // Characters JSON must escape in the URL (inject percent-encodes quotes, not a backslash) and the Host header.
      await app.inject({ method: 'GET', url: '/v1/nothing?q=back\\slash', headers: { host: 'odd"host\\:1' } })
      const completed = lines.filter((l) => l.includes('"msg":"request completed"'))
      expect(completed).toHaveLength(3)
      // The same record through pino itself: its child logger, its serializers, its key order.
      const reference: string[] = []
      const sink = new Writable({ write: (chunk, _enc, done) => done(void reference.push(chunk.toString())) })
      const logger = pino({ level: 'trace', redact: LOG_REDACT, serializers: LOG_SERIALIZERS }, sink)
      for (const line of completed) {
        expect(line.endsWith('}\n')).toBe(true)
        const record = JSON.parse(line) as {
          reqId: string
          req: { method: string; url: string; host: string; remoteAddress: string; remotePort?: number }
          res: { statusCode: number }
          responseTime: number
          time: number
        }
        logger.child({ reqId: record.reqId }).info(
          {
            req: { ...record.req, ip: record.req.remoteAddress, socket: { remotePort: record.req.remotePort } },
            res: record.res,
            responseTime: record.responseTime,
          },
          'request completed',
        )
        const expected = JSON.parse(reference.pop() as string) as { time: number }
        expect(Object.keys(record)).toEqual(Object.keys(expected))
        expect({ ...record, time: 0 }).toEqual({ ...expected, time: 0 })
      }
      expect((JSON.parse(completed[2] as string) as { req: { url: string; host: string } }).req).toMatchObject({
        url: '/v1/nothing?q=back\\slash',
        host: 'odd"host\\:1',
      })
      const [shared, page] = completed.map(
        (l) => JSON.parse(l) as { req: { url: string; host: string; method: string }; res: { statusCode: number } },
      )
      expect(shared?.req).toMatchObject({ method: 'GET', url: '/v1/wishlists/shared/[redacted]?x=1', host: 'shop.example:8080' })
      expect(shared?.res.statusCode).toBe(404)
      expect(page?.req.url).toBe('/v1/wishlists/me?limit=5')
      expect(page?.res.statusCode).toBe(200)
      expect(lines.join('')).not.toContain('tok_secret-share-token')
    } finally {
      await close()
    }
  })

  it('never write a guest id (a bearer secret) in a logged URL, an error line or a metric label', async () => {
    const { app, lines, close } = await loggingApp()
    try {
      const created = await app.services.shops.create({ domain: 'logs-guest.myshopify.com', plan: 'growth' })
      await app.services.shops.updateSettings(created.shop.id, { multi_wishlist_enabled: true })
      const sfk = created.shop.storefrontKey
      const guest = 'g_9f2c4e1a7b3d5f60a1b2c3d4e5f60718'
      const digits = '48151623427' // a guest id may be digits only
      const victim = 'g_victim0000000000000000000000001'
      // A failing request's error line logs the request (and an error carrying its headers) with the same redaction.
      app.get('/v1/test-guest-boom/:id', { config: { access: ['public'] } }, async (request) => {
        request.log.error({ req: request, err: Object.assign(new Error('boom'), { headers: { 'x-guest-id': guest } }) }, 'failed')
        throw new Error('boom')
      })
      const admin = (
        await app.inject({
          method: 'POST',
          url: '/v1/auth/token',
          payload: { api_key: created.apiKey.keyId, api_secret: created.apiKey.secret },
        })
      ).json().data.token as string
      const customer = (
        await app.inject({
          method: 'POST',
          url: '/v1/auth/token',
          payload: { api_key: created.apiKey.keyId, api_secret: created.apiKey.secret, customer_id: '77' },
        })
      ).json().data.token as string
      const asGuest = { 'x-storefront-key': sfk, 'x-guest-id': guest }
      // The URL forms a guest id travels in: owner path (header or query credential), list routes, share, reviews' guest_id.
      await app.inject({ method: 'POST', url: `/v1/wishlists/${guest}/items`, headers: asGuest, payload: { product_id: '1' } })
      await app.inject({ method: 'GET', url: `/v1/wishlists/${guest}?guest_id=${guest}&limit=5`, headers: { 'x-storefront-key': sfk } })
      await app.inject({ method: 'GET', url: `/v1/wishlists/${guest}/lists`, headers: asGuest })
      await app.inject({ method: 'GET', url: `/v1/wishlists/${digits}?guest_id=${digits}`, headers: { 'x-storefront-key': sfk } })
      await app.inject({ method: 'PUT', url: `/api/v1/reviews/1/helpful?x=1&guest%5Fid=${guest}`, headers: { 'x-storefront-key': sfk } })
      // A probe of another guest's list (403) and a malformed id (400) are logged without them too.
      await app.inject({ method: 'GET', url: `/v1/wishlists/${victim}`, headers: asGuest })
      await app.inject({ method: 'GET', url: `/v1/wishlists/${victim}?guest_id=${victim}%20`, headers: { 'x-storefront-key': sfk } })
      // Merge by guest_id: the id is in the body, never logged.
      await app.inject({
        method: 'POST',
        url: '/v1/wishlists/77/merge',
        headers: { authorization: `Bearer ${customer}` },
        payload: { guest_items: [], guest_id: guest },
      })
      await app.inject({ method: 'GET', url: `/v1/test-guest-boom/1?guest_id=${guest}`, headers: { 'x-guest-id': guest } })
      const metrics = await app.inject({ method: 'GET', url: '/metrics' })
      const log = lines.join('')
      for (const secret of [guest, digits, victim]) {
        expect(log).not.toContain(secret)
        expect(metrics.body).not.toContain(secret)
      }
      const urls = lines
        .map((l) => JSON.parse(l) as { msg: string; req?: { url: string } })
        .filter((r) => r.req !== undefined)
        .map((r) => r.req?.url)
      expect(urls).toContain('/v1/wishlists/[redacted]/items')
      expect(urls).toContain('/v1/wishlists/[redacted]?guest_id=[redacted]&limit=5')
      expect(urls).toContain('/v1/wishlists/[redacted]?guest_id=[redacted]')
      expect(urls).toContain('/api/v1/reviews/1/helpful?x=1&guest%5Fid=[redacted]')
      // Customer ids stay readable.
      expect(urls).toContain('/v1/wishlists/77/merge')
      await app.inject({ method: 'GET', url: '/v1/wishlists/77', headers: { authorization: `Bearer ${admin}` } })
      expect(lines.at(-1)).toContain('"url":"/v1/wishlists/77"')
    } finally {
      await close()
    }
  })

  it('redact review-invitation tokens in the access line', async () => {
    const { app, lines, close } = await loggingApp()
    try {
      const res = await app.inject({ method: 'GET', url: '/api/v1/review-invitations/inv_secret-invitation-token?x=1' })
      expect(res.statusCode).toBe(404)
      const line = lines.find((l) => l.includes('"msg":"request completed"')) as string
      expect((JSON.parse(line) as { req: { url: string } }).req.url).toBe('/api/v1/review-invitations/[redacted]?x=1')
      expect(lines.join('')).not.toContain('inv_secret-invitation-token')
    } finally {
      await close()
    }
  })
})
