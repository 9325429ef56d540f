// Imports the installed SDK at run time as ESM and as CommonJS (scripts/pack-check.sh).
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const esm = await import('wishlist-service-sdk')
const cjs = createRequire(import.meta.url)('wishlist-service-sdk')
for (const sdk of [esm, cjs]) {
  assert.equal(typeof sdk.createWishlistClient, 'function')
  assert.ok(sdk.SERVER_ERROR_CODES.includes('REQUEST_TIMEOUT'))
}
const react = await import('wishlist-service-sdk/react')
assert.equal(typeof react.WishlistProvider, 'function')
// The React entry is client code for frameworks with server components (Next.js's App Router):
// both builds open with the directive, so importing it from a server component needs no wrapper.
const require = createRequire(import.meta.url)
const reactCjs = require.resolve('wishlist-service-sdk/react')
for (const entry of [reactCjs, reactCjs.replace(/\.cjs$/, '.js')]) {
  assert.match(readFileSync(entry, 'utf8'), /^("use strict";\s*)?"use client";/, `${entry} does not start with "use client"`)
}
// The widget's versioned file is the served one, and its SRI hash is that file's.
const sri = require('wishlist-service-widget/sri.json')
const versioned = readFileSync(require.resolve(`wishlist-service-widget/dist/${sri.file}`))
assert.equal(sri.file, `widget-${require('wishlist-service-widget/package.json').version}.min.js`)
assert.equal(sri.integrity, `sha384-${createHash('sha384').update(versioned).digest('base64')}`)
assert.deepEqual(versioned, readFileSync(require.resolve('wishlist-service-widget/widget.js')))
console.log('pack-check: the SDK imports as ESM and CommonJS, its React entry too; widget', sri.file, sri.integrity)
