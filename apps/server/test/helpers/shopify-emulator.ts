/**
 * Shopify, played locally for the tests (docs/shopify.md, "The local Shopify emulator"): a
 * real HTTP server on 127.0.0.1 that the service reaches through SHOPIFY_API_EMULATOR_URL
 * (`https://{shop}/admin/…` becomes `{url}/{shop}/admin/…`). It refuses what Shopify refuses:
 *
 * - the token endpoint (`POST /{shop}/admin/oauth/access_token`, JSON or form): the app's
 *   client id and secret; a token exchange whose subject token is a valid HS256 session token
 *   of the app for that shop; the refresh grant with the shop's current refresh token (each
 *   refresh rotates it: a spent one is refused). Expiring access tokens last
 *   `accessTokenLifetimeSeconds`, refresh tokens `refreshTokenLifetimeSeconds`.
 * - the Admin GraphQL API (`POST /{shop}/admin/api/{version}/graphql.json`): a known shop, a
 *   version named as Shopify names them (`YYYY-01|04|07|10`, `unstable`), an
 *   `X-Shopify-Access-Token` current for that shop; the query parsed (graphql-js), each root
 *   field answered by the handler installed for it (`handle`), the answer cut to the fields the
 *   query selects, the query's cost taken from the shop's bucket (a `THROTTLED` answer with
 *   Shopify's cost extensions when it lacks the points). Every request is recorded.
 *
 * Built-in fields: `shop`, `products` (paginated), `bulkOperationRunQuery`,
 * `currentBulkOperation`, `bulkOperation`/`node` (polling; the result as JSONL at
 * `{url}/bulk/{n}.jsonl`), `currentAppInstallation { activeSubscriptions }`,
 * `appSubscriptionCreate`, `appSubscriptionCancel`, `nodes`, `order`, `flowTriggerReceive`.
 * Another one is one `handle(field, handler)` call. A subscription's state moves as the
 * merchant and Shopify move it with `setSubscriptionStatus`.
 *
 * Shopify Flow: `flowTriggerReceive(handle, payload)` checks the payload against the app's
 * `flow_trigger` extensions as deployed (every extensions/<folder>/shopify.extension.toml, read at
 * start: `flowTriggers`), as Flow does: a known handle, a JSON object of at most
 * FLOW_PAYLOAD_LIMIT_BYTES, no key the trigger does not declare, every declared one present
 * (a trigger field has no optional flag; stricter than Flow, if Flow lets one be left out),
 * each value of its field's type (a reference by `customer_id`/`product_id`/`order_id` as a
 * positive integer id); each refusal is a `userErrors` entry. Every call is recorded in
 * `flowCalls`. It costs `costs.get('flowTriggerReceive')` like any field, so a drained bucket
 * throttles it. `flowLifecycleBody` and `sendFlowLifecycle` are Flow's lifecycle callback,
 * signed with the app secret.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  Kind,
  type OperationDefinitionNode,
  parse,
  type SelectionSetNode,
  valueFromASTUntyped,
} from 'graphql'
import { jwtVerify } from 'jose'
import { parse as parseToml } from 'smol-toml'
import { webhookHmac } from '../../src/platforms/shopify/signatures.js'
import { SHOPIFY_API_KEY, SHOPIFY_SECRET } from './shopify.js'

type Json = Record<string, unknown>

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange'
const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token'
const OFFLINE_TOKEN_TYPE = 'urn:shopify:params:oauth:token-type:offline-access-token'
const API_VERSION = /^([0-9]{4}-(01|04|07|10)|unstable)$/
const INVALID_TOKEN = '[API] Invalid API key or access token (unrecognized login or wrong password)'

/** A shop's cost bucket (Shopify's calculated query cost): points, restored per second. */
export interface ThrottleBucket {
  maximumAvailable: number
  restoreRate: number
  currentlyAvailable: number
}

export interface EmulatedBulkOperation {
  __typename: 'BulkOperation'
  id: string
  status: 'CREATED' | 'RUNNING' | 'COMPLETED' | 'FAILED'
  type: 'QUERY'
  query: string
  createdAt: string
  completedAt: string | null
  objectCount: string
  rootObjectCount: string
  fileSize: string | null
  url: string | null
  partialDataUrl: null
  errorCode: string | null
  /** Times it was read; it completes at the emulator's `bulkPollsToComplete`-th. */
  polls: number
}

export interface EmulatedShop {
  domain: string
  /** The numeric id (its GID: `gid://shopify/Shop/{id}`). */
  id: string
  name: string
  /** Its store currency (`shop { currencyCode }`, Shopify's CurrencyCode); default USD. */
  currencyCode: string
  /** The scopes its tokens are granted. */
  scope: string
  /** Products in the Admin API's shape (`{ id: 'gid://shopify/Product/1', handle, title, variants: connection([...]) }`). */
  products: Json[]
  /** Orders in the Admin API's shape (`{ id: 'gid://shopify/Order/1', … }`), for `order(id:)`. */
  orders: Json[]
  subscriptions: Json[]
  bulkOperations: EmulatedBulkOperation[]
  /** The `errorCode` its bulk operations fail with when read (null: they complete). */
  bulkErrorCode: string | null
  bucket: ThrottleBucket
  /** performance.now() when the bucket was last restored. */
  bucketAt: number
}

