/**
 * Copies screenshots the browser tests took (e2e/screenshots/, gitignored) into docs/images,
 * on purpose: the tests never write into the docs, so `npm test` leaves the tree clean.
 *
 *   npm run screenshots -w e2e                     every image docs/images already has
 *   npm run screenshots -w e2e -- NAME [NAME…]     these (`dashboard-overview-1280`, `.png` optional)
 *
 * Run the suite that takes them first (e.g. `npx vitest run --project sqlite dashboard.e2e.ts`
 * in e2e/). Names it cannot find are listed and the exit code is 1.
 */
import { copyFileSync, existsSync, readdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const HERE = dirname(fileURLToPath(import.meta.url))
const SCREENSHOTS = resolve(HERE, '..', 'screenshots')
const IMAGES = resolve(HERE, '..', '..', 'docs', 'images')

const asked = process.argv.slice(2).map((name) => (name.endsWith('.png') ? name : `${name}.png`))
const names = asked.length > 0 ? asked : readdirSync(IMAGES).filter((name) => name.endsWith('.png'))
const missing = []
for (const name of names) {
  if (name.includes('/') || name.includes('\\')) {
    missing.push(name)
    continue
  }
  const from = join(SCREENSHOTS, name)
  if (!existsSync(from)) {
    missing.push(name)
    continue
  }
  copyFileSync(from, join(IMAGES, name))
  console.log(`docs/images/${name}`)
}
if (missing.length > 0) {
  console.error(`not in e2e/screenshots/ (run the suite that takes them first): ${missing.join(', ')}`)
  process.exitCode = 1
}
