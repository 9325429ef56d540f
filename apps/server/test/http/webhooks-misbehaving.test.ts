/**
 * Webhook receivers that misbehave, with the worker running as in production (its own
 * loop, not driven by hand): down for a while, hanging past the timeout, redirecting,
 * answering with an endless body, resetting the connection. None of them stalls the
 * deliveries to a healthy endpoint, and a receiver that comes back gets everything.
 */
import type { ServerResponse } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { enqueueWebhookEvents } from '../../src/modules/events/outbox.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'

/**
 * The worker's log, kept: it reports every failed attempt (`status` pending while a retry is
 * due, failed after the last). `until(cond)` resolves at the first report after which
 * `cond()` holds, so the tests wait on the worker's own reports rather than polling.
 */
function attemptLog() {
  const failed: { deliveryId: string; webhookId: string; status: string }[] = []
  const waiters: (() => void)[] = []
  const log = {
    info() {},
    error() {},
    warn(obj: object) {
      failed.push(obj as (typeof failed)[number])
      for (const w of waiters.splice(0)) w()
    },
  }
  const until = (cond: () => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => (cond() ? resolve() : void waiters.push(check))
      check()
    })
  return { log, failed, until }
}
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function setup(env: Record<string, string>, log = attemptLog().log) {
  const t = await createTestApp({ env: { WEBHOOK_POLL_INTERVAL_MS: '20', ...env }, worker: { leaseMs: 60_000, log } })
  cleanups.push(() => t.close())
  const shop = await t.createShop('free')
  const admin = await shop.adminToken()
  return { t, shop, admin }
}

async function receiverFor(): Promise<Receiver> {
  const r = await startReceiver()
  cleanups.push(() => r.close())
  return r
}

async function hook(t: TestApp, admin: string, url: string): Promise<string> {
  const res = await t.call('POST', '/v1/webhooks', { token: admin, body: { url, events: ['wishlist.shared'] } })
  expect(res.status).toBe(201)
  return res.body.data.webhookId as string
}

async function emit(t: TestApp, shop: TestShop, n: number, from = 0) {
  await t.storage.db.transaction().execute((trx) =>
    enqueueWebhookEvents(
      trx,
      shop.id,
      Array.from({ length: n }, (_, i) => ({ event: 'wishlist.shared' as const, data: { customerId: String(from + i) } })),
    ),
  )
}

const customerIds = (r: Receiver, path?: string) =>
  new Set(
    r.received
      .filter((x) => path === undefined || x.path === path)
      .map((x) => (JSON.parse(x.body) as { data: { customerId: string } }).data.customerId),
  )

async function deliveries(t: TestApp, admin: string, webhookId: string) {
  return (await t.call('GET', `/v1/webhooks/${webhookId}/deliveries?limit=100`, { token: admin })).body.data.deliveries as {
    status: string
    attempts: number
    lastStatusCode: number | null
  }[]
}

