/**
 * A keyed cache of server resources with optimistic updates. Each entry holds the last
 * confirmed server value plus the optimistic operations still in flight; what components
 * see is the server value with those operations applied (over an empty value while the
 * first load is still out). A failed call drops only its own operation (rollback without
 * undoing concurrent ones) and records the error. Loads are de-duplicated per key, so many
 * components on one list cause one request.
 *
 * Two races are closed here. A load that was out while a mutation succeeded may carry the
 * state from before it: the confirmed operation is kept and folded into the loaded value
 * (commits are idempotent: "present with this item", "absent"). And mutations in one
 * `lane` (one product of one list) reach the server one after the other, so the answers
 * are folded in the order the server applied them, whatever order they arrive in.
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
  /** The server confirmed it; `apply` is then its commit, folded in by the next load. */
  confirmed?: boolean
}

interface Entry<T> {
  server: T | undefined
  /** What optimistic operations apply to before the first load has answered. */
  empty: T | undefined
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
  /** The tail of each lane's chain of calls. */
  private readonly lanes = new Map<string, Promise<void>>()
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
      e = {
        server: undefined,
        empty: undefined,
        ops: [],
        status: 'idle',
        error: undefined,
        inflight: undefined,
        listeners: new Set(),
        snap: EMPTY,
      }
      this.entries.set(key, e as Entry<unknown>)
    }
    return e
  }

  private publish<T>(e: Entry<T>): void {
    const base = e.server ?? (e.ops.length > 0 ? e.empty : undefined)
    const data = base === undefined ? undefined : e.ops.reduce<T>((value, op) => op.apply(value), base)
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
        const loaded = await fetcher()
        // Confirmed operations are folded in: the load may have been answered before them.
        e.server = e.ops.reduce<T>((value, op) => (op.confirmed ? op.apply(value) : value), loaded)
        e.ops = e.ops.filter((op) => !op.confirmed)
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

  /** Runs `call` after every earlier call of `lane`; the lane is forgotten when idle. */
  private inLane<R>(lane: string | undefined, call: () => Promise<R>): Promise<R> {
    if (lane === undefined) return call()
    const run = (this.lanes.get(lane) ?? Promise.resolve()).then(call)
    const tail = run.then(
      () => undefined,
      () => undefined,
    )
    this.lanes.set(lane, tail)
    void tail.then(() => {
      if (this.lanes.get(lane) === tail) this.lanes.delete(lane)
    })
    return run
  }

  /**
   * Applies `optimistic` at once, calls the server (after the earlier calls of the same
   * `lane`), then folds the answer in with `commit`, which must be idempotent; on failure
   * only this operation is dropped and the error is recorded. `empty` is the value the
   * operation applies to while the entry has not loaded yet.
   */
  async mutate<T, R>(
    key: string,
    mutation: { optimistic: (value: T) => T; call: () => Promise<R>; commit: (value: T, result: R) => T; lane?: string; empty?: T },
  ): Promise<MutationResult<R>> {
    const e = this.entry<T>(key)
    e.empty ??= mutation.empty
    const op: Op<T> = { id: this.nextOp++, apply: mutation.optimistic }
    e.ops.push(op)
    this.publish(e)
    try {
      const result = await this.inLane(mutation.lane === undefined ? undefined : `${key}|${mutation.lane}`, mutation.call)
      if (e.server === undefined || e.inflight) {
        // A load is out (or none answered yet): it may predate this write, so the commit
        // stays an operation until a load has folded it in.
        op.apply = (value) => mutation.commit(value, result)
        op.confirmed = true
      } else {
        e.ops = e.ops.filter((o) => o.id !== op.id)
        e.server = mutation.commit(e.server, result)
      }
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
