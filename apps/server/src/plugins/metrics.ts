import type { FastifyInstance, FastifyReply, onResponseHookHandler } from 'fastify'
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
    const labelNames = ['method', 'route', 'status_code'] as const
    const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests by method, route pattern and status', labelNames, registers: [registry] })
    const duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by method, route pattern and status',
      labelNames,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    })
    app.decorate('metrics', registry)

    const record = (method: string, route: string, reply: FastifyReply) => {
      const labels = { method, route, status_code: reply.statusCode }
      requests.inc(labels)
      duration.observe(labels, reply.elapsedTime / 1000)
    }
    // The route pattern, never the raw URL: ids in paths would explode the label space. Each
    // route's own hook knows its pattern (Fastify's request.routeOptions builds a dozen-field
    // object on every read); requests no route matched are counted by the one global hook.
    app.addHook('onRoute', (route) => {
      const pattern = route.url
      const hook: onResponseHookHandler = (request, reply, done) => {
        record(request.method, pattern, reply)
        done()
      }
      route.onResponse = route.onResponse === undefined ? [hook] : [...[route.onResponse].flat(), hook]
    })
    app.addHook('onResponse', (request, reply, done) => {
      if (request.is404) record(request.method, 'unmatched', reply)
      done()
    })
  },
  { name: 'metrics' },
)
