import { execFile, execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { isSupportedNode, nodeVersionProblem, SUPPORTED_NODE_RANGE } from '../../src/cli/node-version.js'

const BIN = fileURLToPath(new URL('../../bin/wishlist.js', import.meta.url))

/** The bin run as an installed command: its shebang (`env -S node …`) finds `node` on PATH. */
async function runBin(nodeDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(BIN, args, {
      env: { ...process.env, PATH: `${nodeDir}:${process.env.PATH ?? ''}`, DATABASE_URL: 'sqlite::memory:' },
    })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

/** An unsupported Node on this machine (the system Node of Debian-based CI machines is older), if any. */
function oldNode(): { dir: string; version: string } | undefined {
  for (const candidate of [process.env.OLD_NODE, '/usr/bin/node', '/usr/local/bin/node']) {
    if (candidate === undefined || !existsSync(candidate)) continue
    const version = execFileSync(candidate, ['--version']).toString().trim()
    if (!isSupportedNode(version)) return { dir: dirname(candidate), version }
  }
  return undefined
}

describe('the Node.js version check', () => {
  it('accepts exactly ^22.19.0 || >=24.11.0, the engines of both package.json files', () => {
    for (const pkg of ['../../package.json', '../../../../package.json']) {
      expect((JSON.parse(readFileSync(new URL(pkg, import.meta.url), 'utf8')) as { engines: { node: string } }).engines.node).toBe(
        SUPPORTED_NODE_RANGE,
      )
    }
    const edges: Record<string, boolean> = {
      'v20.20.2': false,
      '22.18.9': false,
      'v22.19.0': true,
      '22.23.3': true,
      '23.0.0': false,
      '23.11.0': false,
      '24.10.0': false,
      'v24.11.0': true,
      '24.21.0': true,
      '25.0.0': true,
    }
    for (const [version, supported] of Object.entries(edges)) expect([version, isSupportedNode(version)]).toEqual([version, supported])
    expect(nodeVersionProblem('v23.11.0')).toBe('wishlist needs Node.js 22.19+ or 24.11+ (found v23.11.0)')
    expect(nodeVersionProblem(process.version)).toBeUndefined()
  })

  const old = oldNode()
  it.skipIf(old === undefined)(
    `on an older Node (${old?.version ?? 'none on this machine'}) the command says so and exits 1, with no stack trace`,
    async () => {
      for (const args of [['--help'], ['serve']]) {
        const result = await runBin(old!.dir, ...args)
        expect(result).toEqual({ code: 1, stdout: '', stderr: `wishlist needs Node.js 22.19+ or 24.11+ (found ${old!.version})\n` })
      }
    },
  )

  it(`on this Node (${process.version}) the command runs`, async () => {
    const result = await runBin(dirname(process.execPath), '--help')
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^Usage: wishlist <command>/)
    expect(result.stderr).toBe('')
  })
})
