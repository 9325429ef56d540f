/**
 * Webhook endpoints of a shop (docs/api.md, "Webhooks"): create with a secret shown once, list,
 * delete, the deliveries log, and a synchronous signed `webhook.test` delivery.
 */
import type { Storage } from '../../db/connect.js'
import type { DeliveryStatus } from '../../db/schema.js'
import { AppError, notFound, invalid } from '../../lib/errors.js'
import { newId, newOrderedId } from '../../lib/ids.js'
import { now } from '../../lib/time.js'
import type { RequestContext } from '../auth/auth.types.js'
import type { WebhookEventName } from '../events/outbox.js'
import { attemptDelivery } from './delivery.js'
import { newWebhookSecret } from './signing.js'
import { refuseTargetUrl, type TargetPolicy } from './ssrf-guard.js'
import type { WebhookSender } from './webhook-sender.js'
import { deliveryBody } from './webhook-worker.js'
import { type DeliveryRow, type EndpointRow, newDelivery, webhooksRepo } from './webhooks.repo.js'
import { MAX_WEBHOOKS_PER_SHOP } from './webhooks.schemas.js'

export interface Webhook {
  webhookId: string
  url: string
  events: string[]
  createdAt: number
}

export interface Delivery {
  id: string
  event: string
  status: DeliveryStatus
  attempts: number
  lastStatusCode: number | null
  lastError: string | null
  nextAttemptAt: number | null
  createdAt: number
}

const toWebhook = (row: EndpointRow): Webhook => ({
  webhookId: row.id,
  url: row.url,
  events: JSON.parse(row.events) as string[],
  createdAt: row.created_at,
})

export const toDelivery = (row: DeliveryRow): Delivery => ({
  id: row.id,
  event: row.event,
  status: row.status,
  attempts: row.attempts,
  lastStatusCode: row.last_status_code,
  lastError: row.last_error,
  nextAttemptAt: row.status === 'pending' ? row.next_attempt_at : null,
  createdAt: row.created_at,
})

export interface WebhooksServiceDeps {
  storage: Storage
  policy: TargetPolicy
  sender: WebhookSender
  retryScheduleSec: readonly number[]
}

export function createWebhooksService(deps: WebhooksServiceDeps) {
  const { db } = deps.storage

  return {
    async create(ctx: RequestContext, input: { url: string; events: WebhookEventName[] }): Promise<Webhook & { secret: string }> {
      const url = input.url.trim()
      const refused = refuseTargetUrl(url, deps.policy)
      if (refused !== null) {
        throw invalid([{ path: 'body.url', message: refused }], `url ${refused}`)
      }
      const events = [...new Set(input.events)]
      const row: EndpointRow = {
        shop_id: ctx.shop.id,
        id: newId('wh'),
        url,
        events: JSON.stringify(events),
        secret: newWebhookSecret(),
        created_at: now(),
        disabled_at: null,
        disabled_reason: null,
      }
      await db.transaction().execute(async (trx) => {
        await webhooksRepo.lockShop(trx, ctx.shop.id)
        if ((await webhooksRepo.countEndpoints(trx, ctx.shop.id)) >= MAX_WEBHOOKS_PER_SHOP) {
          throw new AppError('WEBHOOK_LIMIT', `A shop can have at most ${MAX_WEBHOOKS_PER_SHOP} webhooks`, { limit: MAX_WEBHOOKS_PER_SHOP })
        }
        await webhooksRepo.insertEndpoint(trx, row)
      })
      return { ...toWebhook(row), secret: row.secret }
    },

    async list(ctx: RequestContext): Promise<Webhook[]> {
      return (await webhooksRepo.listEndpoints(db, ctx.shop.id)).map(toWebhook)
    },

    /** Deleting drops the pending deliveries too: nothing is sent after a delete. */
    async remove(ctx: RequestContext, webhookId: string): Promise<void> {
      const deleted = await db.transaction().execute((trx) => webhooksRepo.deleteEndpoint(trx, ctx.shop.id, webhookId))
      if (!deleted) throw notFound('Webhook')
    },

    async deliveries(ctx: RequestContext, webhookId: string, limit: number): Promise<Delivery[]> {
      if (!(await webhooksRepo.getEndpoint(db, ctx.shop.id, webhookId))) throw notFound('Webhook')
      return (await webhooksRepo.listDeliveries(db, ctx.shop.id, webhookId, limit)).map(toDelivery)
    },

    /**
     * Sends a signed `webhook.test` now (one attempt, no retries) and records it in the
     * deliveries log; the answer says how the receiver responded, never what it sent back.
     * `refusal` (why the target was not allowed) is for the server log, not the answer.
     */
    async sendTest(
      ctx: RequestContext,
      webhookId: string,
    ): Promise<Delivery & { durationMs: number; error: string | null; refusal?: string }> {
      const endpoint = await webhooksRepo.getEndpoint(db, ctx.shop.id, webhookId)
      if (!endpoint) throw notFound('Webhook')
      const at = now()
      const claimToken = newId('req')
      const body = deliveryBody('webhook.test', ctx.shop.domain, at, {
        webhookId: endpoint.id,
        message: 'This is a test event from the wishlist service.',
      })
      // Never due for the worker: this request makes the one attempt itself.
      const delivery = newDelivery(
        {
          shop_id: ctx.shop.id,
          webhook_id: endpoint.id,
          message_id: newOrderedId('msg'),
          event: 'webhook.test',
          body,
          next_attempt_at: null,
          locked_by: claimToken,
        },
        at,
      )
      await webhooksRepo.insertDeliveries(db, [delivery])
      const outcome = await attemptDelivery(
        { db, sender: deps.sender, retryScheduleSec: deps.retryScheduleSec, workerId: ctx.requestId },
        delivery,
        endpoint,
        claimToken,
        { retry: false },
      )
      const settled = await webhooksRepo.getDelivery(db, ctx.shop.id, delivery.id)
      const view = settled
        ? toDelivery(settled)
        : { ...toDelivery(delivery), status: outcome.status, attempts: outcome.attempts, lastStatusCode: outcome.result.statusCode }
      const { durationMs, error, refusal } = outcome.result
      return { ...view, durationMs, error, ...(refusal ? { refusal } : {}) }
    },
  }
}

export type WebhooksService = ReturnType<typeof createWebhooksService>
