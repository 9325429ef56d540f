/**
 * Connections per client address (MAX_CONNECTIONS_PER_CLIENT, 64 by default) and the idle
 * keep-alive timeout (5 s), on a real listening server with raw sockets. The server listens on
 * `::` (dual stack): IPv4 clients arrive as `::ffff:a.b.c.d` and count as their IPv4 address.
 */
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { portOf } from '../helpers/raw-http.js'

let t: TestApp
let port: number
beforeAll(async () => {
  // Served on loopback: /metrics answers loopback clients without METRICS_TOKEN.
  t = await createTestApp({ env: { PUBLIC_BASE_URL: 'http://127.0.0.1:3000' } })
  port = portOf(await t.app.listen({ port: 0, host: '::' }))
})
afterAll(() => t.close())

interface Connection {
  socket: Socket
  /** Resolves when the connection closed (the server closed it, or we did). */
  closed: Promise<void>
  isClosed(): boolean
}

/** A connection to `host` from `localAddress`, once established. */
async function open(host: string, localAddress: string): Promise<Connection> {
  const socket = connect({ port, host, localAddress })
  socket.on('error', () => {})
  let isClosed = false
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      isClosed = true
      resolve()
    }),
  )
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('close', () => reject(new Error(`connection from ${localAddress} to ${host} closed before it was established`)))
  })
  return { socket, closed, isClosed: () => isClosed }
}

/** One request on the connection; resolves with the whole answer's text. */
function healthz(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1')
      const end = text.indexOf('\r\n\r\n')
      const length = /content-length: (\d+)/i.exec(text)?.[1]
      if (end !== -1 && length !== undefined && text.length >= end + 4 + Number(length)) {
        socket.off('data', onData).off('close', onClose)
        resolve(text)
      }
    }
    const onClose = () => reject(new Error(`closed before an answer: ${text}`))
    socket.on('data', onData).once('close', onClose)
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n')
  })
}

async function refusedTotal(): Promise<number> {
  const res = await t.inject({ method: 'GET', url: '/metrics' })
  expect(res.body).toContain('# HELP wishlist_connections_refused_total ')
  return Number(/^wishlist_connections_refused_total (\d+)$/m.exec(res.body)?.[1])
}

/** Resolves once `count` of the connections have closed. */
function closedCount(connections: Connection[], count: number): Promise<void> {
  let closed = 0
  return new Promise((resolve) => {
    for (const c of connections)
      void c.closed.then(() => {
        if (++closed === count) resolve()
      })
  })
}

describe('connections per client address', () => {
  it('keeps at most 64 open per client (IPv4 and its IPv4-mapped form alike): the rest are closed as they arrive and counted, other clients still connect, closing frees places', async () => {
    const before = await refusedTotal()
    // 200 connections of one client: half to the IPv4 address, half to its IPv4-mapped IPv6 form.
    const started = Date.now()
    const all = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        open(i % 2 === 0 ? '127.0.0.1' : '::ffff:127.0.0.1', i % 2 === 0 ? '127.0.0.1' : '::ffff:127.0.0.1'),
      ),
    )
    await closedCount(all, 136)
    // Closed at once, not after some timeout.
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(await refusedTotal()).toBe(before + 136)
    const kept = all.filter((c) => !c.isClosed())
    expect(kept).toHaveLength(64)

    // Other clients: another IPv4 address, and IPv6.
    for (const [host, from] of [
      ['127.0.0.1', '127.0.0.2'],
      ['::1', '::1'],
    ] as const) {
      const other = await open(host, from)
      expect(await healthz(other.socket)).toMatch(/^HTTP\/1\.1 200 /)
      other.socket.destroy()
    }

    // Ten of the client's connections close: ten new ones are accepted, the eleventh is not.
    const leaving = kept.splice(0, 10)
    for (const c of leaving) c.socket.end()
    await Promise.all(leaving.map((c) => c.closed))
    const replacements = []
    for (let i = 0; i < 10; i++) replacements.push(await open('127.0.0.1', '127.0.0.1'))
    const eleventh = await open('127.0.0.1', '127.0.0.1')
    await eleventh.closed
    expect(await refusedTotal()).toBe(before + 137)
    // All 64 are open and served.
    const answers = await Promise.all([...kept, ...replacements].map((c) => healthz(c.socket)))
    expect(answers).toHaveLength(64)
    for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 200 /)
    for (const c of [...kept, ...replacements]) c.socket.destroy()
  })

  it('closes an idle keep-alive connection after 5 s', { timeout: 15_000 }, async () => {
    const c = await open('127.0.0.1', '127.0.0.3')
    const answer = await healthz(c.socket)
    expect(answer).toMatch(/^HTTP\/1\.1 200 /)
    expect(answer).toMatch(/\r\nKeep-Alive: timeout=5\r\n/i)
    const idleSince = Date.now()
    await c.closed
    const idleMs = Date.now() - idleSince
    // 5 s, plus Node 24.6+'s keepAliveTimeoutBuffer (1 s) and slack for a busy machine.
    expect(idleMs).toBeGreaterThanOrEqual(4_900)
    expect(idleMs).toBeLessThan(8_000)
  })
})
