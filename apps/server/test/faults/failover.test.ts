/**
 * Failover without loss: the failover drill (scripts/failover-drill.ts) on throwaway servers. A
 * primary with a synchronous streaming standby behind PgBouncer (transaction mode for the
 * service's queries, a session-mode entry for its change feed); under a stream of adds from
 * several clients the primary is killed (`-m immediate`), the standby promoted and PgBouncer
 * re-pointed at it (`RELOAD`). Every answer meanwhile is 2xx or 503 with Retry-After, the service
 * recovers without a restart, and every add acknowledged with a 2xx is on the new primary.
 */
import { describe, expect, it } from 'vitest'
import { formatDrill, runFailoverDrill } from '../../scripts/failover-drill.js'
import { pgBouncerInstalled } from '../helpers/pgbouncer.js'

describe.skipIf(!pgBouncerInstalled())('failover to a synchronous standby behind PgBouncer', () => {
  it('loses no acknowledged write of 1,000 and answers only 2xx or 503 with Retry-After meanwhile', { timeout: 120_000 }, async () => {
    const result = await runFailoverDrill({ writes: 1_000, clients: 8 })
    console.info(`[failover promote-first]\n${formatDrill(result)}`)
    expect(result.checks.filter((c) => !c.ok)).toEqual([])
    expect(result.figures.acknowledged).toBeGreaterThanOrEqual(1_000)
    // The primary really went away: writes were acknowledged before the kill and after the
    // recovery, with a gap between. A write in flight then is answered 503 or, when PgBouncer
    // held it until the new primary took it, 2xx; either way no request hangs.
    expect(result.figures.acknowledgedBeforeKill).toBeGreaterThan(0)
    expect(result.figures.acknowledgedAfterRecovery).toBeGreaterThan(0)
    expect(result.figures.noWriteMs).toBeGreaterThanOrEqual(result.figures.killMs)
    expect(result.figures.longestRequestMs).toBeLessThan(10_000)
  })

  it('answers 503 (never 500) to writes that reach the standby before its promotion', { timeout: 120_000 }, async () => {
    const result = await runFailoverDrill({ writes: 1_000, clients: 8, order: 'repoint-first' })
    console.info(`[failover repoint-first]\n${formatDrill(result)}`)
    expect(result.checks.filter((c) => !c.ok)).toEqual([])
    // The read-only standby refused writes (25006), and the service answered those 503.
    expect(Object.keys(result.figures.surfacedErrors).some((k) => k.startsWith('unavailable 25006'))).toBe(true)
    expect(Object.keys(result.figures.surfacedErrors).filter((k) => k.startsWith('unhandled'))).toEqual([])
  })
})
