import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['**/*.e2e.ts'],
    exclude: ['node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One Chromium at a time: the machine is shared and the tests are short.
    fileParallelism: false,
    env: { DB: 'sqlite' },
  },
})
