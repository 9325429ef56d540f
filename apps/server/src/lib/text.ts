/**
 * Lengths in Unicode code points: what the API's "characters" (docs/api.md, "Limits") means here, and what JSON
 * Schema's `maxLength` counts (an emoji is one character, not two UTF-16 units).
 */
export const codePointLength = (s: string): number => [...s].length

/** An e-mail address as the API accepts one: something@something.tld, no whitespace. */
const EMAIL_ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
export const isEmailAddress = (s: string): boolean => EMAIL_ADDRESS.test(s)

/**
/**
 * Text a backend cannot store as sent is refused on both: U+0000 (PostgreSQL text cannot
 * hold it) and a lone UTF-16 surrogate (no UTF-8 form: stored as U+FFFD).
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

export interface UnstorableText {
  path: string
  message: string
}

function problem(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain the NUL character (U+0000)'
  if (LONE_SURROGATE.test(s)) return 'must be well-formed Unicode (no lone surrogate such as \\ud800)'
  return null
}

/** Whether both backends store `s` as sent (what `findUnstorableText` refuses is not). */
export const isStorableText = (s: string): boolean => problem(s) === null

/** The first unstorable string (or object key) in `value`; iterative, so a deeply nested body cannot overflow the stack. */
export function findUnstorableText(value: unknown, root: string): UnstorableText | null {
  const stack: [unknown, string][] = [[value, root]]
  while (stack.length > 0) {
    const [v, path] = stack.pop() as [unknown, string]
    if (typeof v === 'string') {
      const message = problem(v)
      if (message) return { path, message }
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push([v[i], `${path}.${i}`])
    } else if (v !== null && typeof v === 'object') {
      for (const [k, inner] of Object.entries(v)) {
        const message = problem(k)
        if (message) return { path, message: `keys ${message}` }
        stack.push([inner, `${path}.${k}`])
      }
    }
  }
  return null
}

const FORMAT_CHARACTERS = /\p{Cf}/gu

/**
/**
 * The key list names are compared by: NFKC, format characters (Cf: U+200B, joiners, bidi
 * controls…) removed, case-folded (upper then lower folds `ß`/`SS`, `ς`/`σ`), NFKC again.
 * Empty when the name holds only format characters.
 */
export const comparisonKey = (s: string): string => s.normalize('NFKC').replace(FORMAT_CHARACTERS, '').toUpperCase().toLowerCase().normalize('NFKC')
