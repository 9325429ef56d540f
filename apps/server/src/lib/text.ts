/**
 * Lengths in Unicode code points: what the API's "characters" (docs/api.md, "Limits") means here, and what JSON
 * Schema's `maxLength` counts (an emoji is one character, not two UTF-16 units).
 */
export const codePointLength = (s: string): number => [...s].length

/** An e-mail address as the API accepts one: something@something.tld, no whitespace. */
const EMAIL_ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
export const isEmailAddress = (s: string): boolean => EMAIL_ADDRESS.test(s)

/**
 * Text a backend cannot store as sent is refused on both: U+0000 (PostgreSQL text cannot
 * hold it) and a lone UTF-16 surrogate (no UTF-8 form: stored as U+FFFD).
 */
export interface UnstorableText {
  path: string
  message: string
}

/** How deep a JSON body may nest (objects and arrays); deeper is refused as INVALID_JSON. */
export const MAX_JSON_DEPTH = 64

const NUL_MESSAGE = 'must not contain the NUL character (U+0000)'
const SURROGATE_MESSAGE = 'must be well-formed Unicode (no lone surrogate such as \\ud800)'

// Both checks are native scans (no regular expression, no allocation): a body's strings are
// looked at once each, at JSON.parse's pace (bench/body-scan.ts).
function problem(s: string): string | null {
  if (s.indexOf('\u0000') !== -1) return NUL_MESSAGE
  if (!s.isWellFormed()) return SURROGATE_MESSAGE
  return null
}

/** Whether both backends store `s` as sent (what `findUnstorableText` refuses is not). */
export const isStorableText = (s: string): boolean => problem(s) === null

/** The path segments of a find, deepest first (pushed while the walk unwinds). */
interface Found {
  segments: (string | number)[]
  message: string
}
const TOO_DEEP = 'too deep'
type WalkResult = Found | typeof TOO_DEEP | undefined

/**
 * One pass over a parsed value: the first unstorable string or key, or TOO_DEEP past
 * `maxDepth` levels of objects and arrays. Recursive, but never deeper than `maxDepth`, so a
 * deeply nested value cannot overflow the stack; no path is built unless something is found.
 */
function walk(v: unknown, depth: number, maxDepth: number): WalkResult {
  if (typeof v === 'string') {
    const message = problem(v)
    return message === null ? undefined : { segments: [], message }
  }
  if (typeof v !== 'object' || v === null) return undefined
  if (depth >= maxDepth) return TOO_DEEP
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const item: unknown = v[i]
      if (typeof item !== 'string' && (typeof item !== 'object' || item === null)) continue
      const found = walk(item, depth + 1, maxDepth)
      if (found !== undefined) {
        if (found !== TOO_DEEP) found.segments.push(i)
        return found
      }
    }
    return undefined
  }
  const record = v as Record<string, unknown>
  for (const key in record) {
    const message = problem(key)
    if (message !== null) return { segments: [], message: `keys ${message}` }
    const item = record[key]
    if (typeof item !== 'string' && (typeof item !== 'object' || item === null)) continue
    const found = walk(item, depth + 1, maxDepth)
    if (found !== undefined) {
      if (found !== TOO_DEEP) found.segments.push(key)
      return found
    }
  }
  return undefined
}

const located = (found: Found, root: string): UnstorableText => ({
  path: [root, ...found.segments.reverse()].join('.'),
  message: found.message,
})

/** What one scan of a parsed JSON body finds: nothing, nesting deeper than MAX_JSON_DEPTH, or the first unstorable text. */
export type BodyScan = null | 'too deep' | UnstorableText

/** A parsed body's one scan: depth and unstorable text together (plugged into the JSON parser). */
export function scanBody(value: unknown, root = 'body'): BodyScan {
  const found = walk(value, 0, MAX_JSON_DEPTH)
  if (found === undefined) return null
  return found === TOO_DEEP ? 'too deep' : located(found, root)
}

/** The first unstorable string (or object key) in `value` (a path, a query: shallow values). */
export function findUnstorableText(value: unknown, root: string): UnstorableText | null {
  const found = walk(value, 0, MAX_JSON_DEPTH)
  return found === undefined || found === TOO_DEEP ? null : located(found, root)
}

/** Levels of objects and arrays in `value` exceed `max` (a scalar has none; `{}` has one). */
export function deeperThan(value: unknown, max: number): boolean {
  return walkDepth(value, 0, max)
}
function walkDepth(v: unknown, depth: number, max: number): boolean {
  if (typeof v !== 'object' || v === null) return false
  if (depth >= max) return true
  for (const item of Array.isArray(v) ? v : Object.values(v)) if (walkDepth(item, depth + 1, max)) return true
  return false
}

const FORMAT_CHARACTERS = /\p{Cf}/gu

/**
 * The key list names are compared by: NFKC, format characters (Cf: U+200B, joiners, bidi
 * controls…) removed, case-folded (upper then lower folds `ß`/`SS`, `ς`/`σ`), NFKC again.
 * Empty when the name holds only format characters.
 */
export const comparisonKey = (s: string): string =>
  s.normalize('NFKC').replace(FORMAT_CHARACTERS, '').toUpperCase().toLowerCase().normalize('NFKC')
