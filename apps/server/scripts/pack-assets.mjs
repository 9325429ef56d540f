// `npm pack` / `npm publish` of the server (prepack): copies the built browser files the
// server serves (the widget, the dashboard, the demo storefront) into assets/, where an
// installed package finds them (src/lib/assets.ts); postpack (`--clean`) removes the copy.
import { cpSync, existsSync, rmSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const server = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const repo = resolve(server, '../..')
const assets = resolve(server, 'assets')
rmSync(assets, { recursive: true, force: true })
if (process.argv[2] === '--clean') process.exit(0)

const copies = [
  ['packages/widget/dist', 'widget'],
  ['apps/dashboard/dist', 'dashboard'],
  ['apps/demo/index.html', 'demo/index.html'],
  ['apps/demo/dist/app.js', 'demo/app.js'],
]
for (const [from, to] of copies) {
  const source = resolve(repo, from)
  if (!existsSync(source)) throw new Error(`${from} is not built: run \`npm run build\` at the repository root first`)
  cpSync(source, resolve(assets, to), { recursive: true })
}
if (!existsSync(resolve(server, 'dist/cli/main.js'))) throw new Error('apps/server/dist is not built: run `npm run build -w apps/server`')
