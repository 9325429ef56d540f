/**
 * The shared-wishlist page of the app proxy (`/apps/wishlist/shared/{token}`): Liquid that
 * Shopify renders inside the shop's theme, in the shop's language. Each item shows the
 * product's title, image, price and link from `all_products[handle]` with an add-to-cart
 * form, and one form adds every available item to the cart (`POST /cart/add` with
 * `items[][id]`/`items[][quantity]`). Shopify resolves at most 20 distinct handles per page:
 * the rest, and items saved without a handle, show their ids. Expired and unknown links
 * render a page saying so. See liquid-pages.ts for what keeps typed text out of Liquid.
 */
import { inert } from '../../lib/html-text.js'
import type { StringOverrides } from '../../lib/page-strings.js'
import { addAllLiquid, itemLiquid, liquidStrings, PAGE_STYLE, type PageItem, say } from './liquid-pages.js'

export type SharedPageItem = PageItem

export type SharedPage = { status: 'unknown' | 'expired' } | { status: 'ok'; name: string; items: SharedPageItem[] }

const NOTICE_KEYS = ['sharedExpiredTitle', 'sharedExpiredText', 'sharedUnknownTitle', 'sharedUnknownText', 'continueShopping'] as const
const PAGE_KEYS = ['sharedEmpty', 'addToCart', 'addAllToCart', 'unavailable'] as const

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
      : page.items.map((item, i) => itemLiquid(item, i)).join('\n')
  return [
    liquidStrings([...PAGE_KEYS, 'continueShopping'], overrides),
    PAGE_STYLE,
    "{%- assign wl_cart = '' -%}",
    '{%- capture wl_list -%}',
    '<ul class="wishlist-page__items">',
    items,
    '</ul>',
    '{%- endcapture -%}',
    '<section class="wishlist-page wishlist-shared" data-wishlist-shared>',
    `  <h1 class="wishlist-page__title">${inert(page.name)}</h1>`,
    '  <div class="wishlist-page__actions">',
    addAllLiquid,
    '  </div>',
    '  {{ wl_list }}',
    '</section>',
    '',
  ].join('\n')
}