/** Shopify's AppSubscriptionStatus. */
export type SubscriptionStatus = 'PENDING' | 'ACCEPTED' | 'ACTIVE' | 'DECLINED' | 'EXPIRED' | 'FROZEN' | 'CANCELLED'

export interface IssuedToken {
  shop: string
  accessToken: string
  refreshToken: string | null
  /** Epoch ms; null: does not expire. */
  accessExpiresAt: number | null
  refreshExpiresAt: number | null
  /** Its refresh token was used (rotated). */
  spent: boolean
  /** Revoked (`revokeTokens`, as Shopify does at an uninstall). */
  revoked: boolean
}

export interface TokenRequest {
  shop: string
  grantType: string
  status: number
  at: number
}

export interface GraphqlRequest {
  shop: string
  version: string
  query: string
  variables: Json
  /** Root fields of the operation run. */
  fields: string[]
  token: string | undefined
  status: number
  /** The cost extensions of a THROTTLED answer (what a client must wait for). */
  throttled: { requestedQueryCost: number; currentlyAvailable: number; restoreRate: number } | undefined
  at: number
}

/** A field of a deployed Flow trigger: its payload key (`customer_id` for a `customer_reference`) and type. */
export interface FlowTriggerField {
  key: string
  type: string
}

/** A `flow_trigger` extension of the app, as its toml declares it. */
export interface FlowTriggerDefinition {
  handle: string
  name: string
  /** The extension's folder under extensions/. */
  folder: string
  fields: FlowTriggerField[]
}

/** A `flowTriggerReceive` call, with what the emulator answered. */
export interface FlowCall {
  shop: string
  handle: unknown
  payload: unknown
  userErrors: { field: string[]; message: string }[]
  at: number
}

/** The largest trigger payload Flow takes: 50 KB of JSON. */
export const FLOW_PAYLOAD_LIMIT_BYTES = 50_000
/** The app's extensions, as `shopify app deploy` sends them. */
export const EXTENSIONS_DIR = join(import.meta.dirname, '..', '..', '..', '..', 'extensions')
/** The commerce objects a trigger may reference, and the payload key of each. */
const REFERENCE_KEYS: Record<string, string> = {
  customer_reference: 'customer_id',
  order_reference: 'order_id',
  product_reference: 'product_id',
  company_reference: 'company_id',
  company_contact_reference: 'company_contact_id',
}

/** The app's `flow_trigger` extensions (extensions/<folder>/shopify.extension.toml), by handle. */
export function flowTriggerDefinitions(dir = EXTENSIONS_DIR): Map<string, FlowTriggerDefinition> {
  const out = new Map<string, FlowTriggerDefinition>()
  for (const folder of readdirSync(dir).sort()) {
    const file = join(dir, folder, 'shopify.extension.toml')
    if (!existsSync(file)) continue
    const toml = parseToml(readFileSync(file, 'utf8')) as Json
    const settings = isObject(toml.settings) ? toml.settings : {}
    const fields = (Array.isArray(settings.fields) ? settings.fields : []) as Json[]
    for (const ext of (Array.isArray(toml.extensions) ? toml.extensions : []) as Json[]) {
      if (ext.type !== 'flow_trigger') continue
      out.set(String(ext.handle), {
        handle: String(ext.handle),
        name: String(ext.name),
        folder,
        fields: fields.map((f) => ({ key: REFERENCE_KEYS[String(f.type)] ?? String(f.key), type: String(f.type) })),
      })
    }
  }
  return out
}

/** Why a payload value is not of the field's type (Flow's check); undefined when it is. */
function flowTypeError(type: string, value: unknown): string | undefined {
  const id = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v > 0
  if (type in REFERENCE_KEYS) return id(value) ? undefined : 'must be a positive integer id'
  switch (type) {
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be a boolean'
    case 'email':
      return typeof value === 'string' && /^[^@\s]+@[^@\s]+$/.test(value) ? undefined : 'must be an email address'
    case 'single_line_text_field':
      return typeof value === 'string' ? undefined : 'must be a string'
    case 'number_decimal':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a number'
    case 'url':
      return typeof value === 'string' && URL.canParse(value) ? undefined : 'must be a URL'
    default:
      return `has a type Flow does not take on a trigger: ${type}`
  }
}

