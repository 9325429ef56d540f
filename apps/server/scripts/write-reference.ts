/** `npm run docs:reference -w apps/server`: writes docs/reference.md from the served OpenAPI document. */
import { writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { renderReference } from './openapi-reference.js'
import { servedDocument } from './served-document.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const markdown = renderReference(JSON.parse(await servedDocument()))
writeFileSync(resolve(root, 'docs/reference.md'), markdown)
process.stdout.write(`wrote docs/reference.md (${markdown.length} B)\n`)
