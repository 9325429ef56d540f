// After the build: dist/widget-VERSION.min.js (the same minified file under a name that
// never changes content, for a CDN) and dist/sri.json with its Subresource Integrity hash,
// for `<script src=… integrity=… crossorigin="anonymous">`.
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const { version } = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'))
const code = readFileSync(resolve(root, 'dist/widget.js'))
const file = `widget-${version}.min.js`
const integrity = `sha384-${createHash('sha384').update(code).digest('base64')}`
writeFileSync(resolve(root, 'dist', file), code)
writeFileSync(resolve(root, 'dist/sri.json'), `${JSON.stringify({ file, version, integrity }, null, 2)}\n`)
process.stdout.write(`${file} ${integrity}\n`)
