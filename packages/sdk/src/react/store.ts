/**
 * A keyed cache of server resources with optimistic updates. Each entry holds the last
 * confirmed server value plus the optimistic operations still in flight; what components
 * see is the server value with those operations applied. A failed call drops only its own
 * operation (rollback without undoing concurrent ones) and records the error. Loads are
 * de-duplicated per key, so many components on one list cause one request.
 */
import { WishlistApiError } from '../errors.js'

export type Status = 'idle' | 'loading' | 'ready' | 'error'

export interface Snapshot<T> {
  data: T | undefined
  status: Status
  /** The last failure of a load or mutation on this entry, cleared by the next success. */
  error: WishlistApiError | undefined
  /** Optimistic operations still waiting for the server. */
  pending: number
}

/** The outcome of a mutation; mutations never reject, the error is also on the snapshot. */
export type MutationResult<R> = { ok: true; data: R } | { ok: false; error: WishlistApiError }

interface Op<T> {
  id: number
  apply: (value: T) => T
}

interface Entry<T> {
  server: T | undefined
  ops: Op<T>[]
  status: Status
  error: WishlistApiError | undefined
  inflight: Promise<void> | undefined
  listeners: Set<() => void>
  snap: Snapshot<T>
}

export function toApiError(err: unknown): WishlistApiError {
  if (err instanceof WishlistApiError) return err
  return new WishlistApiError({ code: 'NETWORK_ERROR', message: err instanceof Error ? err.message : String(err), status: 0, cause: err })
}

const EMPTY: Snapshot<never> = Object.freeze({ data: undefined, status: 'idle', error: undefined, pending: 0 })

export class ResourceStore {
  private readonly entries = new Map<string, Entry<unknown>>()
  private nextOp = 1
  /** Loads wait for this (the guest-to-customer merge on login). */
  private gate: Promise<unknown> = Promise.resolve()

  constructor(private readonly onError?: (error: WishlistApiError) => void) {}

  /** Holds every load until `until` settles. */
  hold(until: Promise<unknown>): void {
    const previous = this.gate
    this.gate = Promise.allSettled([previous, until])
  }

  private entry<T>(key: string): Entry<T> {
    let e = this.entries.get(key) as Entry<T> | undefined
    if (!e) {
      e = { server: undefined, ops: [], status: 'idle', error: undefined, inflight: undefined, listeners: new Set(), snap: EMPTY }
      this.entries.set(key, e as Entry<unknown>)
    }
    return e
  }

  private publish<T>(e: Entry<T>): void {
    const data = e.server === undefined ? undefined : e.ops.reduce<T>((value, op) => op.apply(value), e.server)
    e.snap = { data, status: e.status, error: e.error, pending: e.ops.length }
    for (const listener of [...e.listeners]) listener()
  }

  subscribe(key: string, listener: () => void): () => void {
    const e = this.entry(key)
    e.listeners.add(listener)
    return () => e.listeners.delete(listener)
  }

  snapshot<T>(key: string): Snapshot<T> {
    return (this.entries.get(key)?.snap ?? EMPTY) as Snapshot<T>
  }

  /** Loads `key` unless loaded or loading (`force` reloads); concurrent callers share one request. */
  load<T>(key: string, fetcher: () => Promise<T>, force = false): Promise<void> {
    const e = this.entry<T>(key)
    if (e.inflight) return e.inflight
    if (!force && e.status === 'ready') return Promise.resolve()
    if (e.status !== 'ready') e.status = 'loading'
    this.publish(e)
    e.inflight = (async () => {
      try {
        await this.gate
        e.server = await fetcher()
        e.status = 'ready'
        e.error = undefined
      } catch (err) {
        e.error = toApiError(err)
        if (e.server === undefined) e.status = 'error'
        this.onError?.(e.error)
      } finally {
        e.inflight = undefined
        this.publish(e)
      }
    })()
    return e.inflight
  }

  /** Drops the cached values of every key starting with `prefix` (reloaded by their hooks). */
  invalidate(prefix: string, reload?: (key: string) => void): void {
    for (const [key, e] of this.entries) {
      if (!key.startsWith(prefix)) continue
      e.status = 'idle'
      if (e.listeners.size > 0) reload?.(key)
      this.publish(e)
    }
  }

  /**
   * Applies `optimistic` at once, calls the server, then folds the answer in with
   * `commit`; on failure only this operation is dropped and the error is recorded.
   */
  async mutate<T, R>(
    key: string,
    mutation: { optimistic: (value: T) => T; call: () => Promise<R>; commit: (value: T, result: R) => T },
  ): Promise<MutationResult<R>> {
    const e = this.entry<T>(key)
    const op: Op<T> = { id: this.nextOp++, apply: mutation.optimistic }
    e.ops.push(op)
    this.publish(e)
    try {
      const result = await mutation.call()
      e.ops = e.ops.filter((o) => o.id !== op.id)
      if (e.server !== undefined) e.server = mutation.commit(e.server, result)
      e.error = undefined
      this.publish(e)
      return { ok: true, data: result }
    } catch (err) {
      const error = toApiError(err)
      e.ops = e.ops.filter((o) => o.id !== op.id)
      e.error = error
      this.publish(e)
      this.onError?.(error)
      return { ok: false, error }
    }
  }
}