/** Flow's check of a flowTriggerReceive call: its userErrors (none: the workflows run). */
export function flowUserErrors(
  definitions: Map<string, FlowTriggerDefinition>,
  handle: unknown,
  payload: unknown,
): { field: string[]; message: string }[] {
  const definition = typeof handle === 'string' ? definitions.get(handle) : undefined
  if (definition === undefined)
    return [{ field: ['handle'], message: `Invalid handle: no trigger of the app is ${JSON.stringify(handle)}` }]
  if (!isObject(payload)) return [{ field: ['payload'], message: 'Payload must be a JSON object' }]
  const size = Buffer.byteLength(JSON.stringify(payload))
  if (size > FLOW_PAYLOAD_LIMIT_BYTES)
    return [{ field: ['payload'], message: `Payload is ${size} bytes, over the ${FLOW_PAYLOAD_LIMIT_BYTES} bytes limit` }]
  const errors: { field: string[]; message: string }[] = []
  const declared = new Map(definition.fields.map((f) => [f.key, f.type]))
  for (const key of Object.keys(payload))
    if (!declared.has(key)) errors.push({ field: ['payload', key], message: `${key} is not a field of ${definition.handle}` })
  for (const [key, type] of declared) {
    if (!(key in payload)) {
      errors.push({ field: ['payload', key], message: `${key} is missing` })
      continue
    }
    const wrong = flowTypeError(type, payload[key])
    if (wrong !== undefined) errors.push({ field: ['payload', key], message: `${key} ${wrong}` })
  }
  return errors
}

export interface FieldContext {
  shop: EmulatedShop
  /** The field's arguments, variables resolved. */
  args: Json
  variables: Json
  emulator: ShopifyEmulator
}

/** A root field's value (cut to the query's selection by the emulator); throw `EmulatedGraphqlError` for a GraphQL error. */
export type FieldHandler = (ctx: FieldContext) => unknown

export class EmulatedGraphqlError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message)
  }
}

export interface ShopifyEmulator {
  url: string
  apiKey: string
  apiSecret: string
  /** Shopify app mode pointed at this emulator: give it to createTestApp's `env`. */
  env: Record<string, string>
  accessTokenLifetimeSeconds: number
  refreshTokenLifetimeSeconds: number
  /** How many reads of a bulk operation it takes to complete (1: the first poll sees it COMPLETED). */
  bulkPollsToComplete: number
  /** Query cost of each root field (default 1). */
  costs: Map<string, number>
  tokens: IssuedToken[]
  tokenRequests: TokenRequest[]
  graphqlRequests: GraphqlRequest[]
  /** The app's Flow triggers as deployed (extensions/), by handle. */
  flowTriggers: Map<string, FlowTriggerDefinition>
  /** Every flowTriggerReceive call. */
  flowCalls: FlowCall[]
  /** A shop Shopify knows (the app installable on it). */
  addShop(
    domain: string,
    init?: Partial<Pick<EmulatedShop, 'id' | 'name' | 'currencyCode' | 'scope' | 'products' | 'orders' | 'bucket'>>,
  ): EmulatedShop
  shop(domain: string): EmulatedShop
  /** Answers root field `field` (replacing a built-in one). */
  handle(field: string, handler: FieldHandler): void
  /** The shop's tokens stop working (an uninstall at Shopify). */
  revokeTokens(domain: string): void
  /**
   * A subscription's status as the merchant or Shopify set it (approved: ACTIVE, DECLINED,
   * EXPIRED, FROZEN, CANCELLED); ACTIVE cancels the shop's other active one, as Shopify
   * replaces an app's subscription.
   */
  setSubscriptionStatus(domain: string, id: string, status: SubscriptionStatus): void
  /** Requests wait until the returned release is called (a slow Shopify). */
  hold(): () => void
  /** Stops listening (connections refused) until `comeBack()`. */
  goDown(): Promise<void>
  comeBack(): Promise<void>
  /** Resolves once `check()` holds, looked at now and after each answer. */
  until(check: () => boolean, what: string, timeoutMs?: number): Promise<void>
  close(): Promise<void>
}

/** A connection of `nodes` as the Admin API returns one (`nodes`, `edges`, `pageInfo`), for products' variants and the like. */
export function connection(nodes: Json[], from = 0, hasNextPage = false): Json {
  const cursor = (i: number) => Buffer.from(`cursor:${i}`).toString('base64url')
  return {
    nodes,
    edges: nodes.map((node, i) => ({ cursor: cursor(from + i), node })),
    pageInfo: {
      hasNextPage,
      hasPreviousPage: from > 0,
      startCursor: nodes.length > 0 ? cursor(from) : null,
      endCursor: nodes.length > 0 ? cursor(from + nodes.length - 1) : null,
    },
  }
}

const cursorIndex = (cursor: unknown): number => {
  const m = typeof cursor === 'string' ? /^cursor:([0-9]+)$/.exec(Buffer.from(cursor, 'base64url').toString()) : null
  if (m === null) throw new EmulatedGraphqlError('Invalid cursor for current pagination sort.', 'BAD_REQUEST')
  return Number(m[1])
}

