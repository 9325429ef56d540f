#!/usr/bin/env -S node --max-semi-space-size=16
// The compiled CLI; `npm install` at the repository root builds it (root `prepare`).
// The Node version is checked before the CLI is imported: on an older Node that import fails.
import { nodeVersionProblem } from '../dist/cli/node-version.js'

const problem = nodeVersionProblem(process.version)
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`)
  process.exitCode = 1
} else {
  const { main } = await import('../dist/cli/main.js')
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code
    },
    (err) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
      process.exitCode = 1
    },
  )
}
