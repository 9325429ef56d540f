/**
 * Graceful close of keep-alive connections for `server.close()`.
 *
 * `http.Server.close()` first calls `closeIdleConnections()`. On Node 20 (and still on 24.21:
 * the shutdown test fails without this) a reused keep-alive
 * connection whose next request is still arriving was lost there: the connection counts
 * as idle, and once its answer is written the keep-alive timer destroys the socket before
 * the answer is flushed, so the client got no response (seen in the shutdown test). This
 * replaces the method on one server: a connection is idle only when no answer on it is
 * unfinished, and busy ones answer with `Connection: close` and end after the answer.
 *
 * Which answer a connection is writing is Node's `socket._httpMessage` (set when a request
 * arrives, cleared when its answer has been handed to the socket, the next pipelined answer
 * taking its place), so nothing runs per request until the server closes: a `request`
 * listener and a set of answers per connection cost every request about 1 µs of CPU (bench
 * profile of the GET page).
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
