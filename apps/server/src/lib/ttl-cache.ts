/**
 * A small bounded cache with per-entry expiry. Entries past their time are dropped on
 * read; when full, the oldest insertion goes first (Map keeps insertion order).
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>()

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: K, now = Date.now()): V | undefined {
    const hit = this.entries.get(key)
    if (hit === undefined) return undefined
    if (hit.expiresAt <= now) {
      this.entries.delete(key)
      return undefined
    }
    return hit.value
  }

  set(key: K, value: V, expiresAt = Date.now() + this.ttlMs): void {
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) {
      const oldest = this.entries.keys().next()
      if (!oldest.done) this.entries.delete(oldest.value)
    }
    this.entries.set(key, { value, expiresAt })
  }

  delete(key: K): void {
    this.entries.delete(key)
  }

  clear(): void {
    this.entries.clear()
  }
}
