/**
 * fast-check arbitraries of the values a JSON Schema (as the served OpenAPI document states
 * it) accepts: objects with their required and some optional properties (or keys from
 * `propertyNames`), strings by
 * pattern, format and length, bounded numbers, arrays, enums, unions. `$ref`s are resolved
 * against the document's components. Arrays stay short (a request is a sample, not a load
 * test); the caller's `refine` hook sees every generated string so that rules the schema
 * cannot state (no NUL, no lone surrogate) can be applied.
 */
import fc from 'fast-check'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any JSON Schema node of the document
type Schema = Record<string, any>

export interface ArbitraryOptions {
  /** The document's `components.schemas`, for `$ref`s. */
  components: Record<string, Schema>
  /** Longest array generated beyond the schema's `minItems`. */
  maxExtraItems?: number
  /** Every generated string must pass this (e.g. storable text). */
  text?: (s: string) => boolean
}

const ISO_MIN = Date.UTC(2000, 0, 1)
const ISO_MAX = Date.UTC(2099, 11, 31)

export function schemaArbitrary(schema: Schema, opts: ArbitraryOptions): fc.Arbitrary<unknown> {
  const textOk = opts.text ?? (() => true)
  const extra = opts.maxExtraItems ?? 3

  function resolve(s: Schema): Schema {
    if (typeof s.$ref === 'string') {
      const name = s.$ref.replace('#/components/schemas/', '')
      const target = opts.components[name]
      if (!target) throw new Error(`unresolved ${s.$ref}`)
      return resolve(target)
    }
    return s
  }

  function string(s: Schema): fc.Arbitrary<string> {
    // A text the service trims, bounded after trimming (trimmedTextPattern), and a URL as the
    // service takes one (httpUrlPattern): the document states their bounds in the pattern
    // and the description only.
    const trimmed = typeof s.pattern === 'string' ? /^\^\\s\*(\(\?:)?\\S\(\?:\[\\s\\S\]\{0,(\d+)\}\\S\)\?/.exec(s.pattern) : null
    const trimmedMax = trimmed ? Number(trimmed[2]) + 2 : undefined
    const isUrl = typeof s.pattern === 'string' && s.pattern.includes('[Hh][Tt][Tt][Pp]')
    const min = s.minLength ?? 0
    const max = s.maxLength ?? (trimmedMax !== undefined ? trimmedMax + 8 : isUrl ? 2048 : Math.max(min, 40))
    const fits = (v: string) => {
      const n = [...v].length
      return n >= min && n <= max && textOk(v)
    }
    // Leap seconds too (second 60: valid RFC 3339, which Date.parse cannot read).
    if (s.format === 'date-time')
      return fc.oneof(
        fc.integer({ min: ISO_MIN, max: ISO_MAX }).map((ms) => new Date(ms).toISOString()),
        fc.constantFrom('2016-12-31T23:59:60Z', '2016-12-31T18:59:60.5-05:00', '1998-12-31T23:59:60.999Z'),
      )
    if (s.format === 'email') return fc.emailAddress().filter(fits)
    if (s.format === 'uri') {
      const schemes = typeof s.pattern === 'string' && !s.pattern.includes('?') ? ['https'] : ['https', 'http']
      return fc.webUrl({ validSchemes: schemes }).filter((v) => fits(v) && (s.pattern === undefined || new RegExp(s.pattern).test(v)))
    }
    // URLs: web URLs, also with surrounding whitespace, an upper-case scheme and characters a
    // browser escapes but RFC 3986's `uri` format refuses.
    if (isUrl) {
      const schemes = s.pattern.includes('[Ss]?') ? ['https', 'http'] : ['https']
      const url = fc.webUrl({ validSchemes: schemes, withQueryParameters: true })
      const variant = fc
        .tuple(url, fc.constantFrom('', ' ', '\n '), fc.boolean(), fc.constantFrom('', '/é', '/a b', '/{x}'))
        .map(
          ([u, pad, upper, tail]) =>
            `${pad}${upper ? u.replace(/^https?/, (scheme) => scheme.toUpperCase()) : u}${u.includes('?') ? '' : tail}${pad}`,
        )
      return fc.oneof(url, variant).filter((v) => fits(v) && new RegExp(s.pattern).test(v))
    }
    // Edge cases beside the random strings: blank, padded, invisible and non-ASCII text; a
    // trimmed text also at its bound with whitespace around it (which `maxLength` would refuse).
    const edges = fc.constantFrom(
      ' ',
      '   ',
      '\t',
      ' a ',
      '\u200b',
      'a\u200b',
      'é',
      '👩‍💻',
      `${'x'.repeat(trimmedMax ?? max)}`,
      ` ${'y'.repeat(Math.max(0, min - 1))}`,
      ...(trimmedMax === undefined ? [] : [`  ${'z'.repeat(trimmedMax)}\n\t `, ` \u00a0${'é'.repeat(trimmedMax)}\u2028`]),
    )
    if (typeof s.pattern === 'string') {
      const pattern = new RegExp(s.pattern)
      return fc
        .oneof({ arbitrary: fc.stringMatching(pattern), weight: 4 }, { arbitrary: edges, weight: 1 })
        .filter((v) => fits(v) && pattern.test(v))
    }
    return fc
      .oneof({ arbitrary: fc.string({ minLength: min, maxLength: Math.min(max, min + 40) }), weight: 4 }, { arbitrary: edges, weight: 1 })
      .filter(fits)
  }

  function number(s: Schema, integer: boolean): fc.Arbitrary<number> {
    const min = Math.max(s.minimum ?? -1_000_000, Number.MIN_SAFE_INTEGER)
    const max = Math.min(s.maximum ?? 1_000_000, Number.MAX_SAFE_INTEGER)
    const ints = fc.oneof(fc.integer({ min, max: Math.min(max, min + 20) }), fc.integer({ min, max }))
    // Numbers with two decimals at most: exact in binary-to-decimal terms that matter here.
    return integer ? ints : fc.integer({ min: Math.ceil(min * 100), max: Math.floor(Math.min(max, 1e9) * 100) }).map((n) => n / 100)
  }

  function object(s: Schema): fc.Arbitrary<Record<string, unknown>> {
    const properties = (s.properties ?? {}) as Record<string, Schema>
    // An object that also states a oneOf/anyOf of required sets: pick one set; with oneOf,
    // leave out the properties only the other sets require.
    const choices = (s.oneOf ?? s.anyOf) as Schema[] | undefined
    const exclusive = s.oneOf !== undefined
    const branch = choices ? fc.integer({ min: 0, max: choices.length - 1 }) : fc.constant(-1)
    return branch.chain((i) => {
      const chosen = i >= 0 ? resolve((choices as Schema[])[i] as Schema) : undefined
      const required = new Set<string>([...(s.required ?? []), ...(chosen?.required ?? [])])
      const excluded = new Set<string>()
      if (exclusive && choices)
        for (const [j, c] of choices.entries())
          if (j !== i) for (const r of resolve(c).required ?? []) if (!required.has(r)) excluded.add(r)
      const model: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [name, p] of Object.entries(properties))
        if (!excluded.has(name)) model[name] = of({ ...p, ...(chosen?.properties?.[name] ?? {}) })
      return fc.record(model, { requiredKeys: [...required].filter((k) => k in model) })
    })
  }

  /** The schema's own examples and default, now and then: values the service knows (`default` as a list id). */
  function of(raw: Schema): fc.Arbitrary<unknown> {
    const s = resolve(raw)
    const known = [...(Array.isArray(s.examples) ? s.examples : []), ...('default' in s ? [s.default] : [])]
    const generated = generate(s)
    return known.length > 0 ? fc.oneof(fc.constantFrom(...known), generated) : generated
  }

  function generate(s: Schema): fc.Arbitrary<unknown> {
    if ('const' in s) return fc.constant(s.const)
    if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum)
    if (Array.isArray(s.allOf)) {
      // The document uses allOf only for an object and the rules it adds.
      const merged = s.allOf.map(resolve).reduce(
        (a: Schema, b: Schema) => ({
          ...a,
          ...b,
          properties: { ...a.properties, ...b.properties },
          required: [...(a.required ?? []), ...(b.required ?? [])],
        }),
        {},
      )
      return of(merged)
    }
    const choices = (s.oneOf ?? s.anyOf) as Schema[] | undefined
    if (choices && s.type !== 'object' && s.properties === undefined) return fc.oneof(...choices.map(of))
    const type = Array.isArray(s.type) ? s.type : [s.type]
    if (type.length > 1) return fc.oneof(...type.map((t: string) => of({ ...s, type: t })))
    switch (type[0]) {
      case 'string':
        return string(s)
      case 'integer':
        return number(s, true)
      case 'number':
        return number(s, false)
      case 'boolean':
        return fc.boolean()
      case 'null':
        return fc.constant(null)
      case 'array': {
        const minLength = s.minItems ?? 0
        const maxLength = Math.min(s.maxItems ?? minLength + extra, minLength + extra)
        return fc.array(of(s.items ?? {}), { minLength, maxLength })
      }
      case 'object':
        // A map whose keys the document names (`propertyNames: {enum}`), each value by `additionalProperties`.
        if (s.properties === undefined && Array.isArray(s.propertyNames?.enum) && typeof s.additionalProperties === 'object') {
          return fc.dictionary(fc.constantFrom(...(s.propertyNames.enum as string[])), of(s.additionalProperties as Schema), { maxKeys: 3 })
        }
        if (s.properties === undefined && s.additionalProperties !== false && !choices) {
          return fc.dictionary(
            fc.string({ minLength: 1, maxLength: 6 }).filter(textOk),
            fc.oneof(fc.string({ maxLength: 12 }).filter(textOk), fc.integer(), fc.boolean()),
            { maxKeys: 3 },
          )
        }
        return object(s)
      default:
        return fc.jsonValue({ maxDepth: 1 })
    }
  }

  return of(schema)
}
