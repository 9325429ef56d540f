/**
 * Builds the server app in-process (in-memory SQLite, never listening) and renders its
 * OpenAPI document plus the TypeScript types generated from it. Used by the `generate`
 * script and by the test that fails when the committed files are stale.
 */
import openapiTS, { astToString } from 'openapi-typescript'
import { buildApp } from '../../../apps/server/src/app.js'
import { loadConfig } from '../../../apps/server/src/config.js'
import { openStorage } from '../../../apps/server/src/db/connect.js'
import { migrateToLatest } from '../../../apps/server/src/db/migrate.js'

export interface RenderedOpenApi {
  /** The document as written to packages/sdk/openapi.json. */
  json: string
  /** src/generated/openapi.d.ts */
  dts: string
  /**
   * src/generated/webhook-events.ts: the events a webhook may subscribe to, as the API
   * validates them, and the type of each delivery's body, from the document's `webhooks`.
   */
  events: string
  /** src/generated/settings.ts: the values a shop setting accepts where they are a list (`currency`). */
  settings: string
}

interface WebhookOperation {
  post?: {
    summary?: string
    requestBody?: { content?: Record<string, { schema?: { properties?: { event?: { const?: unknown; enum?: unknown[] } } } }> }
  }
}

interface EventsDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody?: {
          content?: Record<string, { schema?: { properties?: { events?: { items?: { anyOf?: Array<{ enum?: string[] }> } } } } }>
        }
      }
    >
  >
  webhooks?: Record<string, WebhookOperation>
}

/** `wishlist.product.back_in_stock` → `WishlistProductBackInStockEvent` */
function payloadTypeName(event: string): string {
  const pascal = event
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== '')
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('')
  return `${pascal}Event`
}

/**
 * One type per entry of the document's `webhooks` (each the JSON body of its POST, from the
 * generated `webhooks` interface), and their union, discriminated by `event`. Fails when an
 * entry's body does not name its event as a constant: the union would not discriminate.
 */
