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
/** Every folder of modules/, so a new module is under the rules from its first file. */
const MODULES = readdirSync(`${import.meta.dirname}/${src}/modules`, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name)
/** What a module offers the others beyond its `*.service.ts` (the services in `app.services`), `*.types.ts` and `*.schemas.ts`. */
const PUBLIC = {
  analytics: ['facts.ts', 'conversions.ts'],
  events: ['outbox.ts', 'product-fan-out.ts'],
  reviews: ['purchases.ts', 'review-page.ts'],
  shops: ['plans.ts'],
  webhooks: ['customer-erasure.ts'],
  wishlists: ['wishlists.repo.ts'],
}
// Known crossings of the layers, being moved; delete each line once nothing needs it.
const KNOWN = {
  // plugins/auth.ts and rate-limit.ts call the auth and shops services and read their types.
  pluginsFromModules: ['./auth/auth.service.ts', './auth/auth.types.ts', './shops/shops.service.ts', './shops/shops.types.ts', './shops/plans.ts'],
  // The auth plugin's request helpers (bearerToken, clientAddress, guestIdOf) and the proxy
  // hook's types, used by routes.
  modulesFromPlugins: ['./auth.ts'],
  modulesFromCli: [],
  // Per module, files beyond its public ones: modules/shops/shops.service.ts creates a
  // shop's first key with modules/auth's repo.
  auth: ['api-keys.repo.ts'],
}

export default defineConfig(
  { ignores: ['**/dist/**', '**/node_modules/**', 'extensions/wishlist/assets/widget*.js', '**/generated/**', 'apps/server/bench/data/**', 'e2e/screenshots/**'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver({ noWarnOnMultipleProjects: true, project: ['apps/*/tsconfig.json', 'packages/*/tsconfig.json', 'e2e/tsconfig.json'] })],
    },
    rules: {
      'import-x/no-cycle': 'error',
      // `_`-prefixed names are deliberately unused (arguments kept for a signature, rest siblings).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  { files: ['packages/widget/src/**', 'packages/sdk/src/**', 'apps/dashboard/src/**', 'apps/demo/src/**'], languageOptions: { globals: { ...globals.browser } } },
  {
    files: ['**/*.tsx', 'packages/sdk/src/react/**'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
  {
    files: [`${src}/**/*.ts`],
    rules: {
      'import-x/no-restricted-paths': ['error', {
        basePath: import.meta.dirname,
        zones: [
          { target: [`${src}/lib`, `${src}/db`], from: [`${src}/modules`, `${src}/plugins`, `${src}/cli`, `${src}/app.ts`, `${src}/server.ts`], message: 'lib/ and db/ are the bottom layers.' },
          { target: `${src}/plugins`, from: `${src}/modules`, except: KNOWN.pluginsFromModules, message: 'plugins/ must not import modules/.' },
          { target: `${src}/modules`, from: `${src}/plugins`, except: KNOWN.modulesFromPlugins, message: 'modules/ must not import plugins/.' },
          { target: `${src}/modules`, from: `${src}/cli`, except: KNOWN.modulesFromCli, message: 'modules/ must not import cli/.' },
          { target: [`${src}/plugins`, `${src}/modules`], from: [`${src}/app.ts`, `${src}/server.ts`], message: 'only the entry points import app.ts and server.ts.' },
          { target: `${src}/plugins`, from: `${src}/cli`, message: 'plugins/ must not import cli/.' },
          ...MODULES.map((m) => {
            const dir = `${import.meta.dirname}/${src}/modules/${m}`
            const open = ['*.service.ts', '*.types.ts', '*.schemas.ts', ...(PUBLIC[m] ?? []), ...(KNOWN[m] ?? [])]
            return {
              target: MODULES.filter((o) => o !== m).map((o) => `${src}/modules/${o}`),
              from: `${dir}/**`,
              except: [`${dir}/{${open.join(',')}}`],
              message: `other modules reach modules/${m} only through its services, types, schemas and the files docs/architecture.md names.`,
            }
          }),
        ],
      }],
    },
  },
)
