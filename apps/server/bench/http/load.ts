/**
 * One bounded autocannon run against a loopback URL. Latencies are recorded exactly (float
 * milliseconds per 2xx response from autocannon's `response` event), because autocannon's
 * own histogram truncates to whole milliseconds and our p50 is often below one.
 */
import autocannon, { type RequestSpec } from 'autocannon'

export interface LoadSpec {
  url: string
  connections: number
  durationSec: number
  method?: string
  headers?: Record<string, string>
  body?: string
  requests?: RequestSpec[]
}

export interface LoadFigures {
  rps: number
  p50_ms: number
  p99_ms: number
  requests: number
  non2xx: number
  errors: number
  /** Answers outside 2xx by status code. */
  statuses: Record<number, number>
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[i] as number
}

export async function load(spec: LoadSpec): Promise<LoadFigures> {
  let samples = new Float64Array(1 << 16)
  let n = 0
  const statuses: Record<number, number> = {}
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.durationSec,
    pipelining: 1,
    timeout: 10,
    ...(spec.method ? { method: spec.method } : {}),
    ...(spec.headers ? { headers: spec.headers } : {}),
    ...(spec.body !== undefined ? { body: spec.body } : {}),
    ...(spec.requests ? { requests: spec.requests } : {}),
  })
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status < 200 || status > 299) {
      statuses[status] = (statuses[status] ?? 0) + 1
      return
    }
    if (n === samples.length) {
      const grown = new Float64Array(samples.length * 2)
      grown.set(samples)
      samples = grown
    }
    samples[n++] = ms
  })
  const result = await instance
  const sorted = samples.subarray(0, n).sort()
  const ok = result['2xx']
  return {
    rps: ok / result.duration,
    p50_ms: percentile(sorted, 50),
    p99_ms: percentile(sorted, 99),
    requests: ok,
    non2xx: result.non2xx,
    errors: result.errors,
    statuses,
  }
}

/** A short unmeasured run first: JIT, caches and connection pools warm up. */
export async function warmThenLoad(spec: LoadSpec, warmupSec: number): Promise<LoadFigures> {
  if (warmupSec > 0) await load({ ...spec, durationSec: warmupSec })
  return load(spec)
}
