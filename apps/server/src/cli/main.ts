/**
 * `wishlist` command line (docs/cli.md). Every command reads DATABASE_URL like the
 * server and applies pending migrations first.
 */
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig, parseDatabaseUrl } from '../config.js'
import { openStorage, type Storage } from '../db/connect.js'
import { migrateToLatest } from '../db/migrate.js'
import { RefusalError } from '../db/refusal.js'
import { backupDatabase, restoreDatabase } from '../db/sqlite-maintenance.js'
import { moveDatabase, type MoveOptions } from '../db/transfer.js'
import type { KeyScope, Plan } from '../db/schema.js'
import { AppError } from '../lib/errors.js'
import { isCurrencyCode } from '../lib/money.js'
import { normalizePlatformId, platformIdRule } from '../lib/platform-ids.js'
import { configuredPlatforms, createServices, type Services } from '../app.js'
import { isPlan, PLANS } from '../modules/shops/plans.js'
import { SETTING_NAMES, type ShopSettings } from '../modules/shops/shops.types.js'
import { platformOf } from '../platforms/platform.js'
import { shopErasureRepo } from '../platforms/shopify/shop-erasure.repo.js'
import { runServer } from '../server.js'
import { ensureDemoShop, printDemoBanner } from './demo.js'

const USAGE = `Usage: wishlist <command>

  serve [--demo]                          start the HTTP server (PORT, HOST, DATABASE_URL…);
                                          --demo also creates the demo shop and serves /demo
  migrate                                 apply pending database migrations
  shops create --domain D --plan P [--json]
  shops set-plan --domain D --plan P [--force]
                                          (--force: a shop billed by its platform, e.g. Shopify Billing)
  shops settings --domain D --set key=value [key=value…]
  shops erase --domain D --force          delete the shop and every row it owns, print the counts (JSON)
  keys create --domain D [--scope admin|customer] [--json]
  customers export --domain D --customer C [--email E]
                                          print everything held about the customer (JSON)
  customers erase --domain D --customer C [--email E]
                                          erase the customer, print the erased counts (JSON)
  demo                                    create the demo shop with sample data, print its credentials
  backup --to FILE                        SQLite: an online, checked copy of the database (JSON summary)
  restore --from FILE                     SQLite: replace the database with a backup (server stopped)
  move --to URL [--force]                 copy every row from DATABASE_URL into the empty database
                                          URL (sqlite:PATH or postgres://…), verified table by table

Plans: ${PLANS.join(', ')}. Settings: ${SETTING_NAMES.join(', ')}.`

class UsageError extends Error {}

/** Where a command writes and what environment it reads: the process's, or a test's (in process). */
export interface CliIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
  env: NodeJS.ProcessEnv
  /** `move`: called once a table is committed on the target (tests interrupt a move here). */
  afterTableMoved?: MoveOptions['afterTable']
}

const processIo: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env }

async function withEnvServices<T>(env: NodeJS.ProcessEnv, fn: (services: Services, storage: Storage) => Promise<T>): Promise<T> {
  const config = loadConfig(env)
  const storage = openStorage(config.database)
  try {
    await migrateToLatest(storage)
    return await fn(createServices({ config, storage }), storage)
  } finally {
    await storage.destroy()
  }
}

function requireOption(values: Record<string, unknown>, name: string): string {
  const v = values[name]
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`)
  return v
}

function requirePlanOption(values: Record<string, unknown>): Plan {
  const plan = requireOption(values, 'plan')
  if (!isPlan(plan)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`)
  return plan
}

/** The integer settings besides share_link_ttl_days, with their ranges (as PATCH /v1/admin/settings checks them). */
const INTEGER_SETTINGS: Record<string, [number, number]> = {
  attribution_window_days: [1, 90],
  notification_cooldown_hours: [1, 720],
  notifications_per_day: [1, 50],
  reminder_after_days: [1, 90],
}

