/**
 * The API reference (/docs) under readers that never read, and its prepared answers: the 4.9 MB
 * script is one Buffer per coding (identity, gzip, brotli) chosen by Accept-Encoding, with an
 * ETag and 304; it is streamed with backpressure, a reader that takes nothing for
 * REQUEST_TIMEOUT_MS is disconnected, and /docs counts in a rate bucket of its own.
 * Real listening servers and raw sockets; the memory test measures a `wishlist serve` process.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { connect, type Socket } from 'node:net'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { freshDatabase, type TestDatabase } from '../helpers/db.js'
import { portOf } from '../helpers/raw-http.js'
import { startServerProcess } from '../helpers/server-process.js'

const SCRIPT = '/docs/js/scalar.js'
const SEND_TIMEOUT_MS = 1_000

interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
}

/** One request on a connection of its own (`localAddress`: the client's address), the body as bytes, nothing decoded. */
function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
  localAddress = '127.0.0.1',
  method = 'GET',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, headers, agent: false, localAddress }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

/** Checks every coding of the script against the identity bytes; resolves with them. */
async function checkCodings(port: number): Promise<Buffer> {
  const identity = await get(port, SCRIPT)
  expect(identity.status).toBe(200)
  expect(identity.headers['content-encoding']).toBeUndefined()
  expect(identity.body.length).toBeGreaterThan(4_000_000)
  expect(identity.body.toString('utf8', 0, 200)).toContain('function')
  const gzip = await get(port, SCRIPT, { 'accept-encoding': 'gzip, deflate' })
  expect([gzip.status, gzip.headers['content-encoding']]).toEqual([200, 'gzip'])
  expect(Number(gzip.headers['content-length'])).toBe(gzip.body.length)
  expect(gzip.body.length).toBeLessThan(identity.body.length / 3)
  expect(gunzipSync(gzip.body).equals(identity.body)).toBe(true)
  const br = await get(port, SCRIPT, { 'accept-encoding': 'gzip, deflate, br' })
  expect([br.status, br.headers['content-encoding']]).toEqual([200, 'br'])
  expect(brotliDecompressSync(br.body).equals(identity.body)).toBe(true)
  for (const answer of [identity, gzip, br]) expect(answer.headers.vary).toContain('Accept-Encoding')
  return identity.body
}

let t: TestApp
let port: number
beforeAll(async () => {
  t = await createTestApp({ env: { REQUEST_TIMEOUT_MS: String(SEND_TIMEOUT_MS) } })
  port = portOf(await t.app.listen({ port: 0, host: '127.0.0.1' }))
})
afterAll(() => t.close())

