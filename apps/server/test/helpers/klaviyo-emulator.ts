/**
 * Klaviyo, played locally for the tests (docs/notifications.md, "The local Klaviyo
 * emulator"): a real HTTP server on 127.0.0.1 that the service's Klaviyo client reaches
 * through KLAVIYO_BASE_URL. It receives exactly what Klaviyo's official client
 * (`klaviyo-api`) sends, records every request, and refuses what Klaviyo refuses:
 *
 * - every request: `Authorization: Klaviyo-API-Key pk_…` of a key it knows (401 otherwise,
 *   Klaviyo's JSON:API error body), a `revision` header (`YYYY-MM-DD`, optionally `.pre`/
 *   `.beta`), and, with a body, `Content-Type: application/json` or `application/vnd.api+json`;
 * - a body checked against the client's own request model of the endpoint: its classes'
 *   `attributeTypeMap` (JSON names and types, enums and nested models, resolved from the
 *   client's exports) and which fields are required, read from the same classes' TypeScript
 *   declarations that the package ships (`'name': T` required, `'name'?: T` optional). A
 *   field the model does not have, a missing required one or a value of the wrong type is a
 *   400 naming it (`problems` of the recorded request);
 * - Klaviyo's rules beyond the types that the service relies on: an event's profile needs an
 *   identifier, at most 400 properties; a deletion job names exactly one of `email`,
 *   `phone_number` and `id`;
 * - a rate limit per key and endpoint (fixed windows of one second and one minute, as Klaviyo
 *   counts; each endpoint has its own limits, so a key check does not take an event's place):
 *   over it, 429 `throttled` with `Retry-After` (whole seconds until the window ends).
 *
 * Endpoints: `POST /api/events` (202; the profile is remembered by its external id),
 * `GET /api/accounts`, `GET /api/profiles?filter=equals(external_id,"…")`,
 * `POST /api/data-privacy-deletion-jobs` (202). Faults: `failNext` (the next answers with a
 * status, e.g. 500 or 503 with Retry-After), `hold` (no answer until released: a timeout),
 * `goDown`/`comeBack` (nothing listens: connection refused).
 */
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'
import * as klaviyo from 'klaviyo-api'

type Json = Record<string, unknown>

export interface RecordedRequest {
  method: string
  path: string
  query: URLSearchParams
  headers: IncomingMessage['headers']
  /** The parsed JSON body (undefined without one). */
  body: unknown
  /** The key the request authenticated with (from its Authorization header), if any. */
  key: string | undefined
  status: number
  /** The headers of the emulator's answer (`retry-after` of a 429). */
  answerHeaders: Record<string, string>
  /** What the emulator found wrong with it: empty for a request Klaviyo would take. */
  problems: string[]
  /** When it arrived (ms since epoch). */
  at: number
}

export interface RateLimit {
  burstPerSecond: number
  steadyPerMinute: number
}

export interface KlaviyoEmulatorOptions {
  port?: number
  /** The private keys it knows, each with its account id. */
  keys?: Record<string, string>
  /** Per key; none by default. */
  rateLimit?: RateLimit
}

export interface KlaviyoEmulator {
  url: string
  requests: RecordedRequest[]
  /** The recorded requests of one endpoint (`POST /api/events`). */
  of(method: string, path: string): RecordedRequest[]
  addKey(key: string, accountId?: string): void
  /** Forgets a key: its requests are refused 401 from now on (a key revoked in Klaviyo). */
  removeKey(key: string): void
  /**
   * The events Klaviyo keeps for a key: one per profile, metric and `unique_id` (a second
   * event with the same three is accepted and not recorded), in the order first received.
   */
  events(key: string): { uniqueId: string; metric: string; email: string | undefined; externalId: string | undefined }[]
  setRateLimit(limit: RateLimit | undefined): void
  /** The next `count` requests are answered `status` (with Retry-After when given), before any check. */
  failNext(count: number, status: number, retryAfterSeconds?: number): void
  /** Every answer comes this long after the request (0: at once): a Klaviyo far away. */
  setLatency(ms: number): void
  /** Requests wait (no answer) until the returned release is called: a Klaviyo that hangs. */
  hold(): () => void
  /** Stops listening (connections refused) until `comeBack()`. */
  goDown(): Promise<void>
  comeBack(): Promise<void>
  close(): Promise<void>
}

// ---- The client's request models, as the tests' reference ----

