/**
 * One bounded autocannon run against a loopback URL. Latencies are recorded exactly (float
 * milliseconds per 2xx response from autocannon's `response` event), because autocannon's
 * own histogram truncates to whole milliseconds and our p50 is often below one.
 */
import { readdirSync, readFileSync } from 'node:fs'
import autocannon, { type RequestSpec } from 'autocannon'

export interface LoadSpec {
  url: string
  connections: number
  durationSec: number
  /** A fixed number of requests instead of a duration (the instruction counts of `--floor-concerns --instructions`). */
  amount?: number
  method?: string
  headers?: Record<string, string>
  body?: string
  requests?: RequestSpec[]
  /** The server's process: its CPU time over the run is reported per answer. */
  serverPid?: number
  /** CPU time (µs by process id) of processes the server's answers may wait on (`postgresCpuUs`): how busy they were over the run. */
  sideCpuUs?: () => Map<number, number>
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
  /**
   * Server CPU time (user + system) per answer over the run and until the server was idle
   * again, in µs: what the server pays per request whether or not the client or the
   * machine's drift limits the req/s, the work it defers past its answers included.
   */
  cpu_us: number
  /** CPU µs per answer the server spent after the last answer, draining deferred work. */
  deferred_cpu_us: number
  /** With `sideCpuUs`: those processes' CPU over the run, in cores (1 = one CPU busy all along). */
  side_cores?: number
}

const CLOCK_TICK_US = 10_000 // Linux USER_HZ = 100

/** utime + stime of a process, in µs (NaN where /proc is not there). */
export function cpuTimeUs(pid: number): number {
  try {
    // Fields after the command name (which may hold spaces and parentheses): utime is the 12th, stime the 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_US
  } catch {
    return Number.NaN
  }
}

/**
 * utime + stime of every PostgreSQL server process on this machine (backends, autovacuum,
 * checkpointer, WAL writer…), in µs by process id.
 */
export function postgresCpuUs(): Map<number, number> {
  const byPid = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8') !== 'postgres\n') continue
    } catch {
      continue
    }
    const us = cpuTimeUs(Number(entry))
    if (Number.isFinite(us)) byPid.set(Number(entry), us)
  }
  return byPid
}

/**
 * The CPU time processes spent between two readings: those in both by difference, those
 * started in between in full. One that exited in between takes its time with it, so this is
 * a lower bound.
 */
function cpuSpentUs(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0
  for (const [pid, us] of after) total += us - (before.get(pid) ?? 0)
  return total
}

/** A window of the server's CPU time under which it counts as idle: 10 ms (one clock tick) in 250 ms. */
const IDLE_WINDOW_MS = 250
const IDLE_CPU_US = 10_000
/** The longest a run waits for its deferred work to drain. */
const MAX_DRAIN_MS = 15_000

/**
 * The server's CPU time once it is idle again: work deferred past the answers (analytics
 * facts applied in batches, the outbox, the webhook worker) is charged to the run that
 * caused it rather than to whichever runs next in the same process. Idle: at most one clock
 * tick of CPU in a quarter of a second (the service's timers cost less than that).
 */
async function cpuWhenIdle(pid: number): Promise<number> {
  const started = Date.now()
  let last = cpuTimeUs(pid)
  for (;;) {
    await new Promise((r) => setTimeout(r, IDLE_WINDOW_MS))
    const now = cpuTimeUs(pid)
    if (now - last <= IDLE_CPU_US || Date.now() - started > MAX_DRAIN_MS) return now
    last = now
  }
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
  const cpuBefore = spec.serverPid === undefined ? Number.NaN : cpuTimeUs(spec.serverPid)
  const sideBefore = spec.sideCpuUs?.()
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections,
    ...(spec.amount === undefined ? { duration: spec.durationSec } : { amount: spec.amount }),
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
  const sideAfter = spec.sideCpuUs?.()
  const sideUs = sideBefore === undefined || sideAfter === undefined ? undefined : cpuSpentUs(sideBefore, sideAfter)
  const cpuAtLastAnswer = spec.serverPid === undefined ? Number.NaN : cpuTimeUs(spec.serverPid)
  const cpuIdle = spec.serverPid === undefined ? Number.NaN : await cpuWhenIdle(spec.serverPid)
  const cpuUs = cpuIdle - cpuBefore
  const answers = result['2xx'] + result.non2xx
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
    cpu_us: cpuUs / answers,
    deferred_cpu_us: (cpuIdle - cpuAtLastAnswer) / answers,
    ...(sideUs === undefined ? {} : { side_cores: sideUs / (result.duration * 1e6) }),
  }
}

/** Relative difference under which two consecutive warm-up slices count as steady. */
const STEADY = 0.05

/**
 * An unmeasured run first, so JIT tiers, caches, the heap's size and connection pools
 * reach their steady state: `warmupSec`, then (when the server's pid is known) 1 s slices
 * until two consecutive slices cost the server the same CPU per answer within 5%, for at
 * most `maxWarmupSec` in all. A fresh service process needs 3–6 s of load before its
 * CPU per request settles (the optimizing compiler shares the pinned CPU), which a fixed
 * 2 s warm-up charged to whichever scenario ran first. Returns the measured run and the
 * warm-up it took.
 */
export async function warmThenLoad(spec: LoadSpec, warmupSec: number, maxWarmupSec = 12): Promise<LoadFigures & { warmup_s: number }> {
  let warmed = 0
  if (warmupSec > 0) {
    let last = (await load({ ...spec, durationSec: warmupSec })).cpu_us
    warmed = warmupSec
    while (spec.serverPid !== undefined && warmed < maxWarmupSec) {
      const slice = (await load({ ...spec, durationSec: 1 })).cpu_us
      warmed += 1
      if (Math.abs(slice - last) <= STEADY * last) break
      last = slice
    }
  }
  return { ...(await load(spec)), warmup_s: warmed }
}
