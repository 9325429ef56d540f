/**
 * Renders docs/reference.md from the served OpenAPI document: every operation with its
 * credentials, parameters, body fields, responses and examples, and every outbound webhook
 * event. `npm run docs:reference -w apps/server` writes it; test/http/openapi-document.test.ts
 * fails when the committed file is stale.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- walks the OpenAPI document, whose shape varies per node
type Json = Record<string, any>

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

const cell = (s: unknown) =>
  String(s ?? '')
    .replace(/\|/g, '\\|')
    .replace(/\r?\n/g, ' ')
const anchor = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .trim()
    .replace(/ /g, '-')

function resolver(document: Json) {
  return (s: Json | undefined): Json => {
    let out = s ?? {}
    for (let i = 0; i < 10 && typeof out.$ref === 'string'; i++) {
      const [, , kind, name] = out.$ref.split('/') as string[]
      out = document.components?.[kind as string]?.[name as string] ?? {}
    }
    return out
  }
}

/** A schema as a short type: `string (1..255 chars)`, `integer 1..200, default 50`, `A or null`. */
function typeOf(s: Json, resolve: (s: Json) => Json): string {
  s = resolve(s)
  if ('const' in s) return `\`${JSON.stringify(s.const)}\``
  if (Array.isArray(s.enum)) {
    const values = (s.enum as unknown[]).map((v) => `\`${JSON.stringify(v)}\``)
    // A long list (the currency codes) by its first and last values: the document has them all.
    return values.length > 12
      ? `one of ${values.length} values: ${values.slice(0, 3).join(', ')}, …, ${values.at(-1)}`
      : values.join(' or ')
  }
  const union = (s.anyOf ?? s.oneOf) as Json[] | undefined
  if (union && !s.properties) return union.map((u) => typeOf(u, resolve)).join(' or ')
  if (Array.isArray(s.type)) return s.type.join(' or ')
  const bits: string[] = []
  if (s.format) bits.push(s.format)
  if (s.pattern) bits.push(`pattern \`${s.pattern}\``)
  if (s.minLength !== undefined || s.maxLength !== undefined) bits.push(`${s.minLength ?? 0}..${s.maxLength ?? '∞'} chars`)
  if (s.minimum !== undefined || s.maximum !== undefined) bits.push(`${s.minimum ?? '−∞'}..${s.maximum ?? '∞'}`)
  if (s.minItems !== undefined || s.maxItems !== undefined) bits.push(`${s.minItems ?? 0}..${s.maxItems ?? '∞'} entries`)
  if (s.default !== undefined) bits.push(`default \`${JSON.stringify(s.default)}\``)
  let base = s.type ?? (s.properties ? 'object' : 'any')
  if (base === 'array') base = `array of ${typeOf(s.items ?? {}, resolve)}`
  return bits.length ? `${base} (${bits.join(', ')})` : base
}

/** Rows `field | type | required | description` of an object schema, nested fields by dotted path. */
function fieldRows(schema: Json, resolve: (s: Json) => Json, prefix = '', depth = 0): string[] {
  const s = resolve(schema)
  if (depth > 4) return []
  const variants = ((s.anyOf ?? s.oneOf) as Json[] | undefined)?.map(resolve).filter((v) => v.properties)
  const objects = s.properties ? [s] : (variants ?? [])
  if (objects.length === 0) return []
  const properties: Record<string, Json> = {}
  for (const o of objects) Object.assign(properties, o.properties)
  const requiredInAll = (name: string) => objects.every((o) => (o.required ?? []).includes(name))
  const requiredInSome = (name: string) => objects.some((o) => (o.required ?? []).includes(name))
  const rows: string[] = []
  for (const [name, raw] of Object.entries(properties)) {
    const p = resolve(raw)
    const path = `${prefix}${name}`
    const required = requiredInAll(name) ? 'yes' : requiredInSome(name) ? 'see description' : 'no'
    rows.push(`| \`${path}\` | ${cell(typeOf(p, resolve))} | ${required} | ${cell(p.description ?? raw.description)} |`)
    const items = p.type === 'array' ? resolve(p.items ?? {}) : undefined
    if (items?.properties || items?.anyOf || items?.oneOf) rows.push(...fieldRows(items, resolve, `${path}[].`, depth + 1))
    else if (p.properties) rows.push(...fieldRows(p, resolve, `${path}.`, depth + 1))
  }
  return rows
}

function fieldTable(schema: Json, resolve: (s: Json) => Json): string[] {
  const rows = fieldRows(schema, resolve)
  if (rows.length === 0) return [`${typeOf(schema, resolve)}`, '']
  return ['| field | type | required | description |', '|---|---|---|---|', ...rows, '']
}

function credentials(security: Json[] | undefined): string {
  if (!security || security.length === 0) return 'none (public)'
  return security
    .map((req) =>
      Object.keys(req)
        .map(
          (k) =>
            ({ bearer: 'bearer token', storefrontKey: '`X-Storefront-Key`', guestId: '`X-Guest-Id`', guestIdQuery: '`guest_id` query' })[
              k
            ] ?? k,
        )
        .join(' + '),
    )
    .join('; or ')
}