const gidNumber = (gid: unknown, type: string): number | undefined => {
  const m = typeof gid === 'string' ? new RegExp(`^gid://shopify/${type}/([0-9]+)$`).exec(gid) : null
  return m === null ? undefined : Number(m[1])
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The object types whose every field the emulator answers: selecting another is Shopify's `undefinedField` error. */
const COMPLETE_TYPES = new Set(['Shop'])

/**
 * The value cut to what `selection` asks (aliases, `__typename`, fragments matched on
 * `__typename`). A field a COMPLETE_TYPES object lacks is refused as Shopify refuses a field
 * its schema does not have.
 */
function project(value: unknown, selection: SelectionSetNode | undefined, fragments: Map<string, FragmentDefinitionNode>): unknown {
  if (value === undefined || value === null) return null
  if (Array.isArray(value)) return value.map((v) => project(v, selection, fragments))
  if (selection === undefined || !isObject(value)) return value
  const out: Json = {}
  for (const field of fieldsOf(selection, value, fragments)) {
    const name = field.name.value
    const type = value.__typename
    if (typeof type === 'string' && COMPLETE_TYPES.has(type) && name !== '__typename' && !(name in value))
      throw new EmulatedGraphqlError(`Field '${name}' doesn't exist on type '${type}'`, 'undefinedField')
    out[field.alias?.value ?? name] = project(value[name], field.selectionSet, fragments)
  }
  return out
}

function fieldsOf(selection: SelectionSetNode, value: Json, fragments: Map<string, FragmentDefinitionNode>): FieldNode[] {
  const matches = (type: string | undefined) => type === undefined || value.__typename === undefined || value.__typename === type
  return selection.selections.flatMap((s) => {
    if (s.kind === Kind.FIELD) return [s]
    const fragment = s.kind === Kind.INLINE_FRAGMENT ? s : fragments.get(s.name.value)
    if (fragment === undefined || !matches(fragment.typeCondition?.name.value)) return []
    return fieldsOf(fragment.selectionSet, value, fragments)
  })
}

/**
 * A bulk query's result as Shopify writes it: one JSON line per node of its root connection,
 * cut to the query's selection, each nested connection's nodes on lines of their own after
 * their parent's, with `__parentId`.
 */
function bulkLines(shop: EmulatedShop, query: string): Json[] {
  const document = parse(query)
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
  const root = operation?.selectionSet.selections.find((s): s is FieldNode => s.kind === Kind.FIELD)
  if (root?.name.value !== 'products') throw new EmulatedGraphqlError('The emulator runs bulk queries of `products` only')
  const fragments = fragmentsOf(document)
  const nodeSelection = nodeSelectionOf(root.selectionSet)
  return shop.products.flatMap((product) => {
    const line = project(product, nodeSelection, fragments) as Json
    const children: Json[] = []
    for (const [key, value] of Object.entries(line)) {
      if (!isObject(value) || !(Array.isArray(value.edges) || Array.isArray(value.nodes))) continue
      delete line[key]
      const nodes = Array.isArray(value.nodes) ? value.nodes : (value.edges as Json[]).map((e) => e.node)
      for (const node of nodes as Json[]) children.push({ ...node, __parentId: product.id })
    }
    return [line, ...children]
  })
}

/** The selection of a connection's nodes (`edges { node { … } }` or `nodes { … }`). */
function nodeSelectionOf(selection: SelectionSetNode | undefined): SelectionSetNode | undefined {
  const field = (s: SelectionSetNode | undefined, name: string) =>
    s?.selections.find((f): f is FieldNode => f.kind === Kind.FIELD && f.name.value === name)
  return field(selection, 'nodes')?.selectionSet ?? field(field(selection, 'edges')?.selectionSet, 'node')?.selectionSet
}

const fragmentsOf = (document: DocumentNode) =>
  new Map(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((d) => [d.name.value, d] as const),
  )

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

function send(res: ServerResponse, status: number, body: unknown): number {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body))
  return status
}

