import { defineConfig } from 'tsup'

// One minified IIFE, served by the server at /widget.js.
export default defineConfig({
  entry: { widget: 'src/widget.ts' },
  format: ['iife'],
  outExtension: () => ({ js: '.js' }),
  minify: true,
  target: 'es2019',
  platform: 'browser',
  clean: true,
  sourcemap: false,
  dts: false,
})
