/**
 * The pace of the notification worker's requests to one rate-limited API key (Klaviyo's
 * Create Event: KLAVIYO_CREATE_EVENT_BURST_PER_SECOND and _STEADY_PER_MINUTE), so that the
 * channel never counts more than its limit in any of its windows.
 *
 * Klaviyo counts the requests it receives in fixed windows (one second, one minute) whose
 * edges the sender does not know, and a request is received some time between when it was
 * sent and when its answer came. So a request counts here from when it starts until a whole
 * window after its answer: a new request starts only while fewer than `limit` requests are in
 * flight or answered less than a window ago. Any window of Klaviyo's then receives at most
 * `limit` requests: every request it receives was in flight at some moment inside it, so
 * the last of them to start saw all the others counted. The price is the requests' own
 * duration on top of each window, a few per cent of the rate at Klaviyo's usual latency.
 *
 * A key can also be closed for a while: the channel's Retry-After (429), or a backoff while
 * the channel fails or cannot be reached, so one outage costs one attempt per wait, not one
 * per queued message. Per process: the notification worker sends on a key only while it holds
 * the key's lease in the database (notification-worker.ts, `sendLeaseTimes`), so of all the
 * instances one sends on a key at a time, and its limiter counts every request on it.
 */

export interface Window {
  /** Requests allowed per window. */
  limit: number
  ms: number
}

interface KeyState {
  inFlight: number
  /** When each answered request's window ends (answer time + window), per window, oldest first. */
  answered: number[][]
  closedUntil: number
}

export interface SendLimiter {
  /** How many requests may start on the key now (0 when closed or full). */
  room(key: string, at: number): number
  /** When the key may have room again (at or after `at`), as far as this limiter knows now. */
  nextRoomAt(key: string, at: number): number
  /** Starts a request: false (and nothing counted) when there is no room. */
  tryStart(key: string, at: number): boolean
  /** The request's answer came (whatever it was). */
  finish(key: string, at: number): void
  /** A request started but never sent: it counts for nothing. */
  cancel(key: string): void
  /** Nothing starts on the key before `until`. */
  close(key: string, until: number): void
}

export function createSendLimiter(windows: readonly Window[]): SendLimiter {
  const keys = new Map<string, KeyState>()
  const state = (key: string): KeyState => {
    let s = keys.get(key)
    if (s === undefined) keys.set(key, (s = { inFlight: 0, answered: windows.map(() => []), closedUntil: 0 }))
    return s
  }
  /** Drops the answers whose window has passed; forgets an idle key. */
  const prune = (key: string, s: KeyState, at: number) => {
    for (const ends of s.answered) {
      let drop = 0
      while (drop < ends.length && (ends[drop] as number) <= at) drop++
      if (drop > 0) ends.splice(0, drop)
    }
    if (s.inFlight === 0 && s.closedUntil <= at && s.answered.every((e) => e.length === 0)) keys.delete(key)
  }
  const room = (key: string, at: number): number => {
    const s = keys.get(key)
    if (s === undefined) return Math.min(...windows.map((w) => w.limit))
    prune(key, s, at)
    if (s.closedUntil > at) return 0
    return Math.max(0, Math.min(...windows.map((w, i) => w.limit - s.inFlight - (s.answered[i] as number[]).length)))
  }
  return {
    room,
    nextRoomAt(key, at) {
      const s = keys.get(key)
      if (s === undefined) return at
      prune(key, s, at)
      let next = Math.max(at, s.closedUntil)
      windows.forEach((w, i) => {
        const ends = s.answered[i] as number[]
        const excess = s.inFlight + ends.length - w.limit + 1
        // In-flight requests free nothing until they are answered: their answers' windows come later still.
        if (excess > 0) next = Math.max(next, excess <= ends.length ? (ends[excess - 1] as number) : at + w.ms)
      })
      return next
    },
    tryStart(key, at) {
      if (room(key, at) <= 0) return false
      state(key).inFlight++
      return true
    },
    finish(key, at) {
      const s = state(key)
      s.inFlight = Math.max(0, s.inFlight - 1)
      windows.forEach((w, i) => (s.answered[i] as number[]).push(at + w.ms))
    },
    cancel(key) {
      const s = keys.get(key)
      if (s !== undefined) s.inFlight = Math.max(0, s.inFlight - 1)
    },
    close(key, until) {
      const s = state(key)
      s.closedUntil = Math.max(s.closedUntil, until)
    },
  }
}
