/**
 * The background workers' loop (webhooks/webhook-worker.ts, notifications/notification-worker.ts):
 * runs `pass` again at once while it reports work, otherwise after `waitMs()` or an earlier
 * `wake()` (an attempt finished, a slot is free); a pass that throws is reported to `onError`
 * and the loop goes on. `stop()` ends the wait at once and resolves when the pass in
 * progress has returned.
 */
export function pollLoop(o: { pass(): Promise<boolean>; waitMs(): number; onError(err: unknown): void }) {
  let running = false
  let loop: Promise<void> | undefined
  let wakeUp: (() => void) | undefined

  async function run(): Promise<void> {
    while (running) {
      let busy = false
      try {
        busy = await o.pass()
      } catch (err) {
        o.onError(err)
      }
      if (!running) break
      if (!busy) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, o.waitMs())
          wakeUp = () => {
            clearTimeout(timer)
            resolve()
          }
        })
        wakeUp = undefined
      }
    }
  }

  return {
    /** Ends the current wait: the next pass runs now. */
    wake: () => wakeUp?.(),
    start(): void {
      if (running) return
      running = true
      loop = run()
    },
    async stop(): Promise<void> {
      running = false
      wakeUp?.()
      await loop
      loop = undefined
    },
  }
}