export function parseSettings(pairs: string[]): Partial<ShopSettings> {
  const patch: Record<string, boolean | number | string | null> = {}
  for (const pair of pairs) {
    const eq = pair.indexOf('=')
    const key = eq > 0 ? pair.slice(0, eq) : ''
    const value = pair.slice(eq + 1)
    if (!(SETTING_NAMES as readonly string[]).includes(key))
      throw new UsageError(`unknown setting "${key || pair}"; known: ${SETTING_NAMES.join(', ')}`)
    if (key === 'share_link_ttl_days') {
      const n = Number(value)
      if (!Number.isInteger(n) || n < 1 || n > 365) throw new UsageError('share_link_ttl_days must be an integer from 1 to 365')
      patch[key] = n
    } else if (key in INTEGER_SETTINGS) {
      const [min, max] = INTEGER_SETTINGS[key] as [number, number]
      const n = Number(value)
      if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${key} must be an integer from ${min} to ${max}`)
      patch[key] = n
    } else if (key === 'currency') {
      // `currency=null` (or `currency=`) clears it.
      if (value !== 'null' && value !== '' && !isCurrencyCode(value))
        throw new UsageError('currency must be an ISO 4217 code (three capital letters, such as EUR), or null')
      patch[key] = value === 'null' || value === '' ? null : value
    } else {
      if (value !== 'true' && value !== 'false') throw new UsageError(`${key} must be true or false`)
      patch[key] = value === 'true'
    }
  }
  if (Object.keys(patch).length === 0) throw new UsageError('--set needs at least one key=value')
  return patch as Partial<ShopSettings>
}

async function shopByDomain(services: Services, domain: string) {
  const shop = await services.shops.byDomain(domain)
  if (!shop) throw new UsageError(`no shop with domain ${domain}`)
  return shop
}

function requireCustomerOption(values: Record<string, unknown>): string {
  const id = normalizePlatformId(requireOption(values, 'customer'), 'Customer')
  if (id === null) throw new UsageError(`--customer ${platformIdRule('Customer')}`)
  return id
}

const shopIdByDomain = async (services: Services, domain: string): Promise<string> => (await shopByDomain(services, domain)).id

async function run(argv: string[], io: CliIo): Promise<number> {
  const out = (line: string) => void io.stdout.write(`${line}\n`)
  const withServices = <T>(fn: (services: Services, storage: Storage) => Promise<T>) => withEnvServices(io.env, fn)
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      domain: { type: 'string' },
      plan: { type: 'string' },
      scope: { type: 'string' },
      set: { type: 'string', multiple: true },
      customer: { type: 'string' },
      email: { type: 'string' },
      to: { type: 'string' },
      from: { type: 'string' },
      force: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      demo: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  const [command, sub, ...rest] = positionals
  if (values.help || command === undefined || command === 'help') {
    out(USAGE)
    return command === undefined && !values.help ? 1 : 0
  }

  switch (`${command}${sub ? ` ${sub}` : ''}`) {
    case 'serve': {
      const config = loadConfig(io.env)
      let banner: (() => void) | undefined
      if (values.demo) {
        const demo = await withServices((services, storage) => ensureDemoShop(services, storage, config))
        banner = () => printDemoBanner(demo, config.publicBaseUrl, io.stdout)
      }
      await runServer(
        config,
        (address) => {
          out(
            `wishlist service listening on ${address} (${config.database.kind === 'sqlite' ? `SQLite ${config.database.file}` : 'PostgreSQL'})`,
          )
          banner?.()
        },
        { demo: values.demo },
      )
      return 0
    }
    case 'migrate': {
      const applied = await withServices(async (_s, storage) => migrateToLatest(storage))
      out(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date')
      return 0
    }
    case 'shops create': {
      const domain = requireOption(values, 'domain')
      const plan = requirePlanOption(values)
      const created = await withServices((s) => s.shops.create({ domain, plan }))
      if (values.json) {
        out(
          JSON.stringify({
            shop: { id: created.shop.id, domain: created.shop.domain, plan: created.shop.plan },
            storefrontKey: created.shop.storefrontKey,
            apiKey: { keyId: created.apiKey.keyId, secret: created.apiKey.secret },
          }),
        )
      } else {
        out(`shop ${created.shop.id} created: ${created.shop.domain} (plan ${created.shop.plan})`)
        out(`storefront key: ${created.shop.storefrontKey}`)
        out(`admin API key:  ${created.apiKey.keyId}`)
        out(`secret:         ${created.apiKey.secret}   (shown once)`)
      }
      return 0
    }
    case 'shops set-plan': {
      const domain = requireOption(values, 'domain')
      const plan = requirePlanOption(values)
      const billedBy = platformOf(configuredPlatforms(loadConfig(io.env)), domain)?.plansBilledBy
      if (billedBy !== undefined && !values.force)
        throw new UsageError(
          `${domain} is charged for its plan through ${billedBy}: the merchant chooses the plan in the app, and the plan follows what they approved; add --force to set it here anyway`,
        )
      await withServices(async (s) => s.shops.setPlan(await shopIdByDomain(s, domain), plan))
      out(`${domain}: plan ${plan}`)
      return 0
    }
    case 'shops settings': {
      const domain = requireOption(values, 'domain')
      const patch = parseSettings([...(values.set ?? []), ...rest])
      const shop = await withServices(async (s) => s.shops.updateSettings(await shopIdByDomain(s, domain), patch))
      out(JSON.stringify(shop.settings))
      return 0
    }
    // A platform's shop erasure done by hand (Shopify's shop/redact, when the service ignored it).
    case 'shops erase': {
      const domain = requireOption(values, 'domain')
      if (!values.force) throw new UsageError('shops erase deletes the shop and all its data: add --force')
      const counts = await withServices(async (s, storage) => {
        const shop = await shopByDomain(s, domain)
        const erased = await shopErasureRepo.erase(storage.db, shop.id)
        s.shops.forget(shop)
        return erased
      })
      out(JSON.stringify(counts))
      return 0
    }
    case 'keys create': {
      const domain = requireOption(values, 'domain')
      const scope = (values.scope ?? 'admin') as KeyScope
      if (scope !== 'admin' && scope !== 'customer') throw new UsageError('--scope must be admin or customer')
      const key = await withServices(async (s) => s.shops.createApiKey(await shopIdByDomain(s, domain), { scope }))
      if (values.json) out(JSON.stringify({ keyId: key.keyId, secret: key.secret, scope: key.scope }))
      else out(`API key ${key.keyId} (${key.scope})\nsecret: ${key.secret}   (shown once)`)
      return 0
    }
    // Platform data-request / redact notifications (docs/api.md, "Privacy and export").
    case 'customers export':
    case 'customers erase': {
      const domain = requireOption(values, 'domain')
      const request = { customerId: requireCustomerOption(values), email: values.email }
      const exporting = sub === 'export'
      const result = await withServices(async (s) => {
        const ctx = { shop: await shopByDomain(s, domain) }
        return exporting ? s.privacy.exportCustomer(ctx, request) : s.privacy.eraseCustomer(ctx, request)
      })
      out(exporting ? JSON.stringify(result, null, 2) : JSON.stringify(result))
      return 0
    }
    case 'demo': {
      const config = loadConfig(io.env)
      const demo = await withServices((services, storage) => ensureDemoShop(services, storage, config))
      printDemoBanner(demo, config.publicBaseUrl, io.stdout, { serving: false })
      return 0
    }
    // Backups and moving up (docs/operations.md): each refusal is a RefusalError, exit 1.
    // Only DATABASE_URL matters to them (no JWT key is read or created).
    case 'backup': {
      const summary = await backupDatabase(parseDatabaseUrl(io.env.DATABASE_URL), requireOption(values, 'to'))
      out(JSON.stringify(summary))
      return 0
    }
    case 'restore': {
      const summary = await restoreDatabase(parseDatabaseUrl(io.env.DATABASE_URL), requireOption(values, 'from'))
      out(JSON.stringify(summary))
      return 0
    }
    case 'move': {
      const to = parseDatabaseUrl(requireOption(values, 'to'))
      const report = await moveDatabase({
        source: parseDatabaseUrl(io.env.DATABASE_URL),
        target: to,
        force: values.force,
        afterTable: io.afterTableMoved,
      })
      out(JSON.stringify({ tables: report.tables, seconds: report.seconds }))
      if (report.differences.length) {
        io.stderr.write(
          `wishlist: the copy differs from the source: ${report.differences.join('; ')}; do not switch over: find the cause, then rerun with --force\n`,
        )
        return 1
      }
      return 0
    }
    default:
      throw new UsageError(`unknown command "${positionals.join(' ')}"`)
  }
}

/** Exit code 0 on success, 1 on errors (message on stderr), 2 on usage errors. */
export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  try {
    return await run(argv, io)
  } catch (err) {
    if (err instanceof UsageError || (err instanceof TypeError && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))) {
      io.stderr.write(`wishlist: ${err.message}\n\n${USAGE}\n`)
      return 2
    }
    if (err instanceof AppError || err instanceof ConfigError || err instanceof RefusalError) {
      io.stderr.write(`wishlist: ${err.message}\n`)
      return 1
    }
    throw err
  }
}
