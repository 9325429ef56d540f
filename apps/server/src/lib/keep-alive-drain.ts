/**
 * Graceful close of keep-alive connections for `server.close()` on Node 20.
 *
 * `http.Server.close()` first calls `closeIdleConnections()`. On Node 20 a reused keep-alive
 * connection whose next request is still arriving was lost there: the connection counts
 * as idle, and once its answer is written the keep-alive timer destroys the socket before
 * the answer is flushed, so the client got no response (seen in the shutdown test). This
 * replaces the method on one server: a connection is idle only when no request on it is
 * unanswered, and busy ones answer with `Connection: close` and end after the answer.
 */
import type { Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

export function drainKeepAliveGracefully(server: Server): void {
  const open = new Map<Socket, Set<ServerResponse>>()
  let draining = false
  server.on('connection', (socket: Socket) => {
    open.set(socket, new Set())
    socket.once('close', () => open.delete(socket))
  })
  // Answered responses are dropped from a connection's set when its next request arrives
  // or when the server closes, rather than by a 'close' listener on every response (adding
  // and removing it was measurable per request).
  const settle = (pending: Set<ServerResponse>) => {
    for (const res of pending) if (res.writableFinished || res.destroyed) pending.delete(res)
  }
  server.on('request', (req, res: ServerResponse) => {
    const pending = open.get(req.socket)
    if (pending === undefined) return
    if (pending.size > 0) settle(pending)
    pending.add(res)
    if (draining) res.shouldKeepAlive = false
  })
  server.closeIdleConnections = () => {
    draining = true
    for (const [socket, pending] of open) {
      settle(pending)
      if (pending.size === 0) socket.destroy()
      else for (const res of pending) if (!res.headersSent) res.shouldKeepAlive = false
    }
  }
}