interface Attribute {
  name: string
  baseName: string
  type: string
}
interface ModelClass {
  getAttributeTypeMap(): Attribute[]
}

const exported = klaviyo as unknown as Record<string, unknown>
const modelDir = join(dirname(createRequire(import.meta.url).resolve('klaviyo-api/package.json')), 'model')
const requiredCache = new Map<string, Set<string>>()

/** The properties the model's declaration requires (`'name': T`, not `'name'?: T`), from the client's own TypeScript. */
function requiredOf(type: string): Set<string> {
  let required = requiredCache.get(type)
  if (required) return required
  const source = sourceOf(type)
  const body = source.slice(source.indexOf(`export class ${type} {`))
  required = new Set([...body.matchAll(/^ {4}'(\w+)'(\?)?:/gm)].filter((m) => m[2] === undefined).map((m) => m[1]!))
  requiredCache.set(type, required)
  return required
}

const sourceOf = (type: string) => readFileSync(join(modelDir, `${type[0]!.toLowerCase()}${type.slice(1)}.ts`), 'utf8')

/** An enum's values as its declaration writes them (`Event = <any> 'event'`: the compiled object also maps them back to the names). */
const enumValues = (type: string): string[] => [...sourceOf(type).matchAll(/= <any> '([^']*)'/g)].map((m) => m[1]!)

const isModel = (t: string): boolean => typeof (exported[t] as ModelClass | undefined)?.getAttributeTypeMap === 'function'
const isEnum = (t: string): boolean => typeof exported[t] === 'object' && exported[t] !== null && !isModel(t)

