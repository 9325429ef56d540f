/**
 * The process's log destination (lib/log-sink.ts), in a child process writing to a pipe as
 * a container's standard output is: lines batched into ~16 KiB writes must all arrive, in
 * order, whether the batch fills, the process exits with a batch half full, or nothing more
 * is logged (the periodic flush).
 */
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href
const SINK = pathToFileURL(fileURLToPath(new URL('../../src/lib/log-sink.ts', import.meta.url))).href

/** Runs `body` in a child with `sink` = stdoutSink(); resolves with its output once `lines` lines have arrived (or it ended). */
function childOutput(body: string, lines: number): Promise<{ out: string; exited: Promise<number | null>; kill: () => void }> {
  const child = spawn(
    process.execPath,
    ['--import', TSX, '--input-type=module', '-e', `import { stdoutSink } from '${SINK}'\nconst sink = stdoutSink()\n${body}`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  let out = ''
  const kill = () => child.kill('SIGKILL')
  return new Promise((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.split('\n').length > lines) resolve({ out, exited, kill })
    })
    child.stdout.on('end', () => resolve({ out, exited, kill }))
  })
}

const line = (i: number) => `{"n":${i},"text":"${'x'.repeat(i % 200)}"}\n`

describe('stdoutSink', () => {
  it('writes every line in order when the process exits with a batch half full', async () => {
    const { out, exited } = await childOutput(
      'for (let i = 0; i < 1000; i++) sink.write(`{"n":${i},"text":"${\'x\'.repeat(i % 200)}"}\\n`)\nprocess.exit(0)',
      1000,
    )
    expect(await exited).toBe(0)
    expect(out).toBe(Array.from({ length: 1000 }, (_, i) => line(i)).join(''))
  })

  it('writes a few lines within the periodic flush though no batch fills', async () => {
    const { out, exited, kill } = await childOutput(`sink.write('{"a":1}\\n'); sink.write('{"b":2}\\n'); setTimeout(() => {}, 30_000)`, 2)
    kill()
    await exited
    expect(out).toBe('{"a":1}\n{"b":2}\n')
  })
})
