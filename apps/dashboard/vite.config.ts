import { defineConfig } from 'vite'

// Served by the server at /dashboard (apps/server/src/modules/dashboard). Hashed file names
// under /dashboard/assets/ are cached for a year; index.html is revalidated on every load.
// `npm run dev -w apps/dashboard` proxies the API to a server on 127.0.0.1:3000.
export default defineConfig({
  base: '/dashboard/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2020',
    assetsDir: 'assets',
    // No inline <script> or data: URLs in the output: the server sends a strict CSP.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  server: {
    proxy: { '/v1': 'http://127.0.0.1:3000', '/api': 'http://127.0.0.1:3000' },
  },
})
