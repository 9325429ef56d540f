import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'
import { renderOpenApi } from '../scripts/openapi-document.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')

// Builds the whole app in-process: about 15 s on a loaded 2-core machine, more when it is busier.
test(
  'the committed OpenAPI document and generated types match the server (run `npm run generate -w packages/sdk`)',
  { timeout: 120_000 },
  async () => {
    const { json, dts, events, settings } = await renderOpenApi()
    expect(readFileSync(resolve(root, 'openapi.json'), 'utf8'), 'packages/sdk/openapi.json is stale').toBe(json)
    expect(readFileSync(resolve(root, 'src/generated/openapi.d.ts'), 'utf8'), 'src/generated/openapi.d.ts is stale').toBe(dts)
    expect(readFileSync(resolve(root, 'src/generated/webhook-events.ts'), 'utf8'), 'src/generated/webhook-events.ts is stale').toBe(events)
    expect(readFileSync(resolve(root, 'src/generated/settings.ts'), 'utf8'), 'src/generated/settings.ts is stale').toBe(settings)
  },
)
