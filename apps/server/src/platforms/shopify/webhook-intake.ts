/**
 * How the webhook route receives bodies it cannot authenticate until they are whole (the
 * HMAC covers every byte), so that senders who are not Shopify cannot take the room
 * Shopify's deliveries need (docs/shopify.md, "Webhooks that prove themselves"):
 *
 * - the budget of bodies in flight (SHOPIFY_WEBHOOK_BUFFER_MB) counts the bytes received,
 *   not the lengths declared: a sender that declares 1 MiB and sends one byte holds one byte;
 * - one client address has at most WEBHOOK_BODIES_PER_CLIENT unfinished bodies (beyond: 429);
 * - a body arriving slower than WEBHOOK_MIN_BYTES_PER_SECOND after its first second is
 *   dropped (408), so an idle sender holds its place for about a second, not until the
 *   request timeout.
 *
 * Each refusal closes the connection. A sender's place is given back once its body is whole
 * (Shopify sends bursts from one address: a body being processed is not an unfinished one);
 * its bytes when the response ends or the connection closes.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { clientAddressKey } from '../../lib/client-address.js'
import { AppError } from '../../lib/errors.js'

/** Shopify's webhook bodies (a product with many variants, a large order) may be larger than the API's 1 MiB. */
export const WEBHOOK_BODY_LIMIT = 5 * 1024 * 1024
/** Unfinished webhook bodies one client address may send at once. */
export const WEBHOOK_BODIES_PER_CLIENT = 4
/** The slowest a webhook body may arrive after its first second, in bytes per second (16 KiB/s). */
export const WEBHOOK_MIN_BYTES_PER_SECOND = 16 * 1024
/** The first second: a body's pace is not checked before it. */
const GRACE_MS = 1_000
/** How often a body's pace is checked. */
const PACE_CHECK_MS = 200
/** Seconds a refused sender is asked to wait. */
const RETRY_AFTER_S = '5'

interface Receiving {
  startedAt: number
  /** The client address key while its body is unfinished ('' once whole, or answered). */
  client: string
  bytes: number
  body: Buffer | undefined
  released: boolean
}

type Done = (err: Error | null, body?: unknown) => void

/** Why a webhook body was refused (the `reason` of the refusals metric). */
export type IntakeRefusal = 'per_client' | 'budget' | 'slow' | 'too_large'
const CODE_OF = { per_client: 'RATE_LIMITED', budget: 'UNAVAILABLE', slow: 'REQUEST_TIMEOUT', too_large: 'PAYLOAD_TOO_LARGE' } as const

export class WebhookIntake {
  /** Bytes received of the bodies not yet answered. */
  #received = 0
  readonly #perClient = new Map<string, number>()
  readonly #receiving = new WeakMap<FastifyRequest, Receiving>()
  /** Bodies refused so far, by reason. */
  readonly refused: Record<IntakeRefusal, number> = { per_client: 0, budget: 0, slow: 0, too_large: 0 }

  constructor(readonly budgetBytes: number) {}

  /** Bytes of unanswered webhook bodies held now. */
  get receivedBytes(): number {
    return this.#received
  }

  /** The refusal's error, counted; it closes the connection (and asks to retry later when busy). */
  #refuse(reason: IntakeRefusal, message: string): AppError {
    this.refused[reason] += 1
    const code = CODE_OF[reason]
    return new AppError(
      code,
      message,
      undefined,
      code === 'RATE_LIMITED' || code === 'UNAVAILABLE' ? { connection: 'close', 'retry-after': RETRY_AFTER_S } : { connection: 'close' },
    )
  }

  /** Before the body: the sender's place, or the error that refuses it. */
  admit(request: FastifyRequest, reply: FastifyReply): AppError | undefined {
    const declared = Number(request.headers['content-length'] ?? 0)
    if (declared > WEBHOOK_BODY_LIMIT) return this.#refuse('too_large', `A webhook body is at most ${WEBHOOK_BODY_LIMIT} bytes`)
    const client = clientAddressKey(request.ip)
    const open = this.#perClient.get(client) ?? 0
    if (open >= WEBHOOK_BODIES_PER_CLIENT)
      return this.#refuse(
        'per_client',
        `At most ${WEBHOOK_BODIES_PER_CLIENT} webhook bodies are received at once from one address; retry shortly`,
      )
    if (this.#received >= this.budgetBytes) return this.#refuse('budget', 'Too many webhook bodies are being received; retry shortly')
    const state: Receiving = { startedAt: Date.now(), client, bytes: 0, body: undefined, released: false }
    this.#perClient.set(client, open + 1)
    this.#receiving.set(request, state)
    reply.raw.once('close', () => this.#release(state))
    return undefined
  }

  /** The content-type parser: reads the body as bytes within the bounds above. */
  read(request: FastifyRequest, payload: NodeJS.ReadableStream, done: Done): void {
    const state = this.#receiving.get(request)
    if (state === undefined) return done(new AppError('INTERNAL_ERROR', 'Webhook body read before it was admitted'))
    const chunks: Buffer[] = []
    let finished = false
    const finish = (err: AppError | null) => {
      if (finished) return
      finished = true
      clearInterval(pace)
      payload.removeListener('data', onData)
      if (err !== null) {
        // Read no more of a refused body: the answer closes the connection.
        payload.pause()
        return done(err)
      }
      state.body = Buffer.concat(chunks)
      // Whole: no longer an unfinished body of its sender (its bytes count until the answer).
      this.#leaveClient(state)
      done(null, undefined)
    }
    const onData = (chunk: Buffer) => {
      state.bytes += chunk.length
      this.#received += chunk.length
      if (state.bytes > WEBHOOK_BODY_LIMIT)
        return finish(this.#refuse('too_large', `A webhook body is at most ${WEBHOOK_BODY_LIMIT} bytes`))
      if (this.#received > this.budgetBytes)
        return finish(this.#refuse('budget', 'Too many webhook bodies are being received; retry shortly'))
      chunks.push(chunk)
    }
    const pace = setInterval(() => {
      const late = Date.now() - state.startedAt - GRACE_MS
      if (late > 0 && state.bytes < (WEBHOOK_MIN_BYTES_PER_SECOND * late) / 1000) {
        finish(this.#refuse('slow', `The webhook body arrived slower than ${WEBHOOK_MIN_BYTES_PER_SECOND / 1024} KiB/s`))
      }
    }, PACE_CHECK_MS)
    payload.on('data', onData)
    payload.once('end', () => finish(null))
    // A sender gone before the end (an 'error' or an early 'close'): nothing to answer it.
    const gone = () => finish(new AppError('REQUEST_TIMEOUT', 'The webhook body was not received', undefined, { connection: 'close' }))
    payload.once('error', gone)
    payload.once('close', gone)
  }

  /** The body read for this request (empty when it had none). */
  bodyOf(request: FastifyRequest): Buffer {
    return this.#receiving.get(request)?.body ?? Buffer.alloc(0)
  }

  #leaveClient(state: Receiving): void {
    if (state.client === '') return
    const open = (this.#perClient.get(state.client) ?? 1) - 1
    if (open <= 0) this.#perClient.delete(state.client)
    else this.#perClient.set(state.client, open)
    state.client = ''
  }

  #release(state: Receiving): void {
    if (state.released) return
    state.released = true
    this.#received -= state.bytes
    this.#leaveClient(state)
    state.body = undefined
  }
}
