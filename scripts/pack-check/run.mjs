// Imports the installed SDK at run time as ESM and as CommonJS (scripts/pack-check.sh).
import { createRequire } from 'node:module'
import assert from 'node:assert/strict'

const esm = await import('wishlist-service-sdk')
const cjs = createRequire(import.meta.url)('wishlist-service-sdk')
for (const sdk of [esm, cjs]) {
  assert.equal(typeof sdk.createWishlistClient, 'function')
  assert.ok(sdk.SERVER_ERROR_CODES.includes('REQUEST_TIMEOUT'))
}
const react = await import('wishlist-service-sdk/react')
assert.equal(typeof react.WishlistProvider, 'function')
const sri = createRequire(import.meta.url)('wishlist-service-widget/sri.json')
assert.match(sri.integrity, /^sha384-/)
console.log('pack-check: the SDK imports as ESM and CommonJS, its React entry too; widget', sri.file, sri.integrity)