describe('a receiver that is down for a while', () => {
  it('gets every delivery once it is back (retry schedule shrunk)', async () => {
    const attempts = attemptLog()
    const { t, shop, admin } = await setup(
      { WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2', WEBHOOK_TIMEOUT_MS: '2000' },
      attempts.log,
    )
    const receiver = await receiverFor()
    const webhookId = await hook(t, admin, `${receiver.url}/hook`)
    await receiver.goDown()
    await emit(t, shop, 10)
    // Every delivery was tried, and refused, at least twice while the receiver was away.
    await attempts.until(() => {
      const refusals = new Map<string, number>()
      for (const f of attempts.failed) refusals.set(f.deliveryId, (refusals.get(f.deliveryId) ?? 0) + 1)
      return refusals.size === 10 && [...refusals.values()].every((n) => n >= 2)
    })
    const whileDown = await deliveries(t, admin, webhookId)
    expect(whileDown).toHaveLength(10)
    for (const d of whileDown) expect(d).toMatchObject({ status: 'pending', lastStatusCode: null })
    expect(Math.min(...whileDown.map((d) => d.attempts))).toBeGreaterThanOrEqual(2)

    await receiver.comeBack()
    await receiver.waitFor(10, undefined, 30_000)
    expect(customerIds(receiver)).toEqual(new Set(Array.from({ length: 10 }, (_, i) => String(i))))
    await t.worker!.stop() // resolves once the attempts in flight are recorded
    expect((await deliveries(t, admin, webhookId)).every((d) => d.status === 'succeeded')).toBe(true)
  })
})

describe('a receiver that hangs', () => {
  it('does not hold back deliveries to a healthy endpoint while its attempts wait for the timeout', async () => {
    // A long timeout: the healthy deliveries must all arrive while the slow ones still hang.
    const { t, shop, admin } = await setup({ WEBHOOK_RETRY_SCHEDULE: '0.2', WEBHOOK_TIMEOUT_MS: '30000' })
    const slow = await receiverFor()
    const healthy = await receiverFor()
    const held: ServerResponse[] = []
    slow.respond = (_r, res) => {
      held.push(res)
    }
    await hook(t, admin, `${slow.url}/slow`)
    await hook(t, admin, `${healthy.url}/healthy`)
    await emit(t, shop, 60)

    await healthy.waitFor(60, undefined, 25_000)
    expect(customerIds(healthy).size).toBe(60)
    // The slow receiver got only a few attempts at once, all still unanswered.
    expect(held.length).toBeGreaterThan(0)
    expect(held.length).toBeLessThanOrEqual(5)
    expect(held.every((res) => !res.writableEnded)).toBe(true)

    // Once it answers, the rest of its deliveries follow.
    slow.respond = (_r, res) => {
      res.writeHead(200).end()
    }
    for (const res of held) res.writeHead(200).end()
    await slow.waitFor(60, undefined, 25_000)
    expect(customerIds(slow).size).toBe(60)
  })
})

describe('receivers that redirect, answer endlessly, reset or time out', () => {
  it('each attempt ends as documented and the healthy endpoint gets everything meanwhile', async () => {
    const attempts = attemptLog()
    const { t, shop, admin } = await setup({ WEBHOOK_RETRY_SCHEDULE: '0.3,0.3', WEBHOOK_TIMEOUT_MS: '1500' }, attempts.log)
    const r = await receiverFor()
    let hugeBytesSent = 0
    r.respond = async (req, res) => {
      switch (req.path) {
        case '/redirect':
          res.writeHead(307, { location: `${r.url}/healthy` }).end()
          return
        case '/reset':
          res.socket?.destroy()
          return
        case '/hang':
          return // never answers
        case '/huge': {
          // An endless 200 body: the sender keeps the first KiB and hangs up.
          res.writeHead(200, { 'content-type': 'text/plain' })
          const chunk = Buffer.alloc(64 * 1024, 'x')
          while (!res.destroyed && hugeBytesSent < 512 * 1024 * 1024) {
            hugeBytesSent += chunk.length
            if (!res.write(chunk)) {
              // Whichever comes first; the other listener goes too, so they do not pile up on the response.
              await new Promise<void>((resolve) => {
                const done = () => {
                  res.off('drain', done).off('close', done)
                  resolve()
                }
                res.once('drain', done).once('close', done)
              })
            }
          }
          return
        }
        default:
          res.writeHead(200).end('ok')
      }
    }
    const ids = {
      redirect: await hook(t, admin, `${r.url}/redirect`),
      reset: await hook(t, admin, `${r.url}/reset`),
      hang: await hook(t, admin, `${r.url}/hang`),
      huge: await hook(t, admin, `${r.url}/huge`),
      healthy: await hook(t, admin, `${r.url}/healthy`),
    }
    const N = 8
    await emit(t, shop, N)

    // Healthy deliveries arrive while the others are still misbehaving.
    await r.waitFor(N, (x) => x.path === '/healthy', 20_000)
    expect(customerIds(r, '/healthy').size).toBe(N)

    // Wait until every misbehaving delivery has used up its 3 attempts (the worker reports
    // each last failure) and every endless body has been sent; then stop the worker, which
    // resolves once the attempts in flight are recorded.
    const misbehaving = new Set([ids.redirect, ids.reset, ids.hang])
    await attempts.until(() => attempts.failed.filter((f) => misbehaving.has(f.webhookId) && f.status === 'failed').length === 3 * N)
    await r.waitFor(N, (x) => x.path === '/huge', 20_000)
    await t.worker!.stop()
    for (const key of ['redirect', 'reset', 'hang'] as const)
      expect((await deliveries(t, admin, ids[key])).map((d) => d.status)).toEqual(Array(N).fill('failed'))
    expect((await deliveries(t, admin, ids.huge)).map((d) => d.status)).toEqual(Array(N).fill('succeeded'))
    const attemptsOf = async (webhookId: string) =>
      t.storage.db
        .selectFrom('webhook_attempts')
        .innerJoin('webhook_deliveries', (j) =>
          j
            .onRef('webhook_deliveries.shop_id', '=', 'webhook_attempts.shop_id')
            .onRef('webhook_deliveries.id', '=', 'webhook_attempts.delivery_id'),
        )
        .select(['webhook_attempts.status_code', 'webhook_attempts.error', 'webhook_attempts.response_body'])
        .where('webhook_deliveries.webhook_id', '=', webhookId)
        .execute()
    // Redirects are not followed: 3 attempts of 307 each, nothing extra reached /healthy.
    expect((await attemptsOf(ids.redirect)).map((a) => a.status_code)).toEqual(Array(3 * N).fill(307))
    expect(r.received.filter((x) => x.path === '/healthy')).toHaveLength(N)
    // Resets and hangs are failed attempts with an error, never a status.
    for (const a of await attemptsOf(ids.reset)) expect(a).toMatchObject({ status_code: null, error: expect.any(String) })
    for (const a of await attemptsOf(ids.hang)) expect(a).toMatchObject({ status_code: null, error: 'timeout' })
    expect(await attemptsOf(ids.hang)).toHaveLength(3 * N)
    // The endless body: a 2xx, 1 KiB kept, and far less than the body read.
    const huge = await attemptsOf(ids.huge)
    expect(huge).toHaveLength(N)
    for (const a of huge) expect(a.response_body).toBe('x'.repeat(1024))
    expect(hugeBytesSent).toBeLessThan(512 * 1024 * 1024)
  })
})
