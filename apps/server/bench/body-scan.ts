/**
 * The per-body scan (`scanBody`: nesting depth, NUL and lone surrogates) against
 * JSON.parse of the same body: a 1 MiB body of each of three shapes (an import of short
 * strings, one long string, numbers and small objects). The scan must cost no more than the
 * parse (ratio ≤ 1; docs/performance.md, "Body scans").
 *
 *   npx tsx bench/body-scan.ts
 */
import { performance } from 'node:perf_hooks'
import { scanBody } from '../src/lib/text.js'

const MIB = 1024 * 1024

function fill(make: (i: number) => unknown): string {
  const items: unknown[] = []
  let size = 20
  for (let i = 0; size < MIB; i++) {
    const item = make(i)
    size += JSON.stringify(item).length + 1
    items.push(item)
  }
  return JSON.stringify({ items })
}

const bodies: Record<string, string> = {
  'import (short strings, 1 MiB)': fill((i) => ({
    customer_id: String(100_000 + i),
    product_id: String(7_000_000 + i),
    handle: `handle-${i}-é`,
    added_at: '2026-01-02T03:04:05Z',
    metadata: { note: 'gift 🎁' },
  })),
  'one long string (1 MiB)': JSON.stringify({ product_id: '1', handle: 'x'.repeat(MIB - 40) }),
  'numbers and small objects (1 MiB)': fill((i) => ({ a: i, b: [i, i + 1, { c: i % 7 }], d: true, e: null })),
}

/** Median ms of `run` over `rounds`, after warming up. */
function median(run: () => void, rounds = 30): number {
  for (let i = 0; i < 5; i++) run()
  const times: number[] = []
  for (let i = 0; i < rounds; i++) {
    const start = performance.now()
    run()
    times.push(performance.now() - start)
  }
  times.sort((x, y) => x - y)
  return times[Math.floor(times.length / 2)] as number
}

let worst = 0
console.log('| body | JSON.parse (ms) | scan (ms) | scan ÷ parse |')
console.log('|---|---:|---:|---:|')
for (const [name, text] of Object.entries(bodies)) {
  const parsed: unknown = JSON.parse(text)
  const parse = median(() => JSON.parse(text))
  const scan = median(() => {
    if (scanBody(parsed) !== null) throw new Error('the bench bodies are clean')
  })
  worst = Math.max(worst, scan / parse)
  console.log(`| ${name} | ${parse.toFixed(2)} | ${scan.toFixed(2)} | ${(scan / parse).toFixed(2)} |`)
}
console.log(`worst ratio ${worst.toFixed(2)} (target ≤ 1)`)
process.exitCode = worst <= 1 ? 0 : 1
