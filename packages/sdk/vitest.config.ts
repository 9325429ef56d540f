import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests build the server in-process; keep parallelism modest on shared machines.
    maxWorkers: 2,
    env: { DB: 'sqlite' },
  },
})
