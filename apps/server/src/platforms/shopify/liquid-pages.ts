/**
 * The pieces every app-proxy page shares: Liquid that Shopify renders inside the shop's
 * theme (docs/shopify.md). Text in the shop's language, chosen in Liquid from
 * `request.locale.iso_code`; product title, image, price, variant and availability from
 * `all_products[handle]`; add to cart as plain `POST /cart/add` forms (no script needed).
 *
 * Nothing a shopper or merchant typed reaches Liquid as code (a list name, the merchant's
 * overrides of the texts): text is written `inert` (lib/html-text.ts: HTML-escaped with `{`,
 * `}`, quotes and line breaks as entities), and a handle or id is used only when it is plain.
 */
import { inert } from '../../lib/html-text.js'
import { PAGE_LOCALES, type PageStringKey, pageStrings, type StringOverrides } from '../../lib/page-strings.js'
import type { PageItem } from '../../modules/wishlists/share.service.js'

export const PLAIN_HANDLE = /^[a-z0-9][a-z0-9_-]{0,254}$/
const DIGITS = /^[0-9]{1,20}$/

/** Liquid's `all_products` resolves at most 20 distinct handles per page. */
export const ITEMS_PER_PAGE = 20

/** A `{title}` placeholder of a string, as it reads once the string is inert. */
const placeholder = (name: string) => inert(`{${name}}`)

/** `{{ wl.key }}` with `{name}` replaced by Liquid variables (already escaped). */
export function say(key: PageStringKey, fills: Record<string, string> = {}): string {
  const replaced = Object.entries(fills).map(([name, variable]) => ` | replace: '${placeholder(name)}', ${variable}`)
  return `{{ wl_${key}${replaced.join('')} }}`
}

/**
 * Assigns `wl_<key>` for each key in the page's language: English first, replaced by the
 * language `request.locale.iso_code` names (`pt-BR` and `pt` → Brazilian Portuguese; a
 * regional variant such as `fr-CA` → its language). The merchant's overrides are applied.
 * With `json`, also `wl_json`: those strings under the given names, as a JSON object.
 */
export function liquidStrings(
  keys: readonly PageStringKey[],
  overrides: StringOverrides = {},
  json?: Record<string, PageStringKey>,
): string {
  const assigns = (locale: (typeof PAGE_LOCALES)[number]) => {
    const strings = pageStrings(locale, overrides)
    const lines = keys.map((k) => `  assign wl_${k} = '${inert(strings[k])}'`)
    // `wl_json`: some of them as one JSON object, HTML-escaped for an attribute (a script's data-strings).
    if (json !== undefined)
      lines.push(
        `  assign wl_json = '${inert(JSON.stringify(Object.fromEntries(Object.entries(json).map(([name, k]) => [name, strings[k]]))))}'`,
      )
    return lines.join('\n')
  }
  const others = PAGE_LOCALES.filter((l) => l !== 'en')
  return [
    '{%- liquid',
    "  assign wl_iso = request.locale.iso_code | default: 'en'",
    "  assign wl_lang = wl_iso | split: '-' | first | downcase",
    "  if wl_iso == 'pt-BR' or wl_lang == 'pt'",
    "    assign wl_lang = 'pt-BR'",
    '  endif',
    assigns('en'),
    '  case wl_lang',
    ...others.flatMap((l) => [`  when '${l}'`, assigns(l)]),
    '  endcase',
    '-%}',
  ].join('\n')
}

export type { PageItem }

/**
 * `wl_root`: the shop's root in the page's language (`''` on the primary one, `/fr` on a
 * language's subfolder), so the pages' own links and forms stay in the shopper's language.
 */
export const ROOT_LIQUID =
  "{%- assign wl_root = routes.root_url | default: '/' | escape -%}{%- if wl_root == '/' -%}{%- assign wl_root = '' -%}{%- endif -%}"

/** The hidden field that tells the service where to send the browser back after a form (the page's language root). */
export const ROOT_FIELD = '<input type="hidden" name="return_root" value="{{ wl_root }}">'

