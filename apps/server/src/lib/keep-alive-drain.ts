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

export function drainKeepAliveGracefully(server: Server): void {
  const open = new Set<HttpSocket>()
  server.on('connection', (socket: HttpSocket) => {
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
}
