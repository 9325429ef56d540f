/**
 * The visible text of the pages the service renders for shoppers (the wishlist page, the
 * shared page, the review form of an invitation and their notices), in the storefront
 * languages: English, French, German, Spanish, Italian, Dutch, Portuguese (Brazil) and
 * Japanese. `{title}` is a product title filled in where the text is used.
 *
 * Liquid pages choose the language in Liquid, from the shop's `request.locale.iso_code`
 * (`liquidStrings`); the service's own HTML page from `?locale=` or `Accept-Language`
 * (`negotiateLocale`). `pageStrings` and `liquidStrings` take per-language overrides that
 * win over these texts: the shop's `storefront_strings` setting (`storefrontStrings` checks
 * it). The theme extension's texts are the merchant's to change in its block settings.
 *
 * The texts themselves come from the shopper-facing catalogue in strings/ (one file per
 * language, shared with the widget and the theme extension), generated into
 * page-strings.generated.ts by `node scripts/build-strings.mjs`: edit strings/, not that file.
 */
import { PAGE_LOCALES, type PageLocale, type PageStringKey, PAGE_STRINGS, type PageStrings } from './page-strings.generated.js'

export { PAGE_LOCALES, PAGE_STRINGS }
export type { PageLocale, PageStringKey, PageStrings }

/** Merchant overrides: per language, any key; unknown languages and keys are ignored. */
export type StringOverrides = Partial<Record<string, Partial<Record<string, string>>>>

/** The shop's `storefront_strings` setting, as stored: shipped languages and known keys only. */
export type StorefrontStrings = Partial<Record<PageLocale, Partial<Record<PageStringKey, string>>>>

export const PAGE_STRING_KEYS = Object.keys(PAGE_STRINGS.en) as PageStringKey[]
/** The longest override, in characters (code points). */
export const MAX_OVERRIDE_LENGTH = 500

/**
 * A `storefront_strings` value checked: `null` (no overrides), or an object keyed by shipped
 * language whose values are objects keyed by known string keys, each a text of 1..500
 * characters once trimmed that both backends store (no NUL, no lone surrogate). Texts are
 * stored trimmed; languages left with no text are dropped, and nothing left is `null`.
 * The problems found, each with its path under `root`, when it is not.
 */
export function storefrontStrings(
  value: unknown,
  root: string,
): { ok: true; value: StorefrontStrings | null } | { ok: false; details: { path: string; message: string }[] } {
  const details: { path: string; message: string }[] = []
  const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
  if (value === null) return { ok: true, value: null }
  if (!isRecord(value)) return { ok: false, details: [{ path: root, message: 'must be an object keyed by language, or null' }] }
  const out: StorefrontStrings = {}
  for (const [locale, texts] of Object.entries(value)) {
    const at = `${root}.${locale}`
    if (!(PAGE_LOCALES as readonly string[]).includes(locale)) {
      details.push({ path: at, message: `is not a language of the pages; one of: ${PAGE_LOCALES.join(', ')}` })
      continue
    }
    if (!isRecord(texts)) {
      details.push({ path: at, message: 'must be an object keyed by string key' })
      continue
    }
    const own: Partial<Record<PageStringKey, string>> = {}
    for (const [key, text] of Object.entries(texts)) {
      const path = `${at}.${key}`
      if (!(PAGE_STRING_KEYS as string[]).includes(key))
        details.push({ path, message: 'is not a known string key (docs/api.md lists them)' })
      else if (typeof text !== 'string') details.push({ path, message: 'must be a string' })
      else if (text.includes('\u0000')) details.push({ path, message: 'must not contain the NUL character (U+0000)' })
      else if (!text.isWellFormed()) details.push({ path, message: 'must be well-formed Unicode (no lone surrogate such as \\ud800)' })
      else {
        const trimmed = text.trim()
        const length = [...trimmed].length
        if (length < 1 || length > MAX_OVERRIDE_LENGTH)
          details.push({ path, message: `must be 1..${MAX_OVERRIDE_LENGTH} characters once trimmed` })
        else own[key as PageStringKey] = trimmed
      }
    }
    if (Object.keys(own).length > 0) out[locale as PageLocale] = own
  }
  if (details.length > 0) return { ok: false, details }
  return { ok: true, value: Object.keys(out).length === 0 ? null : out }
}

/** A supported language for a page locale such as `fr`, `fr-CA`, `pt-BR`, `pt-PT` (→ `en`: only Brazilian Portuguese ships). */
export function supportedLocale(raw: string | undefined | null): PageLocale {
  if (!raw) return 'en'
  const tag = raw.trim().toLowerCase()
  if (tag === 'pt-br' || tag === 'pt') return 'pt-BR'
  const lang = tag.split(/[-_]/)[0] ?? ''
  return (PAGE_LOCALES as readonly string[]).includes(lang) && lang !== 'pt' ? (lang as PageLocale) : 'en'
}

/** The best supported language of an `Accept-Language` header (by q-value, then order); `en` when none. */
export function negotiateLocale(acceptLanguage: string | undefined): PageLocale {
  if (!acceptLanguage) return 'en'
  const ranked = acceptLanguage
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';')
      const q = Number(
        params
          .find((p) => p.trim().startsWith('q='))
          ?.trim()
          .slice(2) ?? '1',
      )
      return { tag: tag.trim(), q: Number.isFinite(q) ? q : 0, index }
    })
    .filter((r) => r.tag !== '' && r.tag !== '*' && r.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
  for (const r of ranked) {
    const l = r.tag.toLowerCase()
    if (l === 'pt-br' || l === 'pt' || (PAGE_LOCALES as readonly string[]).includes(l.split('-')[0] ?? '')) {
      if (l.startsWith('pt') && l !== 'pt' && l !== 'pt-br') continue
      return supportedLocale(r.tag)
    }
  }
  return 'en'
}

/** The texts of one language with the merchant's overrides applied (blank overrides are ignored). */
export function pageStrings(locale: PageLocale, overrides: StringOverrides = {}): PageStrings {
  const own = overrides[locale] ?? {}
  const out = { ...PAGE_STRINGS[locale] }
  for (const key of Object.keys(out) as PageStringKey[]) {
    const v = own[key]
    if (typeof v === 'string' && v.trim() !== '') out[key] = v
  }
  return out
}

/** `{title}` filled in. */
export function fill(text: string, values: Record<string, string>): string {
  return text.replace(/\{(\w+)\}/g, (m, name: string) => values[name] ?? m)
}
