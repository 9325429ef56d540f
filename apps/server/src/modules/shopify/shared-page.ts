/**
 * The shared-wishlist page of the app proxy: Liquid that Shopify renders inside the shop's
 * theme. Product title, image, price and link come from Liquid's `all_products[handle]`
 * (Shopify resolves at most 20 distinct handles per page; the rest, and items saved without
 * a handle, show their ids).
 *
 * Nothing a shopper typed reaches Liquid as code: text is HTML-escaped with `{` and `}` as
 * entities (so no `{{`/`{%` can form), and a handle is used only when it is a plain handle
 * (lowercase letters, digits, `-` and `_`).
 */
export interface SharedPageItem {
  productId: string
  variantId: string | null
  handle: string | null
}

export type SharedPage = { status: 'unknown' | 'expired' } | { status: 'ok'; name: string; items: SharedPageItem[] }

const PLAIN_HANDLE = /^[a-z0-9][a-z0-9_-]{0,254}$/

/** HTML text that Liquid passes through unchanged. */
export function inert(text: string): string {
  return text.replace(/[&<>"'{}]/g, (c) => `&#${c.charCodeAt(0)};`)
}

function itemLiquid(item: SharedPageItem): string {
  const ids = `<span class="wishlist-shared__ids">${inert(item.productId)}${item.variantId === null ? '' : ` / ${inert(item.variantId)}`}</span>`
  if (item.handle === null || !PLAIN_HANDLE.test(item.handle)) return `  <li class="wishlist-shared__item">${ids}</li>`
  return [
    `  {%- assign p = all_products['${item.handle}'] -%}`,
    '  <li class="wishlist-shared__item">',
    '  {%- if p.title -%}',
    '    <a class="wishlist-shared__link" href="{{ p.url }}">',
    '      {%- if p.featured_image -%}<img class="wishlist-shared__image" src="{{ p.featured_image | image_url: width: 300 }}" alt="{{ p.title | escape }}" loading="lazy" width="150">{%- endif -%}',
    '      <span class="wishlist-shared__title">{{ p.title | escape }}</span>',
    '    </a>',
    '    <span class="wishlist-shared__price">{{ p.price | money }}</span>',
    '  {%- else -%}',
    `    ${ids}`,
    '  {%- endif -%}',
    '  </li>',
  ].join('\n')
}

const notice = (title: string, text: string): string =>
  [
    '<section class="wishlist-shared wishlist-shared--unavailable">',
    `  <h1>${title}</h1>`,
    `  <p>${text}</p>`,
    '  <p><a href="{{ routes.root_url }}">Continue shopping</a></p>',
    '</section>',
    '',
  ].join('\n')

/** The Liquid source of the page. */
export function sharedPageLiquid(page: SharedPage): string {
  if (page.status === 'expired') return notice('This wishlist link has expired', 'Ask the person who shared it for a new link.')
  if (page.status !== 'ok') return notice('This wishlist could not be found', 'The link may have been mistyped or withdrawn.')
  const items = page.items.length === 0 ? '  <li class="wishlist-shared__empty">This wishlist is empty.</li>' : page.items.map(itemLiquid).join('\n')
  return ['<section class="wishlist-shared">', `  <h1>${inert(page.name)}</h1>`, '  <ul class="wishlist-shared__items">', items, '  </ul>', '</section>', ''].join('\n')
}