function renderPayloadTypes(webhooks: Record<string, WebhookOperation>): string {
  const names = Object.keys(webhooks)
  if (names.length === 0) throw new Error('the document has no webhooks section')
  const typeNames = new Map<string, string>()
  for (const name of names) {
    const event = webhooks[name]?.post?.requestBody?.content?.['application/json']?.schema?.properties?.event
    const constant = event?.const ?? (event?.enum?.length === 1 ? event.enum[0] : undefined)
    if (constant !== name) throw new Error(`webhook ${name}: its body's \`event\` is not the constant ${JSON.stringify(name)}`)
    const typeName = payloadTypeName(name)
    if ([...typeNames.values()].includes(typeName)) throw new Error(`webhook ${name}: type name ${typeName} is taken`)
    typeNames.set(name, typeName)
  }
  const aliases = names
    .map((name) => {
      const summary = webhooks[name]?.post?.summary
      return `/** The body of a \`${name}\` delivery${summary ? `: ${summary.replace(/\*\//g, '*\\/')}` : ''}. */
export type ${typeNames.get(name)} = Payload<${JSON.stringify(name)}>
`
    })
    .join('\n')
  return `
/** The JSON body of a delivery of webhook \`N\`, as the document's \`webhooks\` section describes it. */
type Payload<N extends keyof webhooks> = webhooks[N] extends { post: { requestBody: { content: { 'application/json': infer P } } } } ? P : never

${aliases}
/** Every event the service delivers (the subscribable ones and \`webhook.test\`), with the type of its body. */
export interface WebhookEventMap {
${names.map((name) => `  ${JSON.stringify(name)}: ${typeNames.get(name)}`).join('\n')}
}

/** The body of any webhook delivery, discriminated by \`event\` (\`switch (payload.event)\` narrows \`data\`). */
export type WebhookEvent = WebhookEventMap[keyof WebhookEventMap]
`
}

/**
 * The subscribable events, read from the document (the create-webhook body's `events`, which
 * the API validates against), each with its summary from the document's `webhooks` section.
 */
function renderEvents(document: EventsDocument): string {
  const items =
    document.paths['/v1/webhooks']?.post?.requestBody?.content?.['application/json']?.schema?.properties?.events?.items?.anyOf ?? []
  const names = items.flatMap((i) => i.enum ?? [])
  if (names.length === 0) throw new Error('the document lists no webhook events for POST /v1/webhooks')
  const events = names.map((name) => ({ name, summary: document.webhooks?.[name]?.post?.summary ?? name }))
  return `${HEADER}import type { webhooks } from './openapi.js'

/** Every event a webhook endpoint may subscribe to (\`POST /v1/webhooks\` validates against this list), with its summary. */
export const WEBHOOK_EVENTS = ${JSON.stringify(events, null, 2).replace(/"(name|summary)":/g, '$1:')} as const

export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number]['name']
${renderPayloadTypes(document.webhooks ?? {})}`
}

interface SettingsDocument {
  paths: Record<
    string,
    Record<string, { requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, { enum?: unknown[] }> } }> } }>
  >
}

/** The currency codes `PATCH /v1/admin/settings` accepts (its `currency` enum, null aside), for pickers. */
function renderSettings(document: SettingsDocument): string {
  const values =
    document.paths['/v1/admin/settings']?.patch?.requestBody?.content?.['application/json']?.schema?.properties?.currency?.enum ?? []
  const codes = values.filter((v): v is string => typeof v === 'string')
  if (codes.length === 0) throw new Error('the document lists no currency codes for PATCH /v1/admin/settings')
  return `${HEADER}/** Every ISO 4217 code the shop's \`currency\` setting accepts (\`PATCH /v1/admin/settings\` validates against this list; \`null\` clears it). */
export const CURRENCY_CODES = ${JSON.stringify(codes)} as const

export type CurrencyCode = (typeof CURRENCY_CODES)[number]
`
}

const HEADER = `/**
 * GENERATED by \`npm run generate -w packages/sdk\` from the server's OpenAPI document
 * (GET /v1/openapi.json, built from the same TypeBox schemas that validate requests).
 * Do not edit by hand; test/openapi-fresh.test.ts fails when this file is stale.
 */

`

/**
 * The document as a caller sees it: @fastify/swagger lists a query parameter whose schema
 * has a `default` as `required` (TypeBox puts it in the object's `required`), yet the
 * server fills it in when it is missing. Such parameters are optional for the caller.
 */
function callerView(document: Record<string, unknown>): unknown {
  const copy = structuredClone(document) as { paths?: Record<string, Record<string, { parameters?: unknown }>> }
  for (const item of Object.values(copy.paths ?? {})) {
    for (const op of Object.values(item)) {
      if (!Array.isArray(op.parameters)) continue
      for (const param of op.parameters as { in?: string; required?: boolean; schema?: { default?: unknown } }[]) {
        if (param.in === 'query' && param.schema?.default !== undefined) param.required = false
      }
    }
  }
  return copy
}

export async function renderOpenApi(): Promise<RenderedOpenApi> {
  // A fixed base URL and secrets keep the document independent of the local environment.
  const config = loadConfig({
    DATABASE_URL: 'sqlite::memory:',
    JWT_SECRET: 'openapi-generation-secret-not-used-for-anything',
    PUBLIC_BASE_URL: 'http://localhost:3000',
    // Shopify app mode on, so its routes (off unless configured) are part of the document.
    SHOPIFY_API_SECRET: 'openapi-generation-shopify-secret',
    SHOPIFY_API_KEY: 'openapi-generation-shopify-client-id',
  })
  const storage = openStorage(config.database)
  try {
    await migrateToLatest(storage)
    const app = await buildApp({ config, storage, logger: false })
    try {
      await app.ready()
      const res = await app.inject({ method: 'GET', url: '/v1/openapi.json' })
      if (res.statusCode !== 200) throw new Error(`GET /v1/openapi.json answered ${res.statusCode}`)
      const document = res.json() as Record<string, unknown>
      const json = `${JSON.stringify(document, null, 2)}\n`
      const ast = await openapiTS(callerView(document) as Parameters<typeof openapiTS>[0], {
        alphabetize: true,
        exportType: false,
        // A parameter with a default is still optional for the caller.
        defaultNonNullable: false,
      })
      return {
        json,
        dts: HEADER + astToString(ast),
        events: renderEvents(document as unknown as EventsDocument),
        settings: renderSettings(document as unknown as SettingsDocument),
      }
    } finally {
      await app.close()
    }
  } finally {
    await storage.destroy()
  }
}