/** What is wrong with `value` as the client's model `type` describes it (JSON names, as sent). */
export function modelProblems(value: unknown, type: string, path = 'body'): string[] {
  if (value === null || value === undefined) return [`${path} is missing`]
  switch (type) {
    case 'string':
      return typeof value === 'string' ? [] : [`${path} must be a string`]
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? [] : [`${path} must be a number`]
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${path} must be a boolean`]
    case 'Date':
      return typeof value === 'string' && !Number.isNaN(Date.parse(value)) && /^\d{4}-\d{2}-\d{2}T/.test(value)
        ? []
        : [`${path} must be an ISO 8601 date-time`]
    case 'object':
      return typeof value === 'object' && !Array.isArray(value) ? [] : [`${path} must be an object`]
  }
  const array = /^Array<(.+)>$/.exec(type)
  if (array)
    return Array.isArray(value) ? value.flatMap((v, i) => modelProblems(v, array[1]!, `${path}.${i}`)) : [`${path} must be an array`]
  if (isEnum(type)) {
    const allowed = enumValues(type)
    return typeof value === 'string' && allowed.includes(value) ? [] : [`${path} must be one of ${allowed.join(', ')}`]
  }
  if (!isModel(type)) return [`${path}: the emulator does not know the client's type ${type}`]
  if (typeof value !== 'object' || Array.isArray(value)) return [`${path} must be an object (${type})`]
  const attributes = (exported[type] as ModelClass).getAttributeTypeMap()
  const required = requiredOf(type)
  const known = new Set(attributes.map((a) => a.baseName))
  const object = value as Json
  const problems = Object.keys(object)
    .filter((k) => !known.has(k))
    .map((k) => `${path}.${k} is not a field of ${type}`)
  for (const a of attributes) {
    const v = object[a.baseName]
    if (v === undefined || v === null) {
      if (required.has(a.name)) problems.push(`${path}.${a.baseName} is required (${type})`)
      continue
    }
    problems.push(...modelProblems(v, a.type, `${path}.${a.baseName}`))
  }
  return problems
}

// ---- Klaviyo's answers ----

const error = (status: number, code: string, title: string, detail: string, pointer?: string) => ({
  errors: [{ id: randomId(), status, code, title, detail, source: pointer === undefined ? {} : { pointer } }],
})

const randomId = () => Math.random().toString(36).slice(2, 14).padEnd(12, '0')
const REVISION = /^\d{4}-\d{2}-\d{2}(\.(pre|beta))?$/
const KEY_HEADER = /^Klaviyo-API-Key (pk_[A-Za-z0-9_]+)$/

export async function startKlaviyoEmulator(opts: KlaviyoEmulatorOptions = {}): Promise<KlaviyoEmulator> {
  const keys = new Map(Object.entries(opts.keys ?? {}))
  let rateLimit = opts.rateLimit
  const windows = new Map<string, { second: number; inSecond: number; minute: number; inMinute: number }>()
  const requests: RecordedRequest[] = []
  /** Profiles seen in events: external id → Klaviyo profile id, per key. */
  const profiles = new Map<string, Map<string, string>>()
  /** The events kept per key (Klaviyo's deduplication by profile, metric and unique id). */
  const stored = new Map<string, Map<string, ReturnType<KlaviyoEmulator['events']>[number]>>()
  let failures: { count: number; status: number; retryAfter: number | undefined } | undefined
  let held: Promise<void> | undefined
  let latencyMs = 0

  /** Takes one request from the key's windows; the seconds to wait when over either. */
  function throttle(key: string): number | null {
    if (!rateLimit) return null
    const nowMs = Date.now()
    const second = Math.floor(nowMs / 1000)
    const minute = Math.floor(nowMs / 60_000)
    const w = windows.get(key) ?? { second, inSecond: 0, minute, inMinute: 0 }
    if (w.second !== second) Object.assign(w, { second, inSecond: 0 })
    if (w.minute !== minute) Object.assign(w, { minute, inMinute: 0 })
    windows.set(key, w)
    if (w.inMinute >= rateLimit.steadyPerMinute) return Math.max(1, Math.ceil(((minute + 1) * 60_000 - nowMs) / 1000))
    if (w.inSecond >= rateLimit.burstPerSecond) return Math.max(1, Math.ceil(((second + 1) * 1000 - nowMs) / 1000))
    w.inSecond++
    w.inMinute++
    return null
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    const url = new URL(req.url ?? '/', 'http://emulator')
    const record: RecordedRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: undefined,
      key: KEY_HEADER.exec(String(req.headers.authorization ?? ''))?.[1],
      status: 0,
      answerHeaders: {},
      problems: [],
      at: Date.now(),
    }
    requests.push(record)
    if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs))
    if (held) await held
    const answer = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      record.status = status
      record.answerHeaders = headers
      res.writeHead(status, { ...(body === undefined ? {} : { 'content-type': 'application/vnd.api+json' }), ...headers })
      res.end(body === undefined ? undefined : JSON.stringify(body))
    }

    if (failures && failures.count > 0) {
      failures.count--
      const { status, retryAfter } = failures
      return answer(status, error(status, 'error', 'A server error occurred.', 'The emulator was told to fail.'), {
        ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }),
      })
    }

    // Headers, as the client writes them on every request.
    if (record.key === undefined || !keys.has(record.key)) {
      record.problems.push(record.key === undefined ? 'no Klaviyo-API-Key authorization' : 'unknown private key')
      return answer(
        401,
        error(401, 'not_authenticated', 'Authentication credentials were not provided.', 'Missing or invalid private key.'),
      )
    }
    if (!REVISION.test(String(req.headers.revision ?? ''))) {
      record.problems.push(`revision header missing or malformed: ${String(req.headers.revision)}`)
      return answer(400, error(400, 'invalid', 'Invalid input.', 'Missing or invalid revision header.'))
    }
    if (raw !== '') {
      const type = String(req.headers['content-type'] ?? '')
        .split(';')[0]!
        .trim()
      if (type !== 'application/json' && type !== 'application/vnd.api+json') {
        record.problems.push(`content-type ${type}`)
        return answer(415, error(415, 'unsupported_media_type', 'Unsupported media type.', `Unsupported media type "${type}".`))
      }
      try {
        record.body = JSON.parse(raw)
      } catch {
        record.problems.push('body is not JSON')
        return answer(400, error(400, 'parse_error', 'Malformed request.', 'JSON parse error.'))
      }
    }
    const retryAfter = throttle(`${record.key} ${record.method} ${record.path}`)
    if (retryAfter !== null) {
      return answer(
        429,
        error(429, 'throttled', 'Request was throttled.', `Request was throttled. Expected available in ${retryAfter} seconds.`),
        {
          'retry-after': String(retryAfter),
        },
      )
    }
    const refuse = (problems: string[]) => {
      record.problems.push(...problems)
      return answer(400, { errors: problems.map((p) => error(400, 'invalid', 'Invalid input.', p).errors[0]) })
    }

    const route = `${record.method} ${record.path}`
    if (route === 'POST /api/events') {
      const problems = modelProblems(record.body, 'EventCreateQueryV2')
      if (problems.length > 0) return refuse(problems)
      const attributes = (record.body as { data: { attributes: Json } }).data.attributes
      const profile = ((attributes.profile as Json).data as Json & { attributes: Json }).attributes
      if (!['email', 'phone_number', 'external_id', 'anonymous_id', '_kx'].some((k) => typeof profile[k] === 'string' && profile[k] !== ''))
        return refuse(['body.data.attributes.profile must have an identifier (email, phone_number, external_id, …)'])
      if (Object.keys(attributes.properties as Json).length > 400)
        return refuse(['body.data.attributes.properties: more than 400 properties'])
      const metric = String((((attributes.metric as Json).data as Json).attributes as Json).name)
      const uniqueId = typeof attributes.unique_id === 'string' ? attributes.unique_id : randomId()
      const identity = `${String(profile.email ?? '')} ${String(profile.external_id ?? '')} ${metric} ${uniqueId}`
      const kept = stored.get(record.key) ?? new Map<string, ReturnType<KlaviyoEmulator['events']>[number]>()
      stored.set(record.key, kept)
      if (!kept.has(identity))
        kept.set(identity, {
          uniqueId,
          metric,
          email: typeof profile.email === 'string' ? profile.email : undefined,
          externalId: typeof profile.external_id === 'string' ? profile.external_id : undefined,
        })
      if (typeof profile.external_id === 'string') {
        const known = profiles.get(record.key) ?? new Map<string, string>()
        profiles.set(record.key, known)
        if (!known.has(profile.external_id)) known.set(profile.external_id, `01K${randomId().toUpperCase()}`)
      }
      return answer(202)
    }
    if (route === 'POST /api/data-privacy-deletion-jobs') {
      const problems = modelProblems(record.body, 'DataPrivacyCreateDeletionJobQuery')
      if (problems.length > 0) return refuse(problems)
      const data = (record.body as { data: { attributes: { profile: { data: Json & { attributes: Json } } } } }).data.attributes.profile
        .data
      const identifiers = [data.attributes.email, data.attributes.phone_number, data.id].filter((v) => typeof v === 'string' && v !== '')
      if (identifiers.length !== 1) return refuse(['body.data.attributes.profile.data must name exactly one of email, phone_number and id'])
      return answer(202)
    }
    if (route === 'GET /api/accounts') {
      return answer(200, {
        data: [{ type: 'account', id: keys.get(record.key), attributes: { contact_information: { organization_name: 'Emulated store' } } }],
        links: { self: `${emulator.url}/api/accounts` },
      })
    }
    if (route === 'GET /api/profiles') {
      const filter = /^equals\(external_id,"((?:[^"\\]|\\.)*)"\)$/.exec(url.searchParams.get('filter') ?? '')
      if (!filter) return refuse([`query.filter not understood by the emulator: ${url.searchParams.get('filter')}`])
      const externalId = filter[1]!.replace(/\\(.)/g, '$1')
      const id = profiles.get(record.key)?.get(externalId)
      return answer(200, {
        data: id === undefined ? [] : [{ type: 'profile', id, attributes: {}, links: { self: `${emulator.url}/api/profiles/${id}` } }],
        links: { self: `${emulator.url}/api/profiles` },
      })
    }
    record.problems.push(`no such endpoint: ${route}`)
    return answer(404, error(404, 'not_found', 'Not found.', `${route} is not an endpoint of the emulator.`))
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      res.writeHead(500)
      res.end(String(err))
    })
  })
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })

  const emulator: KlaviyoEmulator = {
    url: `http://127.0.0.1:${port}`,
    requests,
    of: (method, path) => requests.filter((r) => r.method === method && r.path === path),
    addKey: (key, accountId = `ACCT${randomId().toUpperCase()}`) => void keys.set(key, accountId),
    removeKey: (key) => void keys.delete(key),
    setLatency: (ms) => void (latencyMs = ms),
    events: (key) => [...(stored.get(key)?.values() ?? [])],
    setRateLimit: (limit) => {
      rateLimit = limit
      windows.clear()
    },
    failNext: (count, status, retryAfterSeconds) => void (failures = { count, status, retryAfter: retryAfterSeconds }),
    hold() {
      let release!: () => void
      held = new Promise<void>((resolve) => (release = resolve))
      return () => {
        held = undefined
        release()
      }
    },
    goDown: stop,
    comeBack: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    close: stop,
  }
  return emulator
}
