/**
 * The notification worker's limiter per key (send-limiter.ts): whatever the requests' latency
 * and wherever the channel's fixed windows fall, no window receives more than the limit.
 */
import { describe, expect, it } from 'vitest'
import { createSendLimiter } from '../../src/modules/notifications/send-limiter.js'

/** A simulated sender: as many requests as the limiter lets start, each received at a random moment of its flight. */
function simulate(seed: number, durationMs: number) {
  let state = seed
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  const windows = [
    { limit: 35, ms: 1_000 },
    { limit: 350, ms: 60_000 },
  ]
  const limiter = createSendLimiter(windows)
  const received: number[] = []
  const answers: { at: number }[] = []
  for (let t = 0; t < durationMs; t += 5) {
    for (let i = answers.length - 1; i >= 0; i--) {
      if (answers[i]!.at <= t) {
        limiter.finish('k', t)
        answers.splice(i, 1)
      }
    }
    while (limiter.tryStart('k', t)) {
      const latency = 5 + Math.floor(random() * 400)
      received.push(t + Math.floor(random() * latency))
      answers.push({ at: t + latency })
    }
  }
  return { windows, received }
}

describe('the send limiter', () => {
  it('never lets a fixed window of the channel receive more than its limit, wherever the windows fall', () => {
    for (const seed of [1, 7, 42]) {
      const { windows, received } = simulate(seed, 150_000)
      for (const w of windows) {
        for (let offset = 0; offset < w.ms; offset += w.ms / 50) {
          const counts = new Map<number, number>()
          for (const at of received) {
            const window = Math.floor((at + offset) / w.ms)
            counts.set(window, (counts.get(window) ?? 0) + 1)
          }
          expect(Math.max(...counts.values())).toBeLessThanOrEqual(w.limit)
        }
      }
      // And it is not idle: close to the steady limit over the run (350 per minute).
      expect(received.length).toBeGreaterThan(700)
    }
  })

  it('closes a key until the time given, and says when it has room again', () => {
    const limiter = createSendLimiter([{ limit: 2, ms: 1_000 }])
    expect(limiter.tryStart('k', 0)).toBe(true)
    expect(limiter.tryStart('k', 0)).toBe(true)
    expect(limiter.tryStart('k', 0)).toBe(false)
    limiter.finish('k', 100)
    limiter.finish('k', 200)
    expect(limiter.room('k', 500)).toBe(0)
    expect(limiter.nextRoomAt('k', 500)).toBe(1_100)
    expect(limiter.room('k', 1_100)).toBe(1)
    limiter.close('k', 5_000)
    expect(limiter.room('k', 4_000)).toBe(0)
    expect(limiter.nextRoomAt('k', 4_000)).toBe(5_000)
    expect(limiter.tryStart('k', 5_000)).toBe(true)
    limiter.cancel('k')
    expect(limiter.room('k', 5_000)).toBe(2)
  })
})
