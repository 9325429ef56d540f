import { defineConfig } from 'tsup'

// Pre-bundled (React included) so the server can serve it without a dev server.
export default defineConfig({
  entry: { app: 'src/main.tsx' },
  format: ['iife'],
  outExtension: () => ({ js: '.js' }),
  platform: 'browser',
  target: 'es2020',
  minify: true,
  clean: true,
  noExternal: [/.*/],
  env: { NODE_ENV: 'production' },
  dts: false,
})
