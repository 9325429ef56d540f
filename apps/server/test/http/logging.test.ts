import { describe, expect, it } from 'vitest'
import { loggingApp } from '../helpers/logs.js'

describe('logs', () => {
  it('carry a request id per request and never a secret, token or storefront key', async () => {
    const { app, lines, close } = await loggingApp()
    try {
      const created = await app.services.shops.create({ domain: 'logs.myshopify.com', plan: 'starter' })
      const token = await app.inject({ method: 'POST', url: '/v1/auth/token', payload: { api_key: created.apiKey.keyId, api_secret: created.apiKey.secret } })
      const jwt = token.json().data.token as string
      await app.inject({ method: 'GET', url: '/v1/admin/shop', headers: { authorization: `Bearer ${jwt}` } })
      await app.inject({ method: 'GET', url: '/v1/admin/shop', headers: { 'x-storefront-key': created.shop.storefrontKey, 'x-guest-id': 'guest-12345678' } })
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
})
