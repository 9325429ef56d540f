#!/usr/bin/env -S node --max-semi-space-size=16
// The compiled CLI; `npm install` at the repository root builds it (root `prepare`).
import { main } from '../dist/cli/main.js'

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code },
  (err) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
    process.exitCode = 1
  }
)
