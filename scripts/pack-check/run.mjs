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
// The widget's versioned file is the served one, and its SRI hash is that file's.
const require = createRequire(import.meta.url)
const sri = require('wishlist-service-widget/sri.json')
const versioned = readFileSync(require.resolve(`wishlist-service-widget/dist/${sri.file}`))
assert.equal(sri.file, `widget-${require('wishlist-service-widget/package.json').version}.min.js`)
assert.equal(sri.integrity, `sha384-${createHash('sha384').update(versioned).digest('base64')}`)
assert.deepEqual(versioned, readFileSync(require.resolve('wishlist-service-widget/widget.js')))
console.log('pack-check: the SDK imports as ESM and CommonJS, its React entry too; widget', sri.file, sri.integrity)
