/**
 * Where the built browser files the server serves are: the widget (/widget.js), the
 * merchant dashboard (/dashboard) and the demo storefront (/demo). In the repository they
 * are the workspaces' build outputs; in the published package (`npm pack` copies them with
 * scripts/pack-assets.mjs) they sit under the package's own assets/.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

// src/lib and dist/lib sit at the same depth below the package root (apps/server), so this
// resolves in development (tsx), after `npm run build` and in an installed package.
const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const REPO_ROOT = resolve(PACKAGE_ROOT, '../..')
/** The published package carries no tsconfig.json; the repository's server folder does. */
const IN_REPOSITORY = existsSync(resolve(PACKAGE_ROOT, 'tsconfig.json'))

export const ASSETS = IN_REPOSITORY
  ? {
      widgetFile: resolve(REPO_ROOT, 'packages/widget/dist/widget.js'),
      dashboardDir: resolve(REPO_ROOT, 'apps/dashboard/dist'),
      demoHtml: resolve(REPO_ROOT, 'apps/demo/index.html'),
      demoApp: resolve(REPO_ROOT, 'apps/demo/dist/app.js'),
    }
  : {
      widgetFile: resolve(PACKAGE_ROOT, 'assets/widget/widget.js'),
      dashboardDir: resolve(PACKAGE_ROOT, 'assets/dashboard'),
      demoHtml: resolve(PACKAGE_ROOT, 'assets/demo/index.html'),
      demoApp: resolve(PACKAGE_ROOT, 'assets/demo/app.js'),
    }

/** The server package's version (its package.json): the OpenAPI document's `info.version`. */
export const SERVER_VERSION = (JSON.parse(readFileSync(resolve(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version
