// Writes NAME.gz beside every .js, .css and .html file under the given directories, for the
// server to send to clients that accept gzip (@fastify/static's `preCompressed`).
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'

const walk = (path) => (statSync(path).isDirectory() ? readdirSync(path).flatMap((name) => walk(join(path, name))) : [path])
for (const file of process.argv.slice(2).flatMap(walk)) {
  if (/\.(js|css|html)$/.test(file)) writeFileSync(`${file}.gz`, gzipSync(readFileSync(file), { level: 9 }))
}
