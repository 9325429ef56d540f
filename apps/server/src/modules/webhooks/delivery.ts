/**
 * One attempt of one delivery: sign, send, log the attempt, settle the delivery (succeeded,
 * rescheduled per the retry schedule, or failed) and disable the endpoint on 410 Gone.
 * Shared by the worker and the synchronous `POST /v1/webhooks/{id}/test`.
 */
import type { Db } from '../../db/types.js'
import { now } from '../../lib/time.js'
import { nextAttemptAt } from './retry-schedule.js'
import { signatureHeaders } from './signing.js'
import type { SendResult, WebhookSender } from './webhook-sender.js'
import { type DeliveryRow, type EndpointRow, webhooksRepo } from './webhooks.repo.js'

export interface AttemptDeps {
  db: Db
  sender: WebhookSender
  retryScheduleSec: readonly number[]
  workerId: string
}

export interface AttemptOutcome {
  result: SendResult
  status: DeliveryRow['status']
  attempts: number
  nextAttemptAt: number | null
}

export async function attemptDelivery(
  deps: AttemptDeps,
  delivery: DeliveryRow,
  endpoint: EndpointRow,
  claimToken: string,
  opts: { retry: boolean } = { retry: true },
): Promise<AttemptOutcome> {
  const startedAt = now()
  const headers = signatureHeaders(endpoint.secret, delivery.id, delivery.body, new Date(startedAt))
  const result = await deps.sender.send(endpoint.url, { ...headers }, delivery.body)
  const at = now()
  const attempts = delivery.attempts + 1
  const gone = result.statusCode === 410
  const next = result.ok || gone || !opts.retry ? null : nextAttemptAt(attempts, deps.retryScheduleSec, at)
  const status = result.ok ? 'succeeded' : next === null ? 'failed' : 'pending'
  await deps.db.transaction().execute(async (trx) => {
    // Only the holder of the claim writes the outcome: a delivery deleted meanwhile (its
    // webhook was deleted) or re-claimed after an expired lease is left alone.
    const settled = await webhooksRepo.settle(
      trx,
      { shop_id: delivery.shop_id, id: delivery.id, claimToken },
      {
        status,
        attempts,
        next_attempt_at: next,
        last_status_code: result.statusCode,
        last_error: result.error ?? (result.ok ? null : `HTTP ${result.statusCode}`),
        at,
      },
    )
    if (!settled) return
    await webhooksRepo.recordAttempt(trx, {
      shop_id: delivery.shop_id,
      delivery_id: delivery.id,
      attempt: attempts,
      worker_id: deps.workerId,
      started_at: startedAt,
      duration_ms: result.durationMs,
      status_code: result.statusCode,
      error: result.error,
      response_body: result.responseBody,
    })
    if (gone) await webhooksRepo.disableEndpoint(trx, delivery.shop_id, endpoint.id, 'receiver answered 410 Gone', at)
  })
  return { result, status, attempts, nextAttemptAt: next }
}