const json = (value: unknown) => ['```json', JSON.stringify(value, null, 2), '```', '']

export function renderReference(document: Json): string {
  const resolve = resolver(document)
  const out: string[] = [
    '# API reference',
    '',
    '<!-- GENERATED by `npm run docs:reference -w apps/server` from the OpenAPI document the server',
    '     serves at /v1/openapi.json. Do not edit by hand; a test fails when it is stale. -->',
    '',
    `${document.info.title} ${document.info.version}. Every operation of the OpenAPI document, with its credentials,`,
    'parameters, body fields, responses and examples, then the webhook events the service sends.',
    'The behaviour the schemas cannot state (credentials, plans, limits, error codes, ordering,',
    'events) is in [api.md](api.md); error bodies are described in its "Errors" section.',
    '',
    '## Contents',
    '',
  ]
  const tags = (document.tags ?? []) as { name: string; description: string }[]
  const byTag = new Map<string, { path: string; method: string; op: Json }[]>()
  for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method]
      if (!op) continue
      const tag = (op.tags?.[0] as string | undefined) ?? 'other'
      byTag.set(tag, [...(byTag.get(tag) ?? []), { path, method, op }])
    }
  }
  const order = [...tags.map((t) => t.name), ...[...byTag.keys()].filter((k) => !tags.some((t) => t.name === k))]
  for (const tag of order) {
    const ops = byTag.get(tag)
    if (!ops) continue
    out.push(
      `- **${tag}**: ${ops.map(({ path, method, op }) => `[\`${method.toUpperCase()} ${path}\`](#${anchor(`${method} ${path}`)})${op.summary ? '' : ''}`).join(', ')}`,
    )
  }
  out.push('- [Webhook events](#webhook-events)', '')
  for (const tag of order) {
    const ops = byTag.get(tag)
    if (!ops) continue
    const description = tags.find((t) => t.name === tag)?.description
    out.push(`## ${tag}`, '', ...(description ? [description, ''] : []))
    for (const { path, method, op } of ops) {
      out.push(
        `### ${method.toUpperCase()} ${path}`,
        '',
        `**${op.summary}** (\`${op.operationId}\`). Credentials: ${credentials(op.security)}.`,
        '',
        op.description,
        '',
      )
      const params = (op.parameters ?? []) as Json[]
      if (params.length) {
        out.push('| parameter | in | type | required | description |', '|---|---|---|---|---|')
        for (const p of params)
          out.push(
            `| \`${p.name}\` | ${p.in} | ${cell(typeOf(p.schema ?? {}, resolve))} | ${p.required ? 'yes' : 'no'} | ${cell(p.description ?? p.schema?.description)} |`,
          )
        out.push('')
      }
      const body = op.requestBody?.content?.['application/json']
      if (body) {
        out.push('Request body:', '')
        const schema = resolve(body.schema)
        const items = schema.properties?.events?.items
        if (items?.discriminator) {
          out.push(
            ...fieldTable({ ...schema, properties: { events: { ...schema.properties.events, items: { type: 'object' } } } }, resolve),
          )
          for (const member of (items.oneOf ?? []) as Json[]) {
            const m = resolve(member)
            out.push(
              `Event \`${JSON.stringify(m.properties?.type?.enum?.[0] ?? m.properties?.type?.const)}\`: ${m.description ?? ''}`,
              '',
              ...fieldTable(m, resolve),
            )
          }
        } else out.push(...fieldTable(schema, resolve))
        if (body.example !== undefined) out.push('Example:', '', ...json(body.example))
      }
      out.push('| status | meaning |', '|---|---|')
      const successes: [string, Json][] = []
      for (const [status, raw] of Object.entries(op.responses as Record<string, Json>)) {
        const r = resolve(raw)
        out.push(`| ${status} | ${cell(r.description)} |`)
        if (Number(status) < 400) successes.push([status, r])
      }
      out.push('')
      for (const [status, r] of successes) {
        const media = r.content?.['application/json']
        if (!media) continue
        const schema = resolve(media.schema)
        const data = schema.properties?.ok && schema.properties?.data ? schema.properties.data : schema
        out.push(`${status} body${data === schema ? '' : ' (`data` of `{ok: true, data}`)'}:`, '', ...fieldTable(data, resolve))
        if (media.example !== undefined) out.push('Example:', '', ...json(media.example))
      }
    }
  }
  out.push(
    '## Webhook events',
    '',
    'Each event is a signed POST to the endpoint\'s URL; see [api.md](api.md), "Webhooks", for signing, retries and ordering.',
    '',
  )
  for (const [event, item] of Object.entries((document.webhooks ?? {}) as Record<string, Json>)) {
    const post = item.post as Json
    out.push(`### ${event}`, '', `**${post.summary}**. ${post.description}`, '')
    const body = resolve(post.requestBody.content['application/json'].schema)
    out.push(...fieldTable(body, resolve))
  }
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`
}