describe('the prepared answers of /docs', () => {
  it('serves the script as identity, gzip or brotli by Accept-Encoding, the same bytes once decoded', async () => {
    await checkCodings(port)
    // A coding refused (q=0) is not chosen; nothing acceptable falls back to the bytes as they are.
    expect((await get(port, SCRIPT, { 'accept-encoding': 'br;q=0, gzip' })).headers['content-encoding']).toBe('gzip')
    expect((await get(port, SCRIPT, { 'accept-encoding': 'gzip;q=1, br;q=0.5' })).headers['content-encoding']).toBe('gzip')
    expect((await get(port, SCRIPT, { 'accept-encoding': 'compress' })).headers['content-encoding']).toBeUndefined()
    const head = await get(port, SCRIPT, { 'accept-encoding': 'br' }, '127.0.0.1', 'HEAD')
    expect([head.status, head.body.length, head.headers['content-encoding']]).toEqual([200, 0, 'br'])
    expect(Number(head.headers['content-length'])).toBeGreaterThan(500_000)
  })

  it('answers 304 Not Modified to the ETag of the coding it would send', async () => {
    for (const encoding of ['identity', 'gzip', 'br']) {
      const first = await get(port, SCRIPT, { 'accept-encoding': encoding })
      const etag = first.headers.etag as string
      expect(etag).toMatch(/^"[\w-]+"$/)
      expect(first.headers['cache-control']).toBe('no-cache')
      const again = await get(port, SCRIPT, { 'accept-encoding': encoding, 'if-none-match': etag })
      expect([again.status, again.body.length, again.headers.etag]).toEqual([304, 0, etag])
      // Weak comparison, a list, or `*`.
      expect((await get(port, SCRIPT, { 'accept-encoding': encoding, 'if-none-match': `"other", W/${etag}` })).status).toBe(304)
      expect((await get(port, SCRIPT, { 'accept-encoding': encoding, 'if-none-match': '*' })).status).toBe(304)
      expect((await get(port, SCRIPT, { 'accept-encoding': encoding, 'if-none-match': '"other"' })).status).toBe(200)
    }
    // Each coding has its own tag: a gzip tag does not validate the brotli answer.
    const gzipTag = (await get(port, SCRIPT, { 'accept-encoding': 'gzip' })).headers.etag as string
    expect((await get(port, SCRIPT, { 'accept-encoding': 'br', 'if-none-match': gzipTag })).status).toBe(200)
    // The page and the document are prepared the same way.
    const page = await get(port, '/docs/', { 'accept-encoding': 'gzip' })
    expect(page.status).toBe(200)
    expect(gunzipSync(page.body).toString()).toContain('<html lang="en">')
    expect((await get(port, '/docs/', { 'accept-encoding': 'gzip', 'if-none-match': page.headers.etag as string })).status).toBe(304)
    const document = await get(port, '/docs/openapi.json', { 'accept-encoding': 'br' })
    expect(JSON.parse(brotliDecompressSync(document.body).toString())).toMatchObject({ openapi: '3.1.0' })
  })

  it(`disconnects a reader that takes nothing for REQUEST_TIMEOUT_MS (${SEND_TIMEOUT_MS} ms)`, async () => {
    // Three answers of 4.9 MB asked at once (pipelined): more than the kernel's buffers of a
    // connection hold, so the server is left with bytes the client does not take.
    const serverSide = new Promise<Socket>((resolve) => t.app.server.once('connection', resolve))
    const client = connect({ port, host: '127.0.0.1' })
    client.on('error', () => {})
    const request = `GET ${SCRIPT} HTTP/1.1\r\nHost: x\r\n\r\n`
    client.write(request.repeat(3))
    let received = 0
    const firstChunk = new Promise<void>((resolve) =>
      client.once('data', (chunk: Buffer) => {
        received += chunk.length
        client.pause()
        resolve()
      }),
    )
    const socket = await serverSide
    const serverClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    await firstChunk
    const stalled = Date.now()
    await serverClosed
    const waited = Date.now() - stalled
    expect(waited).toBeGreaterThanOrEqual(SEND_TIMEOUT_MS - 100)
    expect(waited).toBeLessThan(SEND_TIMEOUT_MS + 3_000)
    // What the kernel held still arrives, then the end: far less than was asked for.
    client.on('data', (chunk: Buffer) => {
      received += chunk.length
    })
    const clientClosed = new Promise<void>((resolve) => client.once('close', () => resolve()))
    client.resume()
    await clientClosed
    expect(received).toBeLessThan(3 * 4_900_000)
    // The server goes on serving.
    expect((await get(port, '/docs/')).status).toBe(200)
  })

  it('counts every /docs route in a bucket of 60 a minute per client address, apart from the storefront budget', async () => {
    const remoteAddress = '203.0.113.61'
    const paths = ['/docs', '/docs/', SCRIPT, '/docs/openapi.json', '/docs/openapi.yaml']
    for (let i = 0; i < 60; i++) {
      const res = await t.inject({ method: 'GET', url: paths[i % paths.length] as string, remoteAddress })
      expect([res.statusCode, res.headers['x-ratelimit-limit'], res.headers['x-ratelimit-remaining']]).toEqual([
        i % paths.length === 0 ? 301 : 200,
        '60',
        String(59 - i),
      ])
    }
    const refused = await t.inject({ method: 'GET', url: SCRIPT, remoteAddress })
    expect(refused.statusCode).toBe(429)
    expect(refused.json()).toMatchObject({ ok: false, error: { code: 'RATE_LIMITED' } })
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    // Another address has its own bucket; the same address's storefront budget is untouched.
    expect((await t.inject({ method: 'GET', url: SCRIPT, remoteAddress: '203.0.113.62' })).statusCode).toBe(200)
    const storefront = await t.inject({
      method: 'POST',
      url: '/v1/auth/token',
      remoteAddress,
      payload: { api_key: 'ak_none', api_secret: 'none' },
    })
    expect(storefront.headers['x-ratelimit-remaining']).toBe(String(Number(storefront.headers['x-ratelimit-limit']) - 1))
  })
})

describe('150 readers that never read', { timeout: 180_000 }, () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await freshDatabase()
  })
  afterAll(() => database.drop())

  it("grow the server's RSS by less than 50 MB, and a normal client still gets the right bytes", async () => {
    const server = await startServerProcess({ DATABASE_URL: database.url, WEBHOOK_WORKER: 'off' })
    const pid = server.child.pid as number
    const statusKb = (field: 'VmRSS' | 'VmHWM') =>
      Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
    const stalled: Socket[] = []
    try {
      // A first reader prepares the reference (loaded on demand); then the peak RSS is reset.
      await checkCodings(server.port)
      writeFileSync(`/proc/${pid}/clear_refs`, '5')
      const before = statusKb('VmRSS')
      // 150 clients, each from an address of its own in 127.0.0.0/8 (so that neither the
      // per-address rate bucket nor the connection cap turns any of them away), ask for the
      // script with gzip, read the first chunk of the answer and then nothing.
      const heads = await Promise.all(
        Array.from(
          { length: 150 },
          (_, i) =>
            new Promise<string>((resolve, reject) => {
              const socket = connect({ port: server.port, host: '127.0.0.1', localAddress: `127.0.1.${i + 2}` })
              stalled.push(socket)
              socket.once('error', reject)
              socket.once('data', (chunk: Buffer) => {
                socket.pause()
                resolve(chunk.toString('latin1', 0, 1024))
              })
              socket.write(`GET ${SCRIPT} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n`)
            }),
        ),
      )
      for (const head of heads) expect(head).toMatch(/^HTTP\/1\.1 200 [\s\S]*content-encoding: gzip\r\n/i)
      // Served meanwhile, byte for byte.
      await checkCodings(server.port)
      const grownMb = (statusKb('VmHWM') - before) / 1024
      expect(grownMb).toBeLessThan(50)
    } finally {
      for (const socket of stalled) socket.destroy()
      server.child.kill('SIGTERM')
      await server.exited
    }
  })
})
