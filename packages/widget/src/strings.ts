/**
 * Every visible string of the widget and its chunks, in English. Keys ending in a plural
 * category (`.one`, `.other`, …: Intl.PluralRules) are chosen by count. Placeholders:
 * {title}, {count}, {rating}, {url}. A locale chunk (locales/*.ts) gives the same keys in
 * another language; a merchant overrides any key with a JSON `data-strings` attribute. The
 * English texts of the guest wishlist page (`enPage`), the review form (`enForm`) and the
 * notification form (`enNotify`) ship in their chunks, which hand them over (`kit.english`).
 *
 * The texts come from the shopper-facing catalogue in the repository's strings/ folder
 * (shared with the server's pages and the theme extension), generated into
 * strings.generated.ts and locales/<tag>.ts by `node scripts/build-strings.mjs`.
 */
export type Strings = Record<string, string>

export { en, enForm, enNotify, enPage, LOCALES } from './strings.generated.js'
