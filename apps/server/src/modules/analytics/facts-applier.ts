/**
 * The background applier (facts.ts): every `intervalMs` it applies each shop's pending facts
 * so the inbox stays short (reads apply what is pending themselves). With several instances,
 * a shop another applier holds is skipped until the next pass.
 */
import type { Db } from '../../db/types.js'
import { applyPendingFacts } from './facts.js'
import { factsRepo } from './facts.repo.js'

/** Where a failed pass is reported (the server's logger). */
export interface FactsApplierLog {
  error(obj: object, msg?: string): void
}

const silent: FactsApplierLog = { error() {} }

export interface FactsApplier {
  /** One pass over the shops with pending facts; returns how many facts it applied. */
  runOnce(): Promise<number>
  start(): void
  /** Stops the timer and waits for the pass in progress. */
  stop(): Promise<void>
}

export function createFactsApplier(opts: { db: Db; intervalMs: number; log?: FactsApplierLog }): FactsApplier {
  const { db, intervalMs, log = silent } = opts
  let timer: NodeJS.Timeout | undefined
  let pass: Promise<void> | undefined
  let stopped = false

  async function runOnce(): Promise<number> {
    let applied = 0
    for (const shopId of await factsRepo.shopsWithPending(db)) applied += await applyPendingFacts(db, shopId, { wait: false })
    return applied
  }

  const schedule = () => {
    if (!stopped) timer = setTimeout(tick, intervalMs).unref()
  }
  function tick(): void {
    pass = runOnce()
      .then(
        () => {},
        (err: unknown) => log.error({ err }, 'applying analytics facts failed; retrying on the next pass'),
      )
      .finally(() => {
        pass = undefined
        schedule()
      })
  }

  return {
    runOnce,
    start: schedule,
    async stop() {
      stopped = true
      clearTimeout(timer)
      await pass
    },
  }
}
