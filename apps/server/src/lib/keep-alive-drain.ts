/**
 * Graceful close of keep-alive connections for `server.close()`. Node's
 * `closeIdleConnections()` (still on 24.21: the shutdown test fails without this) counts a
 * reused connection whose next request is still arriving as idle, and its answer is lost.
 * Here a connection is idle only when no answer on it is unfinished; busy ones answer with
 * `Connection: close`. The answer being written is Node's `socket._httpMessage`, so nothing
 * runs per request until close (a per-request listener cost ~1 µs of CPU per request).
 */
import type { Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

type HttpSocket = Socket & { _httpMessage?: ServerResponse | null }

/** Makes the answer being written on `socket` its last; an idle connection is closed now. */
function closeAfterAnswer(socket: HttpSocket): void {
  const res = socket._httpMessage
  if (res === null || res === undefined) {
    socket.destroy()
    return
  }
  if (!res.headersSent) {
    res.shouldKeepAlive = false
    return
  }
  // Its headers already promise keep-alive: look again once it is written (a pipelined
  // request's answer may be next).
  res.once('finish', () => {
    if (!socket.destroyed) closeAfterAnswer(socket)
  })
}

/** Resolves after the event loop's I/O poll has run once more (a poll sits between two check phases). */
const afterNextIoPoll = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)))

/** Node's default listen backlog (Fastify's too): at most this many connections wait to be accepted. */
const LISTEN_BACKLOG = 511

export interface KeepAliveDrain {
  /**
   * Takes in what has reached the server, before it stops listening. A connection the kernel
   * has completed but the server not yet accepted (it waits in the listener's queue while
   * requests are handled) is reset when the listener closes, and an accepted one whose request
   * has not been read yet looks idle and is closed: of 50 GETs sent 30 ms before SIGTERM, up
   * to all 50 were reset so. Node accepts one queued connection per pass of the event loop
   * (measured on Node 20.20, 22.23 and 24.21) and reads a connection's request in the pass
   * after its accept, so this lets the loop pass until a pass accepts nothing (at most the
   * backlog's 511): each request that had arrived then has its answer under way.
   */
  takeInArrived(): Promise<void>
}

export function drainKeepAliveGracefully(server: Server): KeepAliveDrain {
  const open = new Set<HttpSocket>()
  let accepted = 0
  server.on('connection', (socket: HttpSocket) => {
    accepted++
    open.add(socket)
    socket.once('close', () => open.delete(socket))
  })
  let draining = false
  server.closeIdleConnections = () => {
    if (!draining) {
      draining = true
      // Requests that arrive on open connections from now on are their connection's last.
      server.on('request', (_req, res: ServerResponse) => {
        res.shouldKeepAlive = false
      })
    }
    for (const socket of open) closeAfterAnswer(socket)
  }
  return {
    async takeInArrived() {
      for (let pass = 0; pass < LISTEN_BACKLOG; pass++) {
        const before = accepted
        await afterNextIoPoll()
        if (accepted === before) return
      }
    },
  }
}
