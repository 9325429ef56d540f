/**
 * The shared-wishlist page of the app proxy (`/apps/wishlist/shared/{token}`): Liquid that
 * Shopify renders inside the shop's theme, in the shop's language. Each item shows the
 * product's title, image, price and link from `all_products[handle]` with an add-to-cart
 * form of the quantity the owner asked for, the owner's note, and "Purchased" with no add
 * to cart once an order of the owner bought it (a gift is not bought twice); one form adds
 * every available item not yet bought to the cart (`POST /cart/add` with
 * `items[][id]`/`items[][quantity]`). The heading is the list's name: the default list's in
 * the page's language (Shopify gives an app proxy's Liquid no way to set the document's
 * title: the theme titles the page). Shopify resolves at most 20 distinct handles per page:
 * the rest, and items saved without a handle, show their ids. Expired and unknown links
 * render a page saying so. See liquid-pages.ts for what keeps typed text out of Liquid.
 */
import { inert } from '../../lib/html-text.js'
import type { StringOverrides } from '../../lib/page-strings.js'
import { addAllLiquid, itemLiquid, liquidStrings, PAGE_STYLE, type PageItem, ROOT_LIQUID, say } from './liquid-pages.js'

export type SharedPageItem = PageItem

/** `name`: the list's name once renamed; null for the default list, named in the page's language. */
export type SharedPage = { status: 'unknown' | 'expired' } | { status: 'ok'; name: string | null; items: SharedPageItem[] }

const NOTICE_KEYS = ['sharedExpiredTitle', 'sharedExpiredText', 'sharedUnknownTitle', 'sharedUnknownText', 'continueShopping'] as const
const PAGE_KEYS = [
  'sharedEmpty',
  'addToCart',
  'addAllToCart',
  'unavailable',
  'wishlistTitle',
  'purchased',
  'itemQuantity',
  'itemNote',
] as const

/** A page with a heading, a sentence and a way back to the shop. */
export function noticeLiquid(strings: string, title: string, text: string, modifier = 'unavailable'): string {
  return [
    strings,
    PAGE_STYLE,
    `<section class="wishlist-page wishlist-page--${modifier}">`,
    `  <h1>${title}</h1>`,
    `  <p>${text}</p>`,
    `  <p><a href="{{ routes.root_url }}">${say('continueShopping')}</a></p>`,
    '</section>',
    '',
  ].join('\n')
}

/** The Liquid source of the page. */
export function sharedPageLiquid(page: SharedPage, overrides: StringOverrides = {}): string {
  if (page.status !== 'ok') {
    const strings = liquidStrings(NOTICE_KEYS, overrides)
    return page.status === 'expired'
      ? noticeLiquid(strings, say('sharedExpiredTitle'), say('sharedExpiredText'))
      : noticeLiquid(strings, say('sharedUnknownTitle'), say('sharedUnknownText'))
  }
  const items =
    page.items.length === 0
      ? `  <li class="wishlist-page__empty">${say('sharedEmpty')}</li>`
      : page.items.map((item, i) => itemLiquid(item, i, '', { gift: true })).join('\n')
  return [
    liquidStrings([...PAGE_KEYS, 'continueShopping'], overrides),
    ROOT_LIQUID,
    PAGE_STYLE,
    "{%- assign wl_cart = '' -%}",
    '{%- capture wl_list -%}',
    '<ul class="wishlist-page__items">',
    items,
    '</ul>',
    '{%- endcapture -%}',
    '<section class="wishlist-page wishlist-shared" data-wishlist-shared>',
    `  <h1 class="wishlist-page__title">${page.name === null ? say('wishlistTitle') : inert(page.name)}</h1>`,
    '  <div class="wishlist-page__actions">',
    addAllLiquid,
    '  </div>',
    '  {{ wl_list }}',
    '</section>',
    '',
  ].join('\n')
}
