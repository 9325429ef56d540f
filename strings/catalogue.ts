/**
 * The shopper-facing texts of the service, in one catalogue: one file per language
 * (strings/<tag>.ts), each with the same keys, from which `node scripts/build-strings.mjs`
 * writes what each package ships (checked in, so every package stays self-contained):
 *
 * - `pages`: the pages the server renders for shoppers (app proxy pages, the review page),
 *   into apps/server/src/lib/page-strings.generated.ts. These keys are also the keys of a
 *   shop's `storefront_strings` overrides.
 * - `widget`: the embeddable widget and its chunks, into packages/widget/src/strings.generated.ts
 *   (English, built in) and packages/widget/src/locales/<tag>.ts (one chunk per language).
 *   These keys are also the keys of the widget's `data-strings` overrides. A key ending in a
 *   plural category (`.one`, `.other`, …: Intl.PluralRules) is chosen by count; a language
 *   gives `.other` and the categories it uses.
 * - `extension`: texts only the theme extension has; its locale files
 *   (extensions/wishlist/locales/<tag>.json) take the launcher's label from `pages.wishlistTitle`
 *   and the review form's opener from `widget['form.open']`.
 *
 * Placeholders ({title}, {count}, {rating}, {url}, {page}) must survive translation.
 */
import type en from './en.ts'

/** The languages, English first (the fallback); `<tag>.ts` holds each one's texts. */
export const LANGUAGES = ['en', 'fr', 'de', 'es', 'it', 'nl', 'pt-BR', 'ja'] as const
export type LanguageTag = (typeof LANGUAGES)[number]

/** What a language file looks like, before the English keys fix it. */
export interface Shape {
  pages: Record<string, string>
  widget: Record<string, string>
  extension: Record<string, string>
}

type PluralCategory = 'zero' | 'one' | 'two' | 'few' | 'many' | 'other'
type WidgetKey = keyof (typeof en)['widget']
type PluralBase = WidgetKey extends infer K ? (K extends `${infer B}.${PluralCategory}` ? B : never) : never
type PlainWidgetKey = Exclude<WidgetKey, `${string}.${PluralCategory}`>

/** One language's texts: every English key (plural forms: `.other` and those the language uses). */
export interface Language {
  pages: Record<keyof (typeof en)['pages'], string>
  widget: Record<PlainWidgetKey | `${PluralBase}.other`, string> &
    Partial<Record<`${PluralBase}.${Exclude<PluralCategory, 'other'>}`, string>>
  extension: Record<keyof (typeof en)['extension'], string>
}
