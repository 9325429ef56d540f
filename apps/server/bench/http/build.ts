import { spawnSync } from 'node:child_process'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const serverDir = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/** Compiles src/ to dist/ (`npm run build`): the benches run the service as deployed. */
export function buildServer(): void {
  const tsc = join(serverDir, '../../node_modules/typescript/bin/tsc')
  const build = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: serverDir, stdio: 'inherit' })
  if (build.status !== 0) throw new Error('building the server (tsc -p tsconfig.build.json) failed')
}
