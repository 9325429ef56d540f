import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { SERVICE_NODE_FLAGS } from '../../src/cli/node-flags.js'

test("the wishlist bin starts node with the service's V8 flags (the ones tests and the bench use)", () => {
  const shebang = readFileSync(new URL('../../bin/wishlist.js', import.meta.url), 'utf8').split('\n')[0]
  expect(shebang).toBe(`#!/usr/bin/env -S node ${SERVICE_NODE_FLAGS.join(' ')}`)
})
