import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  path: string
  headers: IncomingHttpHeaders
  body: string
  at: number
}

export type Responder = (req: Received, res: ServerResponse) => void | Promise<void>

/** A real HTTP receiver on 127.0.0.1 and a random port, recording every request. */
export interface Receiver {
  url: string
  port: number
  received: Received[]
  /** Decides the answer per request (default 200 "ok"). */
  respond: Responder
  /** Resolves once `n` requests (matching `filter`) have arrived. */
  waitFor(n: number, filter?: (r: Received) => boolean, timeoutMs?: number): Promise<Received[]>
  /** Resolves once `check()` holds, looked at now and after each arrival. */
  until(check: () => boolean, what: string | (() => string), timeoutMs?: number): Promise<void>
  close(): Promise<void>
  /** Stops listening (connections are refused) until `comeBack()`. */
  goDown(): Promise<void>
  /** Listens again on the same port. */
  comeBack(): Promise<void>
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = []
  const waiters: (() => void)[] = []
  const receiver: Receiver = {
    url: '',
    port: 0,
    received,
    respond: (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
    },
    // Woken by each arrival; the timeout is the only timer (a real one, so a test that fakes
    // Date still gets its failure).
    until(check, what, timeoutMs = 10_000) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          const i = waiters.indexOf(wake)
          if (i >= 0) waiters.splice(i, 1)
          reject(new Error(`receiver: timed out waiting for ${typeof what === 'string' ? what : what()}`))
        }, timeoutMs)
        const wake = () => {
          if (!check()) return void waiters.push(wake)
          clearTimeout(timer)
          resolve()
        }
        wake()
      })
    },
    async waitFor(n, filter = () => true, timeoutMs = 10_000) {
      const hits = () => received.filter(filter)
      await receiver.until(
        () => hits().length >= n,
        () => `${n} requests (got ${hits().length})`,
        timeoutMs,
      )
      return hits()
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
    goDown: () => receiver.close(),
    comeBack: () => new Promise<void>((resolve) => server.listen(receiver.port, '127.0.0.1', resolve)),
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const r: Received = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }
      received.push(r)
      for (const w of waiters.splice(0)) w()
      void Promise.resolve(receiver.respond(r, res)).catch(() => res.destroy())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.port = (server.address() as AddressInfo).port
  receiver.url = `http://127.0.0.1:${receiver.port}`
  return receiver
}
