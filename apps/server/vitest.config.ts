import { defineConfig } from 'vitest/config'

// The HTTP suite runs twice, once per storage backend (DB=sqlite, DB=postgres); pure
// logic runs once.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    // Two files at a time (Vitest's default on a 2-core machine is one): most of a file's time is
    // spent waiting on the database, Redis or a child process, not on this process's CPU.
    maxWorkers: 2,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      // data-safety.test.ts uses both backends itself (SQLite files and a PostgreSQL schema): once, in the postgres project.
      {
        extends: true,
        test: { name: 'sqlite', include: ['test/http/**/*.test.ts'], exclude: ['test/http/data-safety.test.ts'], env: { DB: 'sqlite' } },
      },
      { extends: true, test: { name: 'postgres', include: ['test/http/**/*.test.ts'], env: { DB: 'postgres' } } },
      // The storage-heavy files again on SQLite with group commit off (SQLITE_GROUP_COMMIT=false).
      {
        extends: true,
        test: {
          name: 'sqlite-autocommit',
          include: ['test/http/wishlist-*.test.ts', 'test/http/events.test.ts'],
          env: { DB: 'sqlite', SQLITE_GROUP_COMMIT: 'false' },
        },
      },
      // Fault tests that pick their own databases (a private PostgreSQL cluster): run once.
      { extends: true, test: { name: 'faults', include: ['test/faults/**/*.test.ts'] } },
    ],
  },
})
