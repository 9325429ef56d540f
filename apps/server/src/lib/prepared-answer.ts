/**
 * Answers built once and served many times (the API reference's page, script and document):
 * the body is kept as one Buffer per content coding (identity, gzip, brotli), each with its
 * strong ETag, and every request is answered from those same Buffers.
 *
 * A large body is written in views of the shared Buffer (`subarray`: never a copy) through a
 * stream piped into the response, so it goes out only as fast as the client reads (pipe's
 * backpressure). A reader that takes nothing for `sendTimeoutMs` has its connection
 * destroyed: what a connection can hold on the server is a few views and a timer, whatever the
 * body's size, and not for longer than that bound.
 */
import { createHash } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import { promisify } from 'node:util'
import { brotliCompress, constants as zlib, gzip } from 'node:zlib'
import { negotiate } from '@fastify/accept-negotiator'
import type { FastifyReply, FastifyRequest } from 'fastify'

type Coding = 'br' | 'gzip' | 'identity'

interface Representation {
  coding: Coding
  body: Buffer
  etag: string
}

export interface PreparedAnswer {
  status: number
  /** Headers of the full answer (content-type, location, …). */
  headers: Readonly<Record<string, string>>
  /** By content coding; identity always, the others when the body was worth compressing. */
  representations: Readonly<Partial<Record<Coding, Representation>>> & { identity: Representation }
}

/** Bodies smaller than this are sent as they are (compression would gain a few bytes). */
const COMPRESS_FROM_BYTES = 1024
/** Bodies below this are written in one go (they fit a new socket's buffer); larger ones as a stream. */
const STREAM_FROM_BYTES = 16 * 1024
/** The views of a streamed body. */
const CHUNK_BYTES = 64 * 1024

const gzipAsync = promisify(gzip)
const brotliAsync = promisify(brotliCompress)

/**
 * Builds the representations of `body` (compressed in libuv's thread pool, not on the event
 * loop). Gzip at level 9, brotli at quality 9: on the 4.9 MB reference script 1.42 MB in about
 * 160 ms and 1.18 MB in about 630 ms; brotli's quality 11 would save another 0.1 MB for 8.8 s.
 */
export async function prepareAnswer(status: number, headers: Record<string, string>, body: Buffer): Promise<PreparedAnswer> {
  const tag = createHash('sha256').update(body).digest('base64url').slice(0, 27)
  const identity: Representation = { coding: 'identity', body, etag: `"${tag}"` }
  if (body.length < COMPRESS_FROM_BYTES) return { status, headers, representations: { identity } }
  const [gzipped, brotli] = await Promise.all([
    gzipAsync(body, { level: 9 }),
    brotliAsync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  ])
  return {
    status,
    headers,
    representations: {
      identity,
      ...(gzipped.length < body.length ? { gzip: { coding: 'gzip', body: gzipped, etag: `"${tag}-gz"` } } : {}),
      ...(brotli.length < body.length ? { br: { coding: 'br', body: brotli, etag: `"${tag}-br"` } } : {}),
    },
  }
}

/** The representation `Accept-Encoding` asks for: brotli, then gzip, then the body as it is. */
function choose(answer: PreparedAnswer, acceptEncoding: string | undefined): Representation {
  const { representations } = answer
  if (acceptEncoding === undefined || acceptEncoding === '' || (representations.gzip === undefined && representations.br === undefined))
    return representations.identity
  const offered = (['br', 'gzip', 'identity'] as const).filter((coding) => representations[coding] !== undefined)
  const chosen = negotiate(acceptEncoding, offered)
  // Nothing acceptable (`identity;q=0` and no coding we have): the body as it is, rather than 406.
  return (chosen === null ? undefined : representations[chosen]) ?? representations.identity
}

/** `If-None-Match` names this ETag (or `*`); compared weakly, as RFC 9110 asks for this header. */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  if (ifNoneMatch.trim() === '*') return true
  return ifNoneMatch.split(',').some((candidate) => {
    const value = candidate.trim()
    return (value.startsWith('W/') ? value.slice(2) : value) === etag
  })
}

/**
 * A body read out of one shared Buffer in views of it. `_read` runs whenever the response
 * has taken the previous view (pipe pauses while the socket's buffer is full), which is what
 * re-arms the send timer; the timer runs on after the last view (until the response's last
 * bytes are written) and is dropped when the response closes. An answer queued behind another
 * on its connection (pipelined requests; Node gives it the socket when the previous one is
 * written) is not timed until it has the socket.
 */
class SharedBodyStream extends Readable {
  readonly #body: Buffer
  #offset = 0
  readonly #timer: NodeJS.Timeout

  constructor(body: Buffer, res: ServerResponse, sendTimeoutMs: number) {
    super({ highWaterMark: CHUNK_BYTES })
    this.#body = body
    this.#timer = setTimeout(() => {
      // Closed already (the timer then stops), or queued behind another answer: not timed yet.
      if (res.destroyed) return
      if (res.socket === null) this.#timer.refresh()
      // The reader took nothing for the whole bound: its connection is closed, the views freed.
      else res.destroy()
    }, sendTimeoutMs)
    res.once('socket', () => this.#timer.refresh())
    res.once('close', () => clearTimeout(this.#timer))
  }

  override _read(): void {
    this.#timer.refresh()
    if (this.#offset >= this.#body.length) {
      this.push(null)
      return
    }
    const end = Math.min(this.#body.length, this.#offset + CHUNK_BYTES)
    const view = this.#body.subarray(this.#offset, end)
    this.#offset = end
    this.push(view)
  }
}

/**
 * Answers `request` with a prepared answer: the coding `Accept-Encoding` asks for (with
 * `Vary: Accept-Encoding` when there is a choice), its ETag and `304 Not Modified` when
 * `If-None-Match` names it; the body from the shared Buffer, streamed when it is large.
 */
export function sendPrepared(request: FastifyRequest, reply: FastifyReply, answer: PreparedAnswer, sendTimeoutMs: number): FastifyReply {
  const representation = choose(answer, request.headers['accept-encoding'])
  if (answer.representations.gzip !== undefined || answer.representations.br !== undefined) {
    const vary = reply.getHeader('vary')
    reply.header('vary', vary === undefined ? 'Accept-Encoding' : `${String(vary)}, Accept-Encoding`)
  }
  if (answer.status === 200) {
    // Revalidated on every use (a 304 of a few hundred bytes): the reference changes with the service's version.
    reply.header('etag', representation.etag).header('cache-control', 'no-cache')
    if (matches(request.headers['if-none-match'], representation.etag)) return reply.code(304).send()
  }
  reply.code(answer.status).headers(answer.headers)
  if (representation.coding !== 'identity') reply.header('content-encoding', representation.coding)
  const { body } = representation
  reply.header('content-length', body.length)
  // HEAD: Fastify's HEAD route takes the length of the Buffer and sends none of it.
  if (body.length < STREAM_FROM_BYTES || request.method === 'HEAD') return reply.send(body)
  return reply.send(new SharedBodyStream(body, reply.raw, sendTimeoutMs))
}
