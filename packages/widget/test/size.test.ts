import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { expect, test } from 'vitest'

const built = resolve(dirname(fileURLToPath(import.meta.url)), '../dist/widget.js')

// `npm test` rebuilds first (pretest), so this measures the current source.
test('the widget is at most 8 KB gzipped', () => {
  const source = readFileSync(built)
  const gzipped = gzipSync(source, { level: 9 }).length
  expect(gzipped).toBeLessThanOrEqual(8 * 1024)
})

test('the widget is a self-contained script: no imports, no framework', () => {
  const source = readFileSync(built, 'utf8')
  expect(source).not.toMatch(/\bimport\s*\(|^import\s|require\(/m)
  expect(source).not.toMatch(/react|preact|vue/i)
})
