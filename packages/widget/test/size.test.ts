import { readdirSync, readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { expect, test } from 'vitest'

const dist = resolve(dirname(fileURLToPath(import.meta.url)), '../dist')
const gzipped = (name: string) => gzipSync(readFileSync(resolve(dist, name)), { level: 9 }).length
const scripts = readdirSync(dist).filter((f) => f.endsWith('.js'))

// `npm test` rebuilds first (pretest), so this measures the current source.
test('the first script is at most 8 KB gzipped', () => {
  expect(gzipped('widget.js')).toBeLessThanOrEqual(8 * 1024)
})

test('the review form, the wishlist page and the notification form are chunks of at most 6 KB gzipped each', () => {
  expect(gzipped('widget-review-form.js')).toBeLessThanOrEqual(6 * 1024)
  expect(gzipped('widget-wishlist-page.js')).toBeLessThanOrEqual(6 * 1024)
  expect(gzipped('widget-notify-form.js')).toBeLessThanOrEqual(6 * 1024)
})

test('every language beyond English is a chunk of its own', () => {
  expect(scripts.filter((f) => f.startsWith('widget-locale-')).sort()).toEqual(
    ['de', 'es', 'fr', 'it', 'ja', 'nl', 'pt-BR'].map((tag) => `widget-locale-${tag}.js`),
  )
  // English is built in; the other languages' strings are not.
  const first = readFileSync(resolve(dist, 'widget.js'), 'utf8')
  expect(first).toContain('No reviews yet')
  expect(first).not.toContain('Aucun avis')
  // A chunk's English ships in the chunk.
  expect(first).not.toContain('E-mail me when an item of my wishlist')
})

test('every script is self-contained: no imports, no framework', () => {
  for (const name of scripts) {
    const source = readFileSync(resolve(dist, name), 'utf8')
    expect(source, name).not.toMatch(/\bimport\s*\(|^import\s|require\(/m)
    expect(source, name).not.toMatch(/react|preact|vue/i)
  }
})

test("the SDK's types and guest storage keys are imported as types only: no byte of the SDK in any script", () => {
  const src = resolve(dirname(fileURLToPath(import.meta.url)), '../src')
  const widget = readFileSync(resolve(src, 'widget.ts'), 'utf8')
  const imports = [...widget.matchAll(/^import .* from '(wishlist-service-sdk[^']*)'$/gm)]
  expect(imports.map((m) => m[1])).toEqual(['wishlist-service-sdk', 'wishlist-service-sdk/react'])
  for (const m of imports) expect(m[0], m[0]).toMatch(/^import type \{/)
  for (const name of scripts) {
    const source = readFileSync(resolve(dist, name), 'utf8')
    // What the SDK's runtime would bring: its storage probe and its error class.
    expect(source, name).not.toMatch(/__wishlist_probe__|WishlistApiError/)
  }
})