export async function startShopifyEmulator(opts: { apiKey?: string; apiSecret?: string; port?: number } = {}): Promise<ShopifyEmulator> {
  const apiKey = opts.apiKey ?? SHOPIFY_API_KEY
  const apiSecret = opts.apiSecret ?? SHOPIFY_SECRET
  const shops = new Map<string, EmulatedShop>()
  const handlers = new Map<string, FieldHandler>()
  const waiters: (() => void)[] = []
  let held: Promise<void> | undefined
  /** The JSONL of each completed bulk operation, by its number. */
  const results = new Map<number, string>()
  let serial = 0
  const wake = () => {
    for (const w of waiters.splice(0)) w()
  }
  const newToken = (prefix: string) => `${prefix}${randomBytes(16).toString('hex')}`

  const emulator: ShopifyEmulator = {
    url: '',
    apiKey,
    apiSecret,
    env: {},
    accessTokenLifetimeSeconds: 3600,
    refreshTokenLifetimeSeconds: 90 * 86_400,
    bulkPollsToComplete: 1,
    costs: new Map(),
    tokens: [],
    tokenRequests: [],
    graphqlRequests: [],
    flowTriggers: flowTriggerDefinitions(),
    flowCalls: [],
    addShop(domain, init = {}) {
      const shop: EmulatedShop = {
        domain,
        id: init.id ?? String(60_000_000_000 + ++serial),
        name: init.name ?? domain.split('.')[0]!,
        currencyCode: init.currencyCode ?? 'USD',
        scope: init.scope ?? 'read_products,read_orders',
        products: init.products ?? [],
        orders: init.orders ?? [],
        subscriptions: [],
        bulkOperations: [],
        bulkErrorCode: null,
        bucket: init.bucket ?? { maximumAvailable: 2000, restoreRate: 100, currentlyAvailable: 2000 },
        bucketAt: performance.now(),
      }
      shops.set(domain, shop)
      return shop
    },
    shop(domain) {
      const shop = shops.get(domain)
      if (shop === undefined) throw new Error(`the emulator knows no shop ${domain}`)
      return shop
    },
    handle: (field, handler) => void handlers.set(field, handler),
    setSubscriptionStatus(domain, id, status) {
      const shop = emulator.shop(domain)
      const subscription = shop.subscriptions.find((s) => s.id === id)
      if (subscription === undefined) throw new Error(`the emulator knows no subscription ${id} of ${domain}`)
      if (status === 'ACTIVE') for (const s of shop.subscriptions) if (s.status === 'ACTIVE') s.status = 'CANCELLED'
      subscription.status = status
    },
    revokeTokens(domain) {
      for (const t of emulator.tokens) if (t.shop === domain) t.revoked = true
    },
    hold() {
      let release!: () => void
      held = new Promise<void>((resolve) => (release = resolve))
      return () => {
        held = undefined
        release()
      }
    },
    goDown: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
    comeBack: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    // Woken by each answer; the timeout is the only timer (a real one).
    until(check, what, timeoutMs = 10_000) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          const i = waiters.indexOf(look)
          if (i >= 0) waiters.splice(i, 1)
          reject(new Error(`shopify emulator: timed out waiting for ${what}`))
        }, timeoutMs)
        const look = () => {
          if (!check()) return void waiters.push(look)
          clearTimeout(timer)
          resolve()
        }
        look()
      })
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }

  function issue(shop: EmulatedShop, expiring: boolean): Json {
    const at = Date.now()
    const token: IssuedToken = {
      shop: shop.domain,
      accessToken: newToken('shpat_'),
      refreshToken: expiring ? newToken('shprt_') : null,
      accessExpiresAt: expiring ? at + emulator.accessTokenLifetimeSeconds * 1000 : null,
      refreshExpiresAt: expiring ? at + emulator.refreshTokenLifetimeSeconds * 1000 : null,
      spent: false,
      revoked: false,
    }
    emulator.tokens.push(token)
    return {
      access_token: token.accessToken,
      scope: shop.scope,
      ...(expiring
        ? {
            expires_in: emulator.accessTokenLifetimeSeconds,
            refresh_token: token.refreshToken,
            refresh_token_expires_in: emulator.refreshTokenLifetimeSeconds,
          }
        : {}),
    }
  }

  async function tokenEndpoint(shop: EmulatedShop, body: Json, res: ServerResponse): Promise<number> {
    if (body.client_id !== apiKey || body.client_secret !== apiSecret)
      return send(res, 401, { error: 'invalid_client', error_description: 'Client authentication failed' })
    if (body.grant_type === TOKEN_EXCHANGE_GRANT) {
      if (body.subject_token_type !== ID_TOKEN_TYPE || body.requested_token_type !== OFFLINE_TOKEN_TYPE)
        return send(res, 400, { error: 'invalid_request', error_description: 'Only id_token subjects for offline access tokens' })
      try {
        const { payload } = await jwtVerify(String(body.subject_token), new TextEncoder().encode(apiSecret), {
          algorithms: ['HS256'],
          audience: apiKey,
          clockTolerance: 5,
          requiredClaims: ['exp', 'nbf', 'iss', 'dest'],
        })
        if (payload.dest !== `https://${shop.domain}` || payload.iss !== `https://${shop.domain}/admin`) throw new Error('another shop')
      } catch {
        return send(res, 400, { error: 'invalid_subject_token', error_description: 'The subject token is invalid' })
      }
      return send(res, 200, issue(shop, body.expiring === '1' || body.expiring === 1 || body.expiring === true))
    }
    if (body.grant_type === 'refresh_token') {
      const token = emulator.tokens.find((t) => t.shop === shop.domain && t.refreshToken !== null && t.refreshToken === body.refresh_token)
      if (token === undefined || token.spent || token.revoked || (token.refreshExpiresAt as number) <= Date.now())
        return send(res, 400, {
          error: 'invalid_grant',
          error_description: 'The refresh token is invalid, expired, revoked or already used',
        })
      token.spent = true
      return send(res, 200, issue(shop, true))
    }
    return send(res, 400, { error: 'unsupported_grant_type' })
  }

  /** Takes `cost` points from the shop's bucket, restored first at its rate; false (nothing taken) when it lacks them. */
  function spend(shop: EmulatedShop, cost: number): boolean {
    const at = performance.now()
    const b = shop.bucket
    b.currentlyAvailable = Math.min(b.maximumAvailable, b.currentlyAvailable + ((at - shop.bucketAt) / 1000) * b.restoreRate)
    shop.bucketAt = at
    if (b.currentlyAvailable < cost) return false
    b.currentlyAvailable -= cost
    return true
  }

  async function graphqlEndpoint(
    shop: EmulatedShop,
    version: string,
    raw: string,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<number> {
    const token = req.headers['x-shopify-access-token']
    const record: GraphqlRequest = {
      shop: shop.domain,
      version,
      query: '',
      variables: {},
      fields: [],
      token: typeof token === 'string' ? token : undefined,
      status: 0,
      throttled: undefined,
      at: Date.now(),
    }
    emulator.graphqlRequests.push(record)
    if (!API_VERSION.test(version)) return (record.status = send(res, 404, { errors: 'Not Found' }))
    const current = emulator.tokens.find(
      (t) =>
        t.shop === shop.domain &&
        t.accessToken === record.token &&
        !t.revoked &&
        (t.accessExpiresAt === null || t.accessExpiresAt > Date.now()),
    )
    if (current === undefined) return (record.status = send(res, 401, { errors: INVALID_TOKEN }))
    const body = JSON.parse(raw) as { query?: string; variables?: Json; operationName?: string }
    record.query = body.query ?? ''
    record.variables = body.variables ?? {}
    let document: DocumentNode
    try {
      document = parse(record.query)
    } catch (err) {
      return (record.status = send(res, 200, { errors: [{ message: (err as Error).message }] }))
    }
    const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
    const operation = body.operationName === undefined ? operations[0] : operations.find((o) => o.name?.value === body.operationName)
    if (operation === undefined || (body.operationName === undefined && operations.length > 1))
      return (record.status = send(res, 200, { errors: [{ message: 'An operation name is required' }] }))
    const fields = operation.selectionSet.selections.filter((s): s is FieldNode => s.kind === Kind.FIELD)
    record.fields = fields.map((f) => f.name.value)
    const cost = fields.reduce((sum, f) => sum + (emulator.costs.get(f.name.value) ?? 1), 0)
    const b = shop.bucket
    const costOf = (actual: number | null) => ({
      cost: {
        requestedQueryCost: cost,
        actualQueryCost: actual,
        throttleStatus: {
          maximumAvailable: b.maximumAvailable,
          currentlyAvailable: Math.floor(b.currentlyAvailable),
          restoreRate: b.restoreRate,
        },
      },
    })
    if (cost > b.maximumAvailable)
      return (record.status = send(res, 200, {
        errors: [
          {
            message: `Query cost is ${cost}, which exceeds the single query max cost limit (${b.maximumAvailable}).`,
            extensions: { code: 'MAX_COST_EXCEEDED' },
          },
        ],
        extensions: costOf(null),
      }))
    if (!spend(shop, cost)) {
      record.throttled = { requestedQueryCost: cost, currentlyAvailable: Math.floor(b.currentlyAvailable), restoreRate: b.restoreRate }
      return (record.status = send(res, 200, {
        errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/rate-limits' } }],
        extensions: costOf(null),
      }))
    }
    const variables = record.variables
    const fragments = fragmentsOf(document)
    const data: Json = {}
    const errors: Json[] = []
    for (const field of fields) {
      const key = field.alias?.value ?? field.name.value
      const handler = handlers.get(field.name.value)
      const rootType = operation.operation === 'mutation' ? 'Mutation' : 'QueryRoot'
      try {
        if (handler === undefined)
          throw new EmulatedGraphqlError(`Field '${field.name.value}' doesn't exist on type '${rootType}'`, 'undefinedField')
        const args = Object.fromEntries((field.arguments ?? []).map((a) => [a.name.value, valueFromASTUntyped(a.value, variables)]))
        data[key] = project(await handler({ shop, args, variables, emulator }), field.selectionSet, fragments)
      } catch (err) {
        if (!(err instanceof EmulatedGraphqlError)) throw err
        data[key] = null
        errors.push({ message: err.message, path: [key], ...(err.code === undefined ? {} : { extensions: { code: err.code } }) })
      }
    }
    return (record.status = send(res, 200, { data, ...(errors.length > 0 ? { errors } : {}), extensions: costOf(cost) }))
  }

  /** Reads of a bulk operation move it on: RUNNING, then COMPLETED (its JSONL written) at the `bulkPollsToComplete`-th read. */
  function advance(shop: EmulatedShop, op: EmulatedBulkOperation): EmulatedBulkOperation {
    if (op.status !== 'CREATED' && op.status !== 'RUNNING') return op
    op.polls += 1
    if (op.polls < emulator.bulkPollsToComplete) {
      op.status = 'RUNNING'
      return op
    }
    try {
      if (shop.bulkErrorCode !== null) throw new Error(shop.bulkErrorCode)
      const lines = bulkLines(shop, op.query)
      const jsonl = lines.map((l) => `${JSON.stringify(l)}\n`).join('')
      const n = gidNumber(op.id, 'BulkOperation') as number
      results.set(n, jsonl)
      Object.assign(op, {
        status: 'COMPLETED',
        objectCount: String(lines.length),
        rootObjectCount: String(shop.products.length),
        fileSize: lines.length > 0 ? String(Buffer.byteLength(jsonl)) : null,
        url: lines.length > 0 ? `${emulator.url}/bulk/${n}.jsonl` : null,
      })
    } catch {
      Object.assign(op, { status: 'FAILED', errorCode: shop.bulkErrorCode ?? 'INTERNAL_SERVER_ERROR' })
    }
    op.completedAt = new Date().toISOString()
    return op
  }

  const nodeById = (shop: EmulatedShop, id: unknown): unknown => {
    const op = shop.bulkOperations.find((o) => o.id === id)
    if (op !== undefined) return advance(shop, op)
    return [...shop.products, ...shop.orders, ...shop.subscriptions].find((n) => n.id === id) ?? null
  }

  handlers.set('shop', ({ shop }) => ({
    __typename: 'Shop',
    id: `gid://shopify/Shop/${shop.id}`,
    name: shop.name,
    myshopifyDomain: shop.domain,
    currencyCode: shop.currencyCode,
  }))
  handlers.set('products', ({ shop, args }) => {
    const first = args.first as number | undefined
    if (first === undefined) throw new EmulatedGraphqlError('you must provide one of first or last', 'BAD_REQUEST')
    if (first < 0 || first > 250) throw new EmulatedGraphqlError('The page size must be between 0 and 250', 'BAD_REQUEST')
    const from = args.after === undefined || args.after === null ? 0 : cursorIndex(args.after) + 1
    const page = shop.products.slice(from, from + first)
    return connection(page, from, from + page.length < shop.products.length)
  })
  handlers.set('bulkOperationRunQuery', ({ shop, args }) => {
    const running = shop.bulkOperations.find((o) => o.status === 'CREATED' || o.status === 'RUNNING')
    if (running !== undefined)
      return {
        bulkOperation: null,
        userErrors: [
          {
            field: ['query'],
            message: `A bulk query operation for this app and shop is already in progress: ${running.id}.`,
            code: 'OPERATION_IN_PROGRESS',
          },
        ],
      }
    const query = String(args.query ?? '')
    try {
      parse(query)
    } catch (err) {
      return { bulkOperation: null, userErrors: [{ field: ['query'], message: (err as Error).message, code: 'INVALID' }] }
    }
    const op: EmulatedBulkOperation = {
      __typename: 'BulkOperation',
      id: `gid://shopify/BulkOperation/${++serial}`,
      status: 'CREATED',
      type: 'QUERY',
      query,
      createdAt: new Date().toISOString(),
      completedAt: null,
      objectCount: '0',
      rootObjectCount: '0',
      fileSize: null,
      url: null,
      partialDataUrl: null,
      errorCode: null,
      polls: 0,
    }
    shop.bulkOperations.push(op)
    return { bulkOperation: op, userErrors: [] }
  })
  handlers.set('currentBulkOperation', ({ shop }) => {
    const op = shop.bulkOperations.at(-1)
    return op === undefined ? null : advance(shop, op)
  })
  handlers.set('bulkOperation', ({ shop, args }) => nodeById(shop, args.id))
  handlers.set('node', ({ shop, args }) => nodeById(shop, args.id))
  handlers.set('nodes', ({ shop, args }) => {
    if (!Array.isArray(args.ids)) throw new EmulatedGraphqlError('Expected value to not be null', 'argumentLiteralsIncompatible')
    return args.ids.map((id) => nodeById(shop, id))
  })
  handlers.set('appSubscriptionCancel', ({ shop, args }) => {
    const subscription = shop.subscriptions.find((s) => s.id === args.id)
    if (subscription === undefined)
      return { appSubscription: null, userErrors: [{ field: ['id'], message: "Couldn't find RecurringApplicationCharge" }] }
    if (subscription.status !== 'ACTIVE' && subscription.status !== 'FROZEN' && subscription.status !== 'PENDING')
      return { appSubscription: null, userErrors: [{ field: ['id'], message: 'The subscription cannot be cancelled in its state' }] }
    subscription.status = 'CANCELLED'
    return { appSubscription: subscription, userErrors: [] }
  })
  handlers.set('order', ({ shop, args }) => shop.orders.find((o) => o.id === args.id) ?? null)
  handlers.set('flowTriggerReceive', ({ shop, args }) => {
    if (args.body !== undefined) throw new EmulatedGraphqlError('`body` is deprecated: send `handle` and `payload`', 'BAD_REQUEST')
    const userErrors = flowUserErrors(emulator.flowTriggers, args.handle, args.payload)
    emulator.flowCalls.push({ shop: shop.domain, handle: args.handle, payload: args.payload, userErrors, at: Date.now() })
    return { userErrors }
  })
  handlers.set('currentAppInstallation', ({ shop }) => ({
    id: `gid://shopify/AppInstallation/${shop.id}`,
    activeSubscriptions: shop.subscriptions.filter((s) => s.status === 'ACTIVE'),
  }))
  handlers.set('appSubscriptionCreate', ({ shop, args }) => {
    const userErrors: Json[] = []
    if (typeof args.name !== 'string' || args.name === '') userErrors.push({ field: ['name'], message: "Name can't be blank" })
    if (typeof args.returnUrl !== 'string' || !URL.canParse(args.returnUrl))
      userErrors.push({ field: ['returnUrl'], message: 'Return url is invalid' })
    if (!Array.isArray(args.lineItems) || args.lineItems.length === 0)
      userErrors.push({ field: ['lineItems'], message: 'Line items must be present' })
    if (userErrors.length > 0) return { appSubscription: null, confirmationUrl: null, userErrors }
    const n = ++serial
    const subscription: Json = {
      __typename: 'AppSubscription',
      id: `gid://shopify/AppSubscription/${n}`,
      name: args.name,
      status: 'PENDING',
      test: args.test === true,
      trialDays: typeof args.trialDays === 'number' ? args.trialDays : 0,
      returnUrl: args.returnUrl,
      createdAt: new Date().toISOString(),
      currentPeriodEnd: null,
      lineItems: (args.lineItems as Json[]).map((item, i) => ({
        id: `gid://shopify/AppSubscriptionLineItem/${n}${i}`,
        plan: item.plan ?? null,
      })),
    }
    shop.subscriptions.push(subscription)
    return {
      appSubscription: subscription,
      confirmationUrl: `https://${shop.domain}/admin/charges/${apiKey}/${n}/RecurringApplicationCharge/confirm_recurring_application_charge?signature=emulated`,
      userErrors: [],
    }
  })

  const server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req)
      if (held !== undefined) await held
      const path = new URL(req.url ?? '/', 'http://emulator').pathname
      const result = /^\/bulk\/([0-9]+)\.jsonl$/.exec(path)
      if (req.method === 'GET' && result !== null) {
        const jsonl = results.get(Number(result[1]))
        if (jsonl === undefined) return send(res, 404, { errors: 'Not Found' })
        res.writeHead(200, { 'content-type': 'application/jsonl' }).end(jsonl)
        return
      }
      const m = /^\/([^/]+)\/admin\/(oauth\/access_token|api\/([^/]+)\/graphql\.json)$/.exec(path)
      const shop = m === null ? undefined : shops.get(m[1]!)
      if (req.method !== 'POST' || m === null || shop === undefined) return send(res, 404, { errors: 'Not Found' })
      if (m[3] === undefined) {
        const body = String(req.headers['content-type']).includes('json')
          ? (JSON.parse(raw) as Json)
          : Object.fromEntries(new URLSearchParams(raw))
        const status = await tokenEndpoint(shop, body, res)
        emulator.tokenRequests.push({ shop: shop.domain, grantType: String(body.grant_type), status, at: Date.now() })
        return
      }
      await graphqlEndpoint(shop, m[3], raw, req, res)
    })()
      .catch((err: unknown) => {
        if (!res.headersSent) send(res, 500, { errors: (err as Error).message })
      })
      .finally(wake)
  })
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  emulator.url = `http://127.0.0.1:${port}`
  emulator.env = { SHOPIFY_API_SECRET: apiSecret, SHOPIFY_API_KEY: apiKey, SHOPIFY_API_EMULATOR_URL: emulator.url }
  return emulator
}

