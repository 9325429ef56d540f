/**
 * At most MAX_CONNECTIONS_PER_CLIENT open connections per client address, counted at the
 * socket: a connection beyond it is destroyed as it arrives (before a byte of it is read) and
 * counted in `wishlist_connections_refused_total`. Addresses are keyed as the rate limits key
 * them (lib/client-address.ts): an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, how a
 * dual-stack listener sees IPv4 clients) as its IPv4 address, any other IPv6 address by its /64.
 *
 * The address is the socket's own, whatever TRUST_PROXY says: a connection carries no
 * `X-Forwarded-For` before its first request, and behind a reverse proxy every connection is
 * the proxy's. Such a deployment limits clients at the proxy, and raises this to the
 * connections the proxy may open.
 *
 * Counted on the server Fastify listens with. A HOST that names several addresses
 * (`localhost`) makes Fastify listen on the others through servers of their own, whose
 * connections are not counted: loopback clients only.
 */
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Counter } from 'prom-client'
import { clientAddressKey } from '../lib/client-address.js'

export const connectionLimitPlugin = fp(
  async (app: FastifyInstance, opts: { maxPerClient: number }) => {
    const refused = new Counter({
      name: 'wishlist_connections_refused_total',
      help: 'Connections closed as they arrived because their client address already had MAX_CONNECTIONS_PER_CLIENT open',
      registers: [app.metrics],
    })
    /** Open connections by client address; an address leaves when its last connection closes. */
    const open = new Map<string, number>()
    // After Node's own listener (the HTTP parser is set up): destroying the socket here also
    // releases what Node allocated for it.
    app.server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress
      // Already closed (the address is read from the file descriptor): nothing to count.
      if (address === undefined) return
      const key = clientAddressKey(address)
      const count = open.get(key) ?? 0
      if (count >= opts.maxPerClient) {
        socket.destroy()
        refused.inc()
        return
      }
      open.set(key, count + 1)
      socket.once('close', () => {
        const left = (open.get(key) ?? 1) - 1
        if (left === 0) open.delete(key)
        else open.set(key, left)
      })
    })
  },
  { name: 'connection-limit', dependencies: ['metrics'] },
)
