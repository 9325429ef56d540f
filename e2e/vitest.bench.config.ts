import { defineConfig } from 'vitest/config'

// Measurements in a browser, run on demand (`npm run bench:storefront-impact`), never by `npm test`.
export default defineConfig({
  test: {
    include: ['bench/**/*.ts'],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    env: { DB: 'sqlite' },
  },
})
