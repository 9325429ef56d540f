/**
 * One HTTP POST to a webhook receiver, with undici: a hard timeout over the whole exchange,
 * no redirects (undici's `request` never follows them; a 3xx is just a failed attempt), the
 * response body read up to a cap and dropped beyond it, and the SSRF guard on the way out.
 */
import { type Dispatcher, Agent, request } from 'undici'
import {
  addressRange,
  bareHostname,
  BlockedAddressError,
  guardedLookup,
  isPublicAddress,
  type ResolveHost,
  systemResolve,
} from './ssrf-guard.js'
import ipaddr from 'ipaddr.js'

/** How much of a receiver's answer is kept in the attempt log. */
export const RESPONSE_BODY_CAP_BYTES = 1024

export interface SendResult {
  /** Any 2xx. */
  ok: boolean
  statusCode: number | null
  /** The first RESPONSE_BODY_CAP_BYTES of the body, as text. */
  responseBody: string | null
  error: string | null
  /**
   * Why a target was not allowed (the address it is or resolved to): for the server log
   * only; `error`, which the merchant sees, says "target not allowed" and no more.
   */
  refusal?: string
  durationMs: number
}

export const TARGET_NOT_ALLOWED = 'target not allowed'

/** The SSRF guard's refusal of a resolved name, as undici passes it up (itself or as the cause). */
function blockedBy(err: unknown): BlockedAddressError | undefined {
  const cause = (err as { cause?: unknown } | null)?.cause
  return err instanceof BlockedAddressError ? err : cause instanceof BlockedAddressError ? cause : undefined
}

export interface WebhookSenderOptions {
  timeoutMs: number
  allowPrivateTargets: boolean
  /** Name resolution used by the SSRF guard (tests point names at loopback with it). */
  resolve?: ResolveHost
}

export interface WebhookSender {
  send(url: string, headers: Record<string, string>, body: string): Promise<SendResult>
  close(): Promise<void>
}

async function readCapped(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of body) {
      const buf = chunk as Buffer
      chunks.push(buf)
      size += buf.length
      if (size >= RESPONSE_BODY_CAP_BYTES) break
    }
  } finally {
    // Stop reading a large or endless body; the connection is discarded with it.
    if (size >= RESPONSE_BODY_CAP_BYTES) body.destroy()
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_BODY_CAP_BYTES).toString('utf8')
}

const UNDICI_TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const cause = (err as { cause?: unknown }).cause
  // The attempt's own deadline (AbortSignal) and undici's connect/headers/body timeouts are
  // set to the same value and race: whichever fires first, the attempt timed out.
  const code = (err as { code?: unknown }).code
  if (err.name === 'TimeoutError' || err.name === 'AbortError' || (typeof code === 'string' && UNDICI_TIMEOUTS.has(code))) return 'timeout'
  const inner = cause instanceof Error ? `: ${cause.message}` : ''
  return `${err.message}${inner}`.slice(0, 500)
}

export function createWebhookSender(opts: WebhookSenderOptions): WebhookSender {
  const dispatcher = new Agent({
    connect: {
      timeout: opts.timeoutMs,
      ...(opts.allowPrivateTargets ? {} : { lookup: guardedLookup(opts.resolve ?? systemResolve) }),
    },
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    keepAliveTimeout: 4_000,
  })

  return {
    async send(url, headers, body) {
      const started = performance.now()
      const done = (r: Omit<SendResult, 'durationMs'>): SendResult => ({ ...r, durationMs: Math.round(performance.now() - started) })
      let target: URL
      try {
        target = new URL(url)
      } catch {
        return done({ ok: false, statusCode: null, responseBody: null, error: 'invalid URL' })
      }
      if (!opts.allowPrivateTargets) {
        // Sockets skip the lookup hook for IP literals: classify them here.
        const host = bareHostname(target)
        if (ipaddr.isValid(host) && !isPublicAddress(host)) {
          return done({
            ok: false,
            statusCode: null,
            responseBody: null,
            error: TARGET_NOT_ALLOWED,
            refusal: `${host} is a ${addressRange(host)} address`,
          })
        }
      }
      try {
        const res = await request(target, {
          method: 'POST',
          dispatcher,
          headers: { 'content-type': 'application/json', 'user-agent': 'wishlist-webhooks/1', ...headers },
          body,
          signal: AbortSignal.timeout(opts.timeoutMs),
        })
        const responseBody = await readCapped(res.body)
        return done({ ok: res.statusCode >= 200 && res.statusCode < 300, statusCode: res.statusCode, responseBody, error: null })
      } catch (err) {
        const blocked = blockedBy(err)
        if (blocked) return done({ ok: false, statusCode: null, responseBody: null, error: TARGET_NOT_ALLOWED, refusal: blocked.message })
        return done({ ok: false, statusCode: null, responseBody: null, error: describe(err) })
      }
    },
    close: () => dispatcher.close(),
  }
}
