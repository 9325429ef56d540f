/** `npm run generate -w packages/sdk`: refresh openapi.json and src/generated/ (openapi.d.ts, webhook-events.ts, settings.ts). */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { renderOpenApi } from './openapi-document.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const { json, dts, events, settings } = await renderOpenApi()
writeFileSync(resolve(root, 'openapi.json'), json)
mkdirSync(resolve(root, 'src/generated'), { recursive: true })
writeFileSync(resolve(root, 'src/generated/openapi.d.ts'), dts)
writeFileSync(resolve(root, 'src/generated/webhook-events.ts'), events)
writeFileSync(resolve(root, 'src/generated/settings.ts'), settings)
process.stdout.write(
  `wrote openapi.json (${json.length} B) src/generated/openapi.d.ts (${dts.length} B), src/generated/webhook-events.ts and src/generated/settings.ts\n`,
)
