// `npm run lint`: the recommended rules of ESLint and typescript-eslint, no import cycles,
// and the server's boundaries as docs/architecture.md ("Boundaries") states them.
import { readdirSync } from 'node:fs'
import js from '@eslint/js'
import { defineConfig } from 'eslint/config'
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript'
import importX from 'eslint-plugin-import-x'
import reactHooks from 'eslint-plugin-react-hooks'
import globals from 'globals'
import tseslint from 'typescript-eslint'

const src = 'apps/server/src'
/** The folders of `dir` under src/, so a new module or platform is under the rules from its first file. */
const folders = (dir) =>
  readdirSync(`${import.meta.dirname}/${src}/${dir}`, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
const MODULES = folders('modules')
/** The platforms (platforms/<name>/); platforms/platform.ts beside them is the contract generic code may import. */
const PLATFORMS = folders('platforms')
/** What a module offers the others beyond its `*.service.ts` (the services in `app.services`), `*.types.ts` and `*.schemas.ts`. */
const PUBLIC = {
  analytics: ['facts.ts', 'conversions.ts'],
  events: ['outbox.ts', 'product-fan-out.ts'],
  notifications: ['flow.ts', 'notify.ts', 'contacts.ts', 'channel.ts', 'customer-erasure.ts'],
  reviews: ['purchases.ts', 'review-page.ts'],
  shops: ['plans.ts'],
  webhooks: ['customer-erasure.ts'],
  wishlists: ['wishlists.repo.ts'],
}
// Known crossings of the layers, being moved; delete each line once nothing needs it.
const KNOWN = {
  // plugins/auth.ts and rate-limit.ts call the auth and shops services and read their types.
  pluginsFromModules: [
    './auth/auth.service.ts',
    './auth/auth.types.ts',
    './shops/shops.service.ts',
    './shops/shops.types.ts',
    './shops/plans.ts',
  ],
  // The auth plugin's request helpers (bearerToken, clientAddress), used by routes.
  modulesFromPlugins: ['./auth.ts'],
  // The auth plugin's helpers (guestIdOf, header) and the signed proxy's types (ProxyAuth,
  // ResolvedAuth), used by platforms/shopify.
  platformsFromPlugins: ['./auth.ts'],
  modulesFromCli: [],
  // Per module, files beyond its public ones: modules/shops/shops.service.ts creates a
  // shop's first key with modules/auth's repo.
  auth: ['api-keys.repo.ts'],
}

export default defineConfig(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'extensions/wishlist/assets/widget*.js',
      '**/generated/**',
      'apps/server/bench/data/**',
      'e2e/screenshots/**',
      // Written by `next build` / `next typegen` in the Next.js example.
      'examples/*/.next/**',
      'examples/*/next-env.d.ts',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [
        createTypeScriptImportResolver({
          noWarnOnMultipleProjects: true,
          project: ['apps/*/tsconfig.json', 'packages/*/tsconfig.json', 'e2e/tsconfig.json', 'examples/*/tsconfig.json'],
        }),
      ],
    },
    rules: {
      'import-x/no-cycle': 'error',
      // `_`-prefixed names are deliberately unused (arguments kept for a signature, rest siblings).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    files: ['packages/widget/src/**', 'packages/sdk/src/**', 'apps/dashboard/src/**', 'apps/demo/src/**', 'e2e/fixtures/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/*.tsx', 'packages/sdk/src/react/**'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
  {
    files: [`${src}/**/*.ts`],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          basePath: import.meta.dirname,
          zones: [
            {
              target: [`${src}/lib`, `${src}/db`],
              from: [`${src}/modules`, `${src}/plugins`, `${src}/platforms`, `${src}/cli`, `${src}/app.ts`, `${src}/server.ts`],
              message: 'lib/ and db/ are the bottom layers.',
            },
            {
              target: `${src}/plugins`,
              from: `${src}/modules`,
              except: KNOWN.pluginsFromModules,
              message: 'plugins/ must not import modules/.',
            },
            {
              target: `${src}/modules`,
              from: `${src}/plugins`,
              except: KNOWN.modulesFromPlugins,
              message: 'modules/ must not import plugins/.',
            },
            { target: `${src}/modules`, from: `${src}/cli`, except: KNOWN.modulesFromCli, message: 'modules/ must not import cli/.' },
            {
              target: [`${src}/plugins`, `${src}/modules`, `${src}/platforms`],
              from: [`${src}/app.ts`, `${src}/server.ts`],
              message: 'only the entry points import app.ts and server.ts.',
            },
            {
              target: [`${src}/plugins`, `${src}/platforms`],
              from: `${src}/cli`,
              message: 'plugins/ and platforms/ must not import cli/.',
            },
            {
              target: [`${src}/plugins`, `${src}/modules`],
              from: `${src}/platforms`,
              except: ['./platform.ts'],
              message:
                "generic code imports only the platform contract (platforms/platform.ts); only the entry points import a platform's folder.",
            },
            {
              target: `${src}/platforms`,
              from: `${src}/plugins`,
              except: KNOWN.platformsFromPlugins,
              message: 'platforms/ must not import plugins/.',
            },
            ...PLATFORMS.map((p) => ({
              target: [`${src}/platforms/platform.ts`, ...PLATFORMS.filter((o) => o !== p).map((o) => `${src}/platforms/${o}`)],
              from: `${src}/platforms/${p}`,
              message: `nothing but the entry points imports platforms/${p}/: not the contract, not another platform.`,
            })),
            ...MODULES.map((m) => {
              const dir = `${import.meta.dirname}/${src}/modules/${m}`
              const open = ['*.service.ts', '*.types.ts', '*.schemas.ts', ...(PUBLIC[m] ?? []), ...(KNOWN[m] ?? [])]
              return {
                target: [...MODULES.filter((o) => o !== m).map((o) => `${src}/modules/${o}`), `${src}/platforms`],
                from: `${dir}/**`,
                except: [`${dir}/{${open.join(',')}}`],
                message: `other modules and the platforms reach modules/${m} only through its services, types, schemas and the files docs/architecture.md names.`,
              }
            }),
          ],
        },
      ],
    },
  },
)
