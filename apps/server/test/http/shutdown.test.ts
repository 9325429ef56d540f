import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_JWT_SECRET } from '../helpers/app.js'
import { openStorage } from '../../src/db/connect.js'
import { freshDatabase, type TestDatabase } from '../helpers/db.js'
import { createShopWithCli, startServerProcess } from '../helpers/server-process.js'

const dir = mkdtempSync(join(tmpdir(), 'wishlist-shutdown-'))

/** Resolves once what `read()` returns matches `re`, checked on each chunk the socket receives. */
function received(socket: Socket, read: () => string, re: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!re.test(read())) return
      socket.off('data', check).off('close', closed)
      resolve()
    }
    const closed = () => reject(new Error(`connection closed before ${re}: ${read()}`))
    socket.on('data', check).once('close', closed)
    check()
  })
}

/**
 * Resolves once the server refuses a connection: after SIGTERM its listener closes, and each
 * probe that still connects is closed and followed by the next (no timer: each probe waits
 * for its own outcome). Fails if 10,000 probes are all accepted.
 */
async function refusedSoon(port: number): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    const refused = await new Promise<boolean>((resolve) => {
      const probe = connect(port, '127.0.0.1')
      probe.once('connect', () => {
        probe.destroy()
        resolve(false)
      })
      probe.once('error', () => resolve(true))
    })
    if (refused) return
  }
  throw new Error('the server still accepts connections')
}
let database: TestDatabase

beforeAll(async () => {
  database = await freshDatabase({ sqliteFile: join(dir, 'shutdown.db') })
})
afterAll(async () => {
  await database.drop()
  rmSync(dir, { recursive: true, force: true })
})

describe('graceful shutdown', { timeout: 60_000 }, () => {
  it('on SIGTERM finishes the in-flight request, refuses new connections and exits 0', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/cli-entry.ts', 'serve'], {
      env: { ...process.env, DATABASE_URL: database.url, JWT_SECRET: TEST_JWT_SECRET, PORT: '0', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const port = await new Promise<number>((resolve, reject) => {
      let out = ''
      child.stderr.on('data', (chunk: Buffer) => {
        out += chunk.toString()
      })
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString()
        const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
        if (m) resolve(Number(m[1]))
      })
      child.on('exit', () => reject(new Error(`server exited early: ${out}`)))
    })

    // A request whose body is still arriving when SIGTERM comes. `Expect: 100-continue`
    // makes the server say when it has the request: its `100 Continue`.
    const body = JSON.stringify({ api_key: 'ak_none', api_secret: 'sk_none' })
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    let response = ''
    socket.on('data', (chunk) => {
      response += chunk.toString()
    })
    const socketClosed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
    socket.write(`POST /v1/auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`)
    await received(socket, () => response, /^HTTP\/1\.1 100 Continue\r\n\r\n$/)
    response = ''
    socket.write(body.slice(0, 10))

    child.kill('SIGTERM')
    // New connections are no longer accepted.
    await refusedSoon(port)

    // write, not end: a half-closed client socket is dropped by Node while the server closes
    socket.write(body.slice(10))
    await socketClosed
    expect(response).toMatch(/^HTTP\/1\.1 401 /)
    expect(response).toContain('INVALID_CREDENTIALS')
    expect(await exited).toBe(0)
  })
})

describe('graceful shutdown under load', { timeout: 90_000 }, () => {
  it('answers every request in flight on keep-alive connections, closes idle ones cleanly, refuses new connections and exits 0', async () => {
    const created = await createShopWithCli(database.url)
    const server = await startServerProcess({ DATABASE_URL: database.url, RATE_LIMIT_ADMIN_PER_MIN: '1000000', WEBHOOK_WORKER: 'off' })
    const tokenRes = await fetch(`${server.url}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: created.apiKey.keyId, api_secret: created.apiKey.secret }),
    })
    const token = ((await tokenRes.json()) as { data: { token: string } }).data.token
    const addRequest = (customerId: string, productId: string, expectContinue = false) => {
      const body = JSON.stringify({ product_id: productId })
      const head = `POST /v1/wishlists/${customerId}/items HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n${expectContinue ? 'Expect: 100-continue\r\n' : ''}Connection: keep-alive\r\n\r\n`
      return { head, body }
    }

    // Keep-alive clients: each has had one add answered on its connection and now has a
    // second add in flight (headers and half the body sent) when SIGTERM arrives.
    const CLIENTS = 24
    const clients = await Promise.all(
      Array.from({ length: CLIENTS }, async (_, i) => {
        const socket = connect(server.port, '127.0.0.1')
        await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
        const state = { socket, data: '', rest: '', error: undefined as Error | undefined, closed: undefined as Promise<void> | undefined }
        socket.on('data', (chunk: Buffer) => {
          state.data += chunk.toString()
        })
        socket.on('error', (err) => {
          state.error = err
        })
        state.closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
        const first = addRequest(String(500 + i), '1')
        socket.write(first.head + first.body)
        await received(socket, () => state.data, /\r\n\r\n[\s\S]*\}$/)
        expect(state.data).toMatch(/^HTTP\/1\.1 201 /)
        expect(state.data.toLowerCase()).toContain('connection: keep-alive')
        state.data = ''
        // The server's `100 Continue` says it has the second request's head: in flight.
        const second = addRequest(String(500 + i), '2', true)
        socket.write(second.head)
        await received(socket, () => state.data, /^HTTP\/1\.1 100 Continue\r\n\r\n$/)
        state.data = ''
        socket.write(second.body.slice(0, 5))
        state.rest = second.body.slice(5)
        return state
      }),
    )
    // One more keep-alive connection, idle when SIGTERM arrives: its request was answered
    // (so the server has surely accepted it) and nothing follows.
    const idle = connect(server.port, '127.0.0.1')
    let idleError: Error | undefined
    let idleData = ''
    idle.on('error', (err) => {
      idleError = err
    })
    idle.on('data', (chunk: Buffer) => {
      idleData += chunk.toString()
    })
    const idleClosed = new Promise<void>((resolve) => idle.on('close', () => resolve()))
    await new Promise<void>((resolve) => idle.once('connect', () => resolve()))
    idle.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n')
    await received(idle, () => idleData, /\r\n\r\n[\s\S]*\}$/)
    expect(idleData).toMatch(/^HTTP\/1\.1 200 /)

    server.child.kill('SIGTERM')
    await refusedSoon(server.port)
    // The idle connection is closed by the server without a reset.
    await idleClosed
    expect(idleError).toBeUndefined()

    for (const c of clients) c.socket.write(c.rest)
    await Promise.all(clients.map((c) => c.closed))
    for (const c of clients) {
      expect(c.error).toBeUndefined()
      expect(c.data).toMatch(/^HTTP\/1\.1 201 /)
      // The answer tells the client not to reuse the connection.
      expect(c.data.toLowerCase()).toContain('connection: close')
    }
    expect(await server.exited).toBe(0)

    // Both adds of every client are stored.
    const storage = openStorage(database.target)
    try {
      const rows = await storage.db.selectFrom('wishlist_items').select((eb) => eb.fn.countAll<number>().as('n')).where('shop_id', '=', created.shop.id).executeTakeFirstOrThrow()
      expect(Number(rows.n)).toBe(2 * CLIENTS)
    } finally {
      await storage.destroy()
    }
  })
})
