/**
 * `npm run lint:openapi`: lints the document the server serves at GET /v1/openapi.json
 * (scripts/served-document.ts) with Redocly's recommended rules (redocly.yaml). Exits with
 * Redocly's status.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { servedDocument } from './served-document.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const document = await servedDocument()
const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'))
const file = join(dir, 'openapi.json')
writeFileSync(file, `${JSON.stringify(JSON.parse(document), null, 2)}\n`)
const redocly = resolve(root, '../../node_modules/.bin/redocly')
const run = spawnSync(redocly, ['lint', file, '--config', resolve(root, 'redocly.yaml'), ...process.argv.slice(2)], { stdio: 'inherit' })
rmSync(dir, { recursive: true, force: true })
process.exit(run.status ?? 1)
