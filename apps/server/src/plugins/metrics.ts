import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client'

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Registry
  }
}

/** Request counts and latency by route pattern and status, plus process metrics. */
export const metricsPlugin = fp(
  async (app: FastifyInstance) => {
    const registry = new Registry()
    collectDefaultMetrics({ register: registry })
    const requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by method, route pattern and status',
      labelNames: ['method', 'route', 'status_code'] as const,
      registers: [registry],
    })
    const latency = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by method, route pattern and status',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    })
    app.decorate('metrics', registry)
    // One pair of labelled children per (method, route, status), found by a string key:
    // prom-client hashes a labels object on every call otherwise.
    const children = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>()
    app.addHook('onResponse', (request, reply, done) => {
      // The route pattern, never the raw URL: ids in paths would explode the label space.
      const route = request.routeOptions.url ?? 'unmatched'
      const key = `${request.method} ${reply.statusCode} ${route}`
      let child = children.get(key)
      if (child === undefined) {
        const labels = { method: request.method, route, status_code: String(reply.statusCode) }
        child = { count: requests.labels(labels), time: latency.labels(labels) }
        children.set(key, child)
      }
      child.count.inc()
      child.time.observe(reply.elapsedTime / 1000)
      done()
    })
  },
  { name: 'metrics' },
)
