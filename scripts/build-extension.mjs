// Copies the widget's built scripts (packages/widget/dist/*.js: the first script and its
// lazy chunks) into the theme app extension's assets, where the app embed loads them from
// Shopify's CDN. Run by `npm run build` after the workspaces are built; the copies are not
// committed (.gitignore), so the extension always ships the widget of this checkout.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const from = join(root, 'packages', 'widget', 'dist')
const to = join(root, 'extensions', 'wishlist', 'assets')

export function copyWidgetAssets() {
  mkdirSync(to, { recursive: true })
  // Chunks a previous build had and this one does not must not ship.
  for (const name of readdirSync(to)) if (/^widget.*\.js$/.test(name)) rmSync(join(to, name))
  const copied = readdirSync(from).filter((name) => name.endsWith('.js'))
  if (!copied.includes('widget.js'))
    throw new Error(`${from}/widget.js is missing: build the widget first (npm run build -w packages/widget)`)
  for (const name of copied) copyFileSync(join(from, name), join(to, name))
  return copied
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const copied = copyWidgetAssets()
  console.log(`extensions/wishlist/assets: ${copied.join(', ')}`)
}