/** Flow's lifecycle callback body for a shop and trigger (`timestamp`: now, unless given). */
export function flowLifecycleBody(
  shop: Pick<EmulatedShop, 'id' | 'domain'>,
  trigger: string,
  enabled: boolean,
  at: Date = new Date(),
): Json {
  return {
    flow_trigger_definition_id: trigger,
    has_enabled_flow: enabled,
    shop_id: Number(shop.id),
    shopify_domain: shop.domain,
    timestamp: at.toISOString(),
  }
}

/**
 * POSTs a Flow lifecycle callback to the app's endpoint (`path`), signed as Shopify signs it
 * (`X-Shopify-Hmac-Sha256`, the raw body with the app secret; `hmac` replaces it, null: none).
 */
export async function sendFlowLifecycle(
  t: {
    inject: (opts: {
      method: 'POST'
      url: string
      headers: Record<string, string>
      payload: string
    }) => PromiseLike<{ statusCode: number; body: string; json(): unknown }>
  },
  body: unknown,
  o: { secret?: string; hmac?: string | null; path?: string } = {},
) {
  const raw = typeof body === 'string' ? body : JSON.stringify(body)
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  const hmac = o.hmac === undefined ? webhookHmac(raw, o.secret ?? SHOPIFY_SECRET) : o.hmac
  if (hmac !== null) headers['x-shopify-hmac-sha256'] = hmac
  const res = await t.inject({ method: 'POST', url: o.path ?? '/v1/platforms/shopify/flow/lifecycle', headers, payload: raw })
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON that each test reads as it expects
  return { status: res.statusCode, body: res.body === '' ? undefined : (res.json() as any) }
}
