/**
 * A TCP proxy that holds every chunk `DELAY_MS` in each direction before passing it on: a
 * network hop of that one-way latency between the service and PostgreSQL (these machines'
 * kernels have no `netem`). Loopback only. Chunks keep their order: each direction is a FIFO
 * released in order, and a chunk leaves no sooner than `DELAY_MS` after it arrived
 * (see pipeDelayed on how it waits). With DELAY_MS=0 the proxy passes chunks on at once, so
 * the comparison run has the same extra hop and differs only by the delay.
 *
 * Run as a child process: `node --import tsx bench/http/delay-proxy.ts` with UPSTREAM_PORT,
 * UPSTREAM_HOST (127.0.0.1) and DELAY_MS in the environment; it reports `{ port }` over IPC.
 */
import { createConnection, createServer, type Socket } from 'node:net'
import { performance } from 'node:perf_hooks'

const delayMs = Number(process.env.DELAY_MS ?? '1')
const upstreamPort = Number(process.env.UPSTREAM_PORT)
const upstreamHost = process.env.UPSTREAM_HOST ?? '127.0.0.1'
if (!Number.isFinite(delayMs) || delayMs < 0 || !Number.isInteger(upstreamPort)) throw new Error('DELAY_MS and UPSTREAM_PORT are required')

/**
 * Writes what `from` sends to `to`, each chunk `delayMs` later than it arrived. The wait is
 * a spin of `setImmediate` turns (each polls the sockets without blocking), not a timer:
 * libuv's timers count whole milliseconds from a loop clock read before the chunk arrived, so
 * a 1 ms timer fires anywhere from 0 to 2 ms later, and a round trip of two holds would
 * carry up to 2 ms of the proxy's own error. Spinning costs a CPU only while a chunk is held,
 * when a single client's request has nothing else to run.
 */
function pipeDelayed(from: Socket, to: Socket): void {
  if (delayMs === 0) {
    from.pipe(to)
    return
  }
  const queue: { due: number; chunk: Buffer }[] = []
  let spinning = false
  let ended = false
  const release = () => {
    const t = performance.now()
    while (queue.length > 0 && (queue[0]?.due ?? Infinity) <= t) to.write((queue.shift() as { chunk: Buffer }).chunk)
    spinning = queue.length > 0
    if (spinning) setImmediate(release)
    else if (ended) to.end()
  }
  from.on('data', (chunk: Buffer) => {
    queue.push({ due: performance.now() + delayMs, chunk })
    if (!spinning) {
      spinning = true
      setImmediate(release)
    }
  })
  from.on('end', () => {
    ended = true
    if (!spinning) to.end()
  })
}

const server = createServer({ noDelay: true }, (client) => {
  const upstream = createConnection({ host: upstreamHost, port: upstreamPort, noDelay: true })
  const close = () => {
    client.destroy()
    upstream.destroy()
  }
  client.on('error', close)
  upstream.on('error', close)
  client.on('close', close)
  upstream.on('close', close)
  pipeDelayed(client, upstream)
  pipeDelayed(upstream, client)
})

server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  process.send?.({ port: typeof address === 'object' && address ? address.port : 0 })
})
process.on('disconnect', () => process.exit(0))
process.on('SIGTERM', () => process.exit(0))
