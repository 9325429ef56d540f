import { defineConfig } from 'tsup'
import { LOCALES } from './src/strings.generated.js'

// Minified IIFEs served next to each other (the server at /widget.js, a theme app extension
// in its assets): the first script, `widget.js`, and the chunks it loads on use by URL
// relative to its own: `widget-review-form.js`, `widget-wishlist-page.js`, `widget-notify-form.js`, and one
// `widget-locale-<tag>.js` per language beyond English (the languages of the catalogue in
// the repository's strings/ folder).

export default defineConfig({
  entry: {
    widget: 'src/widget.ts',
    'widget-review-form': 'src/review-form.ts',
    'widget-wishlist-page': 'src/wishlist-page.ts',
    'widget-notify-form': 'src/notify-form.ts',
    ...Object.fromEntries(LOCALES.map((tag) => [`widget-locale-${tag}`, `src/locales/${tag}.ts`])),
  },
  format: ['iife'],
  outExtension: () => ({ js: '.js' }),
  minify: true,
  target: 'es2019',
  platform: 'browser',
  clean: true,
  sourcemap: false,
  dts: false,
})
