import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'
import { renderOpenApi } from '../scripts/openapi-document.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')

test('the committed OpenAPI document and generated types match the server (run `npm run generate -w packages/sdk`)', async () => {
  const { json, dts } = await renderOpenApi()
  expect(readFileSync(resolve(root, 'openapi.json'), 'utf8'), 'packages/sdk/openapi.json is stale').toBe(json)
  expect(readFileSync(resolve(root, 'src/generated/openapi.d.ts'), 'utf8'), 'src/generated/openapi.d.ts is stale').toBe(dts)
})

test('pending-shapes.ts holds fallbacks only for routes the server does not have', () => {
  const document = JSON.parse(readFileSync(resolve(root, 'openapi.json'), 'utf8')) as { paths: Record<string, Record<string, unknown>> }
  const source = readFileSync(resolve(root, 'src/pending-shapes.ts'), 'utf8')
  const keys = [...source.matchAll(/^ {2}'(get|post|put|patch|delete) ([^']+)'/gm)].map((m) => [m[1] ?? '', m[2] ?? ''] as const)
  const stale = keys.filter(([method, path]) => document.paths[path]?.[method] !== undefined).map(([m, p]) => `${m} ${p}`)
  expect(stale, 'these routes exist now: delete their fallback entries').toEqual([])
})