/**
 * The error summary of a form that did not go through: first on the page, focused with no
 * script (`autofocus` on a `tabindex="-1"` region), announced (`role="alert"`), each problem a
 * link to the field it is about. `errors`: [text, the field's id] (text already written for the page).
 */
export function errorSummary(heading: string, errors: readonly (readonly [text: string, field: string | null])[]): string {
  if (errors.length === 0) return ''
  return [
    '<div class="wishlist-page__errors wl-errors" role="alert" tabindex="-1" autofocus id="wl-errors">',
    `  <h2>${heading}</h2>`,
    '  <ul>',
    ...errors.map(([text, field]) => `    <li>${field === null ? text : `<a href="#${field}">${text}</a>`}</li>`),
    '  </ul>',
    '</div>',
  ].join('\n')
}

/** The item's quantity, note and purchase, as the list's owner set them (the note is the shopper's text: inert). */
function giftLines(item: PageItem): string[] {
  const lines = [`    <p class="wishlist-page__quantity">${say('itemQuantity', { quantity: `'${item.quantity}'` })}</p>`]
  if (item.note !== null && item.note !== '')
    lines.push(`    <p class="wishlist-page__note">${say('itemNote', { note: `'${inert(item.note)}'` })}</p>`)
  if (item.purchased) lines.push(`    <p class="wishlist-page__purchased"><strong>${say('purchased')}</strong></p>`)
  return lines
}

/**
 * One item: link, image, name, price, quantity, note, whether it was bought, add to cart of
 * the saved quantity (the saved variant when the product still has it, else the product's
 * first available one); ids and "no longer available" when the handle is missing or unknown.
 * Appends `variant:quantity` to `wl_cart` (the add-all form's list) when it can be bought.
 * `extra` is appended inside the item (the wishlist page's remove form). With `gift` (the
 * shared page) a bought item has no add to cart and stays out of add all: a gift is not
 * bought twice.
 */
export function itemLiquid(item: PageItem, n: number, extra = '', opts: { gift?: boolean } = {}): string {
  const quantity = Number.isInteger(item.quantity) && item.quantity >= 1 && item.quantity <= 99 ? item.quantity : 1
  item = { ...item, quantity }
  const gifts = giftLines(item)
  const bought = opts.gift === true && item.purchased
  const ids = `<span class="wishlist-page__ids">${inert(item.productId)}${item.variantId === null ? '' : ` / ${inert(item.variantId)}`}</span>`
  const attrs = `data-wishlist-item data-product-id="${inert(item.productId)}"${item.variantId === null ? '' : ` data-variant-id="${inert(item.variantId)}"`}${item.handle === null ? '' : ` data-handle="${inert(item.handle)}"`}`
  const name = `wl-name-${n}`
  const unknown = [
    `    <span class="wishlist-page__name" id="${name}">${ids}</span>`,
    `    <span class="wishlist-page__unavailable">${say('unavailable')}</span>`,
  ]
  const li = `  <li class="wishlist-page__item${item.purchased ? ' wishlist-page__item--purchased' : ''}" ${attrs}>`
  if (item.handle === null || !PLAIN_HANDLE.test(item.handle))
    return [li, ...unknown, ...gifts, extra, '  </li>'].filter((line) => line !== '').join('\n')
  const pickVariant =
    item.variantId !== null && DIGITS.test(item.variantId)
      ? `    {%- for v in p.variants -%}{%- if v.id == ${item.variantId} -%}{%- assign wl_v = v -%}{%- endif -%}{%- endfor -%}`
      : ''
  return [
    `  {%- assign p = all_products['${item.handle}'] -%}`,
    li,
    '  {%- if p.title -%}',
    '    {%- assign wl_t = p.title | escape -%}',
    '    {%- assign wl_v = p.selected_or_first_available_variant -%}',
    pickVariant,
    '    <a class="wishlist-page__link" href="{{ wl_v.url | default: p.url }}">',
    '      {%- if p.featured_image -%}<img class="wishlist-page__image" src="{{ p.featured_image | image_url: width: 300 }}" alt="" loading="lazy" width="150" height="150">{%- endif -%}',
    `      <span class="wishlist-page__name" id="${name}">{{ wl_t }}</span>`,
    '    </a>',
    '    <span class="wishlist-page__price">{{ wl_v.price | money }}</span>',
    ...gifts,
    ...(bought
      ? []
      : [
          '    {%- if wl_v.available -%}',
          `    {%- assign wl_cart = wl_cart | append: wl_v.id | append: ':${quantity},' -%}`,
          '    <form class="wishlist-page__add" method="post" action="{{ routes.cart_add_url }}">',
          `      <input type="hidden" name="id" value="{{ wl_v.id }}"><input type="hidden" name="quantity" value="${quantity}">`,
          `      <button type="submit" class="button wishlist-page__button" id="wl-add-${n}" aria-labelledby="wl-add-${n} ${name}">${say('addToCart')}</button>`,
          '    </form>',
          '    {%- else -%}',
          `    <span class="wishlist-page__unavailable">${say('unavailable')}</span>`,
          '    {%- endif -%}',
        ]),
    '  {%- else -%}',
    ...unknown,
    ...gifts,
    '  {%- endif -%}',
    extra,
    '  </li>',
  ]
    .filter((line) => line !== '')
    .join('\n')
}

