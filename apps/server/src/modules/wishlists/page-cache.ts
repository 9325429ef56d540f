/**
 * Serialized response bodies (the GET page, shared reads), kept in process and checked
 * against the owner's version (`wishlist_owners.version`, moved by triggers on every change
 * a page shows: migration 0006). A request reads the version (one primary-key lookup) and
 * serves the cached body only when it is the one the body was built at; otherwise it builds
 * the body and files it under the version read before building, so a body never outlives a
 * write it did not see, whoever wrote (another instance, the events intake, the privacy
 * CLI, a script).
 *
 * The lookup itself is skipped while the storage's change stamp (Storage.changeStamp) has
 * not moved since the entry was built or last confirmed: nothing was written at all. On
 * SQLite the stamp moves with every write of this process and every commit of another
 * connection (PRAGMA data_version, read once per event-loop turn: db/connect.ts), so a
 * request read after a commit sees it. On PostgreSQL it moves with every write
 * of this instance (when sent and when answered) and with each notification the triggers
 * send at commit: another process's commit is seen when its notification arrives (on one
 * network, well under a millisecond). Without the LISTEN connection, and while more than
 * one serving instance listens (a notification can reach another instance after the
 * client's next read: db/connect.ts, changeFeed), there is no stamp and every read looks the
 * version up.
 *
 * Why: the storefront widget reads the shopper's list on every page view to draw its
 * hearts, and a shared registry is read by many people, so the same body is read many
 * times between writes (bench: the GET page builds 50 items from three queries; a hit is a
 * map lookup).
 *
 * Bodies are kept as UTF-8 bytes, what the socket gets (no encoding per response), in an
 * LRU bounded by their size (`maxBytes`; 0 turns the cache off).
 */
import type { FastifyReply } from 'fastify'
import { LRUCache } from 'lru-cache'

export interface PageCache {
  readonly enabled: boolean
  /** The version the body under `key` was built at, if one is kept. */
  versionOf(key: string): string | undefined
  /** The body when it was built or last confirmed at this change stamp (nothing written since): no lookup needed. */
  fresh(key: string, stamp: string): Buffer | undefined
  /** The body when built at this version; a stamp given is recorded as its confirmation. */
  get(key: string, version: string, stamp?: string): Buffer | undefined
  set(key: string, version: string, body: Buffer, stamp?: string): void
  /** Bodies being resolved, by key and change stamp (cachedBody shares them). */
  readonly inFlight: Map<string, Promise<Buffer>>
  /** Lookups since start, for /metrics. */
  readonly stats: { hits: number; misses: number }
}

interface Entry {
  version: string
  body: Buffer
  stamp: string | undefined
}

const sizeOf = (key: string, e: Entry) => 2 * (key.length + e.version.length) + e.body.length + 64

export function createPageCache(maxBytes: number): PageCache {
  const entries = maxBytes > 0 ? new LRUCache<string, Entry>({ maxSize: maxBytes, sizeCalculation: (e, key) => sizeOf(key, e) }) : undefined
  const stats = { hits: 0, misses: 0 }
  return {
    enabled: entries !== undefined,
    inFlight: new Map(),
    versionOf: (key) => entries?.peek(key)?.version,
    fresh(key, stamp) {
      const e = entries?.get(key)
      if (e === undefined || e.stamp !== stamp) return undefined
      stats.hits++
      return e.body
    },
    get(key, version, stamp) {
      const e = entries?.get(key)
      if (e === undefined || e.version !== version) {
        if (e !== undefined) entries?.delete(key)
        stats.misses++
        return undefined
      }
      e.stamp = stamp
      stats.hits++
      return e.body
    },
    set(key, version, body, stamp) {
      entries?.set(key, { version, body, stamp })
    },
    stats,
  }
}

/** What a service answering from the cache is given (app.ts); without a cache every body is built. */
export interface CachedBodies {
  pageCache?: PageCache | undefined
  changeStamp?: (() => string | undefined) | undefined
}

/**
 * A read the page cache may answer with its serialized body: the key it is filed under, the
 * owner version it depends on and how to load its data. Services return it; the route
 * serializes (`sendCachedRead`).
 */
export interface CacheableRead<T> {
  bodies: CachedBodies
  key: string
  version: () => Promise<string>
  load: () => Promise<T>
  /**
   * The version and the data in one round trip (PostgreSQL), the data only when the version
   * is not `known` (the cache holds that body): what `version` then `load` do, in one statement.
   */
  versioned?: (known: string | undefined) => Promise<{ version: string; data?: T }>
}

/**
 * A response body through the cache: served when nothing was written since it was confirmed
 * (the change stamp) or when the owner's version is the one it was built at; built and filed
 * otherwise. The stamp and the version are read before building, so a body never outlives a
 * write it did not see.
 */
function cachedBody<T>(bodies: CachedBodies, read: CacheableRead<T>, build: (data: T) => Buffer): Buffer | Promise<Buffer> {
  const { pageCache: cache, changeStamp } = bodies
  const { key, versioned } = read
  if (cache === undefined || !cache.enabled) return read.load().then(build)
  const resolve = async (stamp: string | undefined): Promise<Buffer> => {
    if (versioned !== undefined) {
      // One round trip: the version, and the data unless it is the cached body's.
      const { version, data } = await versioned(cache.versionOf(key))
      const cached = cache.get(key, version, stamp)
      if (cached !== undefined) return cached
      // (The body was evicted after its version was read: read it whole.)
      if (data === undefined) return resolve(stamp)
      const body = build(data)
      cache.set(key, version, body, stamp)
      return body
    }
    const current = await read.version()
    const cached = cache.get(key, current, stamp)
    if (cached !== undefined) return cached
    const body = build(await read.load())
    cache.set(key, current, body, stamp)
    return body
  }
  const stamp = changeStamp?.()
  if (stamp === undefined) return resolve(undefined)
  const fresh = cache.fresh(key, stamp)
  if (fresh !== undefined) return fresh
  // Readers of one body at one stamp share one lookup (and build): right after a write,
  // every concurrent reader of a page would otherwise query the database at once (bench:
  // the webhook worker's once-a-second poll made the 32 connections' next reads a burst of
  // lookups on PostgreSQL, the p99). Sharing is safe because an equal stamp means nothing was
  // written between the first reader's start and the last one's. (lru-cache's `fetch` shares
  // by key alone: a reader after a write would join a load that started before it.)
  const shareKey = `${key}\u0001${stamp}`
  let pending = cache.inFlight.get(shareKey)
  if (pending === undefined) {
    pending = resolve(stamp)
    cache.inFlight.set(shareKey, pending)
    const done = () => cache.inFlight.delete(shareKey)
    pending.then(done, done)
  }
  return pending
}

/**
 * A 200 answered through the cache: the body is the route's own serialization (its response
 * schema, `{ok: true, data}`) as bytes, which Fastify sends as they are. A body confirmed by
 * the change stamp is sent at once, without a promise (the route handler returns nothing
 * then, the send is done); otherwise the reply is sent when the returned promise settles.
 */
export function sendCachedRead<T>(reply: FastifyReply, read: CacheableRead<T>): undefined | Promise<void> {
  const body = cachedBody(read.bodies, read, (data) => Buffer.from(reply.serialize({ ok: true, data }) as string))
  if (Buffer.isBuffer(body)) {
    sendBody(reply, body)
    return undefined
  }
  return body.then((bytes) => {
    sendBody(reply, bytes)
  })
}

const sendBody = (reply: FastifyReply, body: Buffer) => reply.type('application/json; charset=utf-8').send(body)
