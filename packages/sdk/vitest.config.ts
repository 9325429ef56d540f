import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests build the server in-process; keep parallelism modest on shared machines.
    maxWorkers: 2,
    env: { DB: 'sqlite' },
    // Hook tests call the real server on another origin; happy-dom would apply CORS.
    environmentOptions: { happyDOM: { url: 'http://localhost/', settings: { fetch: { disableSameOriginPolicy: true } } } },
  },
})
