import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll waits as long as a Playwright locator does (page.setDefaultTimeout(10_000)), not
    // vitest's 1 s: a page that loads 13 pages of items on a busy machine is slow, not wrong.
    expect: { poll: { timeout: 10_000 } },
    // One Chromium at a time: the machine is shared and the tests are short.
    fileParallelism: false,
    projects: [
      { extends: true, test: { name: 'sqlite', include: ['**/*.e2e.ts'], exclude: ['node_modules/**'], env: { DB: 'sqlite' } } },
      // The browser tests whose pages read and write the service's storage, again on PostgreSQL.
      { extends: true, test: { name: 'postgres', include: ['storefront-pages.e2e.ts'], env: { DB: 'postgres' } } },
    ],
  },
})
