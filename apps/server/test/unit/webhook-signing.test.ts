import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { nextAttemptAt } from '../../src/modules/webhooks/retry-schedule.js'
import { newWebhookSecret, signatureHeaders } from '../../src/modules/webhooks/signing.js'

describe('signatureHeaders', () => {
  it('produces headers the reference verifier accepts', () => {
    const secret = newWebhookSecret()
    const body = JSON.stringify({ event: 'wishlist.shared', data: { customerId: '1' } })
    const headers = signatureHeaders(secret, 'dlv_abc', body)
    expect(headers['webhook-id']).toBe('dlv_abc')
    expect(headers['webhook-signature']).toMatch(/^v1,/)
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body))
    expect(() => new Webhook(newWebhookSecret()).verify(body, { ...headers })).toThrow()
  })

  it('makes secrets of 32 random bytes in whsec_ form', () => {
    const a = newWebhookSecret()
    expect(a).toMatch(/^whsec_/)
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32)
    expect(newWebhookSecret()).not.toBe(a)
  })
})

describe('nextAttemptAt', () => {
  const schedule = [5, 300, 1800, 7200, 18000, 36000, 36000]
  it('follows the schedule and gives up after its last entry', () => {
    expect(nextAttemptAt(1, schedule, 1_000)).toBe(6_000)
    expect(nextAttemptAt(2, schedule, 0)).toBe(300_000)
    expect(nextAttemptAt(7, schedule, 0)).toBe(36_000_000)
    expect(nextAttemptAt(8, schedule, 0)).toBeNull()
  })
})
