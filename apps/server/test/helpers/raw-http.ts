/**
 * HTTP/1.1 over a raw socket (node:net), for what inject() cannot do: a body that stalls
 * half-way, headers answered before the body is sent, a reader that never reads.
 */
import { connect, type Socket } from 'node:net'

export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

export interface RawExchange {
  socket: Socket
  /** The first complete response on the connection (rejects if it closes first). */
  response: Promise<RawResponse>
  /** Resolves when the server (or we) closed the connection. */
  closed: Promise<void>
  /** Bytes received so far. */
  received(): number
  /** With `stallAfterFirstChunk`: the first bytes of the answer arrived (then reading stopped). */
  started: Promise<string>
}

function parse(data: Buffer): RawResponse | undefined {
  const end = data.indexOf('\r\n\r\n')
  if (end === -1) return undefined
  const [statusLine, ...lines] = data.subarray(0, end).toString('latin1').split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  const length = headers['content-length']
  if (length === undefined) return undefined
  if (data.length < end + 4 + Number(length)) return undefined
  return { status: Number(statusLine?.split(' ')[1]), headers, body: data.subarray(end + 4, end + 4 + Number(length)).toString('utf8') }
}

/**
 * Opens a connection and writes `head` (request line and headers, without the blank line)
 * and `body`, if any. `stallAfterFirstChunk` reads the first chunk of the answer (its status
 * line and headers) and then nothing more: a reader that stalls, whose window fills.
 */
export async function rawRequest(
  port: number,
  head: string,
  body: Buffer | string = '',
  opts: { stallAfterFirstChunk?: boolean; localAddress?: string } = {},
): Promise<RawExchange> {
  // `localAddress`: another client address (any of 127.0.0.0/8 reaches the loopback on Linux).
  const socket = connect({ port, host: '127.0.0.1', ...(opts.localAddress === undefined ? {} : { localAddress: opts.localAddress }) })
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  socket.on('error', () => {})
  let data = Buffer.alloc(0)
  let count = 0
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  let onStart: (head: string) => void = () => {}
  const started = new Promise<string>((resolve) => {
    onStart = resolve
  })
  const response = new Promise<RawResponse>((resolve, reject) => {
    if (opts.stallAfterFirstChunk === true) {
      socket.once('data', (chunk: Buffer) => {
        count += chunk.length
        socket.pause()
        onStart(chunk.toString('latin1', 0, Math.min(chunk.length, 2048)))
      })
      return
    }
    socket.on('data', (chunk: Buffer) => {
      count += chunk.length
      if (data.length < 1024 * 1024) data = Buffer.concat([data, chunk])
      const parsed = parse(data)
      if (parsed) resolve(parsed)
    })
    socket.once('close', () =>
      reject(new Error(`connection closed before a complete response (${data.length} bytes: ${data.toString('latin1', 0, 200)})`)),
    )
  })
  response.catch(() => undefined)
  socket.write(`${head.replace(/\r?\n/g, '\r\n').trimEnd()}\r\n\r\n`)
  if (body.length > 0) socket.write(body)
  return { socket, response, closed, received: () => count, started }
}

/** `Host` and `Content-Length` headers for `rawRequest`. */
export const requestHead = (method: string, path: string, headers: Record<string, string | number>): string =>
  [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)].join('\r\n')

/** The port of a listening Fastify app. */
export function portOf(address: string): number {
  return Number(new URL(address).port)
}
