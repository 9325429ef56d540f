/**
 * axe-core (the accessibility engine of Deque, the rules WCAG checkers run) in the page under
 * test: its source is evaluated in the page (through the DevTools protocol, so a page's CSP
 * does not block it) and `axe.run` checks the whole document or the given selectors.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'

const source = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

export interface Violation {
  id: string
  impact: string | null
  help: string
  nodes: string[]
}

/** The serious and critical violations (WCAG 2.x A and AA, and axe's best practices) in `include` (default: the page). */
export async function seriousViolations(page: Page, include?: string[]): Promise<Violation[]> {
  const loaded = await page.evaluate(() => typeof (window as unknown as { axe?: unknown }).axe === 'object')
  if (!loaded) await page.evaluate(`${source}\n;void 0`)
  const results = await page.evaluate(async (selectors) => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            context: unknown,
            options: unknown,
          ): Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }> }>
        }
      }
    ).axe
    const context = selectors ? { include: selectors.map((s) => [s]) } : document
    const { violations } = await axe.run(context, {
      resultTypes: ['violations'],
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
    })
    return violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => JSON.stringify(n.target)) }))
  }, include ?? null)
  return results.filter((v) => v.impact === 'serious' || v.impact === 'critical')
}

/** The two widths every screen is checked at: a laptop and a small phone. */
export const WIDTHS = [1280, 375] as const
