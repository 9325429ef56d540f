/** The part of autocannon 9's programmatic API the bench uses (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  export interface RequestContext {
    [key: string]: unknown
  }
  export interface RequestSpec {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string
    setupRequest?: (req: RequestSpec, context: RequestContext) => RequestSpec
  }
  export interface Options {
    url: string
    connections?: number
    duration?: number
    /** Requests to send in all, instead of a duration. */
    amount?: number
    pipelining?: number
    timeout?: number
    method?: string
    headers?: Record<string, string>
    body?: string
    requests?: RequestSpec[]
  }
  export interface Histogram {
    average: number
    mean: number
    total: number
    p50: number
    p99: number
  }
  export interface Result {
    requests: Histogram
    latency: Histogram
    duration: number
    errors: number
    timeouts: number
    non2xx: number
    '2xx': number
  }
  export interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void
  }
  export default function autocannon(opts: Options): Instance
}