/** The add-all form, for the variants (each with its quantity) the items appended to `wl_cart` (nothing when none can be bought). */
export const addAllLiquid = [
  "{%- assign wl_lines = wl_cart | split: ',' -%}",
  '{%- if wl_lines.size > 0 -%}',
  '<form class="wishlist-page__add-all" method="post" action="{{ routes.cart_add_url }}">',
  '  {%- for line in wl_lines -%}{%- assign wl_line = line | split: \':\' -%}<input type="hidden" name="items[][id]" value="{{ wl_line[0] }}"><input type="hidden" name="items[][quantity]" value="{{ wl_line[1] }}">{%- endfor -%}',
  `  <button type="submit" class="button button--primary wishlist-page__button">${say('addAllToCart')}</button>`,
  '</form>',
  '{%- endif -%}',
].join('\n')

/**
 * The pages' own CSS: the theme styles the rest. Sizes are reserved (no layout shift);
 * colours come from the theme (currentColor), so contrast is the theme's.
 */
export const PAGE_STYLE = [
  '<style>',
  '.wishlist-page{max-width:60rem;margin:2rem auto;padding:0 1.5rem}',
  '.wishlist-page__items{list-style:none;margin:1.5rem 0;padding:0;display:grid;gap:1.25rem}',
  '.wishlist-page__item{display:grid;grid-template-columns:150px 1fr;grid-template-areas:"link link" "price price" "add remove";gap:.5rem 1rem;align-items:center;border-bottom:1px solid rgba(0,0,0,.12);padding-bottom:1.25rem}',
  '@media (min-width:750px){.wishlist-page__item{grid-template-columns:minmax(0,1fr) auto auto auto;grid-template-areas:"link price add remove"}}',
  '.wishlist-page__link{grid-area:link;display:flex;gap:1rem;align-items:center;color:inherit}',
  '.wishlist-page__image{width:150px;height:150px;object-fit:cover;flex:none}',
  '.wishlist-page__price{grid-area:price}',
  '.wishlist-page__add,.wishlist-page__unavailable{grid-area:add}',
  '.wishlist-page__remove{grid-area:remove}',
  '.wishlist-page__add,.wishlist-page__remove,.wishlist-page__add-all,.wishlist-page__share{margin:0}',
  '.wishlist-page__button{min-height:44px;min-width:44px;cursor:pointer}',
  '.wishlist-page__actions{display:flex;flex-wrap:wrap;gap:1rem;align-items:center}',
  '.wishlist-page__share-url{width:100%;max-width:40rem;min-height:44px;font:inherit}',
  '.wishlist-page__pages{display:flex;gap:1.5rem}',
  '.wishlist-page__pages a{display:inline-block;min-height:44px;line-height:44px}',
  '.wishlist-page__quantity,.wishlist-page__note,.wishlist-page__purchased{grid-column:1/-1;margin:0}',
  '.wishlist-page__note{overflow-wrap:anywhere}',
  '.wl-errors{border:2px solid currentColor;padding:0 1rem;margin:1rem 0}',
  '</style>',
].join('')
