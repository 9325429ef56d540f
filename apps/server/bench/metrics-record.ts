/**
 * What recording one request in the metrics costs: prom-client's labelled Counter `inc` and
 * Histogram `observe` (a label hash string built, looked up and the labels validated, twice;
 * a closure and a pair object allocated by `observe`) against the metrics plugin's
 * RequestSeries (a route's recorder: two Map lookups, three additions). Same label values,
 * same buckets, alternating in one process, five rounds of two million requests each
 * (docs/performance.md, "The metrics concern").
 *
 *   npx tsx bench/metrics-record.ts
 */
import { Counter, Histogram, Registry } from 'prom-client'
import { BUCKETS, RequestSeries } from '../src/plugins/metrics.js'

const ROUTE = '/v1/wishlists/:customerId'
const N = 2_000_000
const methods = ['GET', 'GET', 'POST']
const status = (i: number) => (i % 50 === 0 ? 404 : 200)
const seconds = (i: number) => (i % 7) / 1000

const registry = new Registry()
const labelNames = ['method', 'route', 'status_code'] as const
const requests = new Counter({ name: 'http_requests_total', help: 'requests', labelNames, registers: [registry] })
const duration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'latency',
  labelNames,
  buckets: [...BUCKETS],
  registers: [registry],
})
const promClient = (method: string, statusCode: number, s: number) => {
  const labels = { method, route: ROUTE, status_code: statusCode }
  requests.inc(labels)
  duration.observe(labels, s)
}
const series = new RequestSeries().recorder(ROUTE)

const time = (record: (method: string, statusCode: number, s: number) => void) => {
  const started = process.hrtime.bigint()
  for (let i = 0; i < N; i++) record(methods[i % 3] as string, status(i), seconds(i))
  return Number(process.hrtime.bigint() - started) / N
}
const ratios: number[] = []
for (let round = 1; round <= 5; round++) {
  const a = time(promClient)
  const b = time(series)
  ratios.push(a / b)
  console.log(`round ${round}: prom-client ${a.toFixed(0)} ns, RequestSeries ${b.toFixed(0)} ns per request (${(a / b).toFixed(0)}×)`)
}
ratios.sort((x, y) => x - y)
console.log(`median: RequestSeries ${ratios[2]?.toFixed(0)}× fewer ns per request than prom-client`)
