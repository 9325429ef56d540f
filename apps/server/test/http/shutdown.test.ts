import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_JWT_SECRET } from '../helpers/app.js'
import { freshDatabase, type TestDatabase } from '../helpers/db.js'

const dir = mkdtempSync(join(tmpdir(), 'wishlist-shutdown-'))
let database: TestDatabase

beforeAll(async () => {
  database = await freshDatabase({ sqliteFile: join(dir, 'shutdown.db') })
})
afterAll(async () => {
  await database.drop()
  rmSync(dir, { recursive: true, force: true })
})

describe('graceful shutdown', () => {
  it('on SIGTERM finishes the in-flight request, refuses new connections and exits 0', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/cli-entry.ts', 'serve'], {
      env: { ...process.env, DATABASE_URL: database.url, JWT_SECRET: TEST_JWT_SECRET, PORT: '0', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const port = await new Promise<number>((resolve, reject) => {
      let out = ''
      child.stderr.on('data', (chunk: Buffer) => {
        out += chunk.toString()
      })
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString()
        const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
        if (m) resolve(Number(m[1]))
      })
      child.on('exit', () => reject(new Error(`server exited early: ${out}`)))
    })

    // A request whose body is still arriving when SIGTERM comes.
    const body = JSON.stringify({ api_key: 'ak_none', api_secret: 'sk_none' })
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    let response = ''
    socket.on('data', (chunk) => {
      response += chunk.toString()
    })
    const socketClosed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
    socket.write(`POST /v1/auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`)
    await new Promise((r) => setTimeout(r, 200))

    child.kill('SIGTERM')
    await new Promise((r) => setTimeout(r, 300))

    // New connections are no longer accepted.
    const refused = await new Promise<boolean>((resolve) => {
      const probe = connect(port, '127.0.0.1')
      probe.once('connect', () => {
        probe.destroy()
        resolve(false)
      })
      probe.once('error', () => resolve(true))
    })
    expect(refused).toBe(true)

    // write, not end: a half-closed client socket is dropped by Node while the server closes
    socket.write(body.slice(10))
    await socketClosed
    expect(response).toMatch(/^HTTP\/1\.1 401 /)
    expect(response).toContain('INVALID_CREDENTIALS')
    expect(await exited).toBe(0)
  })
})
