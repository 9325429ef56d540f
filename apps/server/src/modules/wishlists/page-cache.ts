/**
 * Serialized GET-page bodies, kept in process and checked against the owner's version
 * (`wishlist_owners.version`, moved by triggers on every change a page shows: migration
 * 0006). A request reads the version first (one primary-key lookup) and serves the cached
 * body only when the version is the one the body was built at; otherwise it builds the page
 * and stores it under the version it read before building. A page built after a write it
 * did not see is therefore never stored under a version that write produced, so no
 * instance, process or writer can make it serve a stale page; there is no TTL to wait out.
 *
 * On SQLite a request first compares the storage's change stamp with the one the entry was
 * last confirmed at: equal means nothing was written since, and the lookup is skipped.
 *
 * Why: the storefront widget reads the shopper's list on every page view to draw its
 * hearts, so the same page is read many times between writes (bench: the GET page builds
 * 50 items from three queries; a hit is one lookup and a memory copy).
 *
 * Bodies are kept as UTF-8 bytes, what the socket gets (no encoding per response). Least
 * recently used entries go first once they exceed `maxBytes`; `maxBytes` 0 turns the cache off.
 */
export interface PageCache {
  readonly enabled: boolean
  /**
   * SQLite's shortcut (Storage.changeStamp): the body when it was built or last confirmed
   * at this stamp, i.e. nothing at all was written since; no version lookup needed.
   */
  fresh(key: string, stamp: string): Buffer | undefined
  /** The body when built at this version; a stamp given is recorded as its confirmation. */
  get(key: string, version: string, stamp?: string): Buffer | undefined
  set(key: string, version: string, body: Buffer, stamp?: string): void
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
  // A Map iterates in insertion order: re-inserting on a hit makes its first key the least recently used.
  const entries = new Map<string, Entry>()
  let bytes = 0
  const stats = { hits: 0, misses: 0 }
  const drop = (key: string, e: Entry) => {
    entries.delete(key)
    bytes -= sizeOf(key, e)
  }
  return {
    enabled: maxBytes > 0,
    fresh(key, stamp) {
      const e = entries.get(key)
      if (e === undefined || e.stamp !== stamp) return undefined
      entries.delete(key)
      entries.set(key, e)
      stats.hits++
      return e.body
    },
    get(key, version, stamp) {
      const e = entries.get(key)
      if (e !== undefined) entries.delete(key)
      if (e === undefined || e.version !== version) {
        if (e !== undefined) bytes -= sizeOf(key, e)
        stats.misses++
        return undefined
      }
      e.stamp = stamp
      entries.set(key, e)
      stats.hits++
      return e.body
    },
    set(key, version, body, stamp) {
      if (maxBytes === 0) return
      const old = entries.get(key)
      if (old) drop(key, old)
      const e = { version, body, stamp }
      const size = sizeOf(key, e)
      if (size > maxBytes) return
      entries.set(key, e)
      bytes += size
      for (const [k, v] of entries) {
        if (bytes <= maxBytes) break
        drop(k, v)
      }
    },
    stats,
  }
}

/**
 * A response body through the cache: served when nothing was written since it was confirmed
 * (`stamp`, SQLite) or when the owner's version is the one it was built at; built and filed
 * otherwise. The stamp and the version are read before building, so a body never outlives a
 * write it did not see.
 */
export async function cachedBody(
  cache: PageCache,
  changeStamp: (() => string) | undefined,
  key: string,
  version: () => Promise<string>,
  build: () => Promise<Buffer>,
): Promise<Buffer> {
  if (!cache.enabled) return build()
  const stamp = changeStamp?.()
  const fresh = stamp === undefined ? undefined : cache.fresh(key, stamp)
  if (fresh !== undefined) return fresh
  const current = await version()
  const cached = cache.get(key, current, stamp)
  if (cached !== undefined) return cached
  const body = await build()
  cache.set(key, current, body, stamp)
  return body
}
