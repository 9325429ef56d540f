/**
 * The shopper's wishlist page of the app proxy (`https://{shop}/apps/wishlist`): Liquid that
 * Shopify renders inside the shop's theme, in the shop's language.
 *
 * A logged-in shopper's list is rendered here, 20 items a page (what `all_products` resolves
 * per page), each with image, title, price, quantity, note, whether it was bought, add to
 * cart of the saved quantity and remove, plus "add all to cart" and share: plain forms that
 * work with no script (remove and share post back to the proxy, which sends the browser back
 * to this page with what was done, 303 See Other, or answers with the page and an error
 * summary when nothing could be done). The heading is the list's name: the default list's,
 * in the page's language, until the shopper renames it. A guest has no list the service can name from the
 * signed request: the page holds the container the widget fills from the guest's own id
 * (`[data-wishlist-guest-list]`), a way to log in, and the widget's e-mail alerts form
 * (`[data-wishlist-notify-form]`).
 */
import { inert } from '../../lib/html-text.js'
import type { StringOverrides } from '../../lib/page-strings.js'
import {
  addAllLiquid,
  errorSummary,
  itemLiquid,
  liquidStrings,
  PAGE_STYLE,
  type PageItem,
  ROOT_FIELD,
  ROOT_LIQUID,
  say,
} from './liquid-pages.js'

export type WishlistPage =
  | { kind: 'guest' }
  | {
      kind: 'customer'
      items: PageItem[]
      page: number
      hasMore: boolean
      /** The list's name once the shopper renamed it; null: the default list's name, in the page's language. */
      name: string | null
      /** What the last form did (after its redirect): an item removed, the share link shown. */
      flash?: { removed: true } | { shareUrl: string } | undefined
      /** Why the form just posted did nothing: shown first, in an error summary. */
      error?: 'shareUnavailable' | 'errorRemove' | undefined
    }

const KEYS = [
  'wishlistTitle',
  'wishlistEmpty',
  'addToCart',
  'addAllToCart',
  'remove',
  'removed',
  'share',
  'shareIntro',
  'shareUnavailable',
  'unavailable',
  'loading',
  'login',
  'noscript',
  'previousPage',
  'nextPage',
  'continueShopping',
  'purchased',
  'itemQuantity',
  'itemNote',
  'errorsHeading',
  'errorRemove',
] as const

/** The names the widget's wishlist-page script reads from the guest container's `data-strings`. */
const WIDGET_STRINGS = {
  'page.title': 'wishlistTitle',
  'page.empty': 'wishlistEmpty',
  'page.addToCart': 'addToCart',
  'page.addAllToCart': 'addAllToCart',
  'page.remove': 'remove',
  'page.removed': 'removed',
  'page.share': 'share',
  'page.unavailable': 'unavailable',
  'page.loading': 'loading',
  'page.login': 'login',
} as const

const removeForm = (prefix: string, productId: string, n: number) =>
  [
    `    <form class="wishlist-page__remove" method="post" action="{{ wl_root }}${inert(prefix)}/remove" data-wishlist-remove>`,
    `      <input type="hidden" name="product_id" value="${inert(productId)}">${ROOT_FIELD}`,
    `      <button type="submit" class="button button--secondary wishlist-page__button" id="wl-remove-${n}" aria-labelledby="wl-remove-${n} wl-name-${n}">${say('remove')}</button>`,
    '    </form>',
  ].join('\n')

function guestLiquid(): string {
  return [
    '<section class="wishlist-page" id="wishlist-page" data-wishlist-page data-logged-in="false" data-strings="{{ wl_json }}">',
    `  <h1 class="wishlist-page__title">${say('wishlistTitle')}</h1>`,
    `  <p class="wishlist-page__login"><a href="{{ routes.account_login_url }}">${say('login')}</a></p>`,
    '  <div id="wishlist-guest-list" class="wishlist-page__guest" data-wishlist-guest-list aria-busy="true">',
    `    <p class="wishlist-page__loading">${say('loading')}</p>`,
    `    <noscript><p>${say('noscript')}</p></noscript>`,
    '  </div>',
    // The widget's e-mail alerts form (a guest's consent to notifications about this list).
    '  <div class="wishlist-page__notify" data-wishlist-notify-form data-heading-level="2"></div>',
    '</section>',
  ].join('\n')
}

function customerLiquid(page: Extract<WishlistPage, { kind: 'customer' }>, prefix: string): string {
  const offset = (page.page - 1) * 20
  const items = page.items.map((item, i) => itemLiquid(item, offset + i, removeForm(prefix, item.productId, offset + i))).join('\n')
  const flash = page.flash
  const status = flash !== undefined && 'removed' in flash ? say('removed') : ''
  // The share form's problem points at its button; a remove that named no item of the list at the list.
  const errors =
    page.error === undefined
      ? ''
      : errorSummary(say('errorsHeading'), [
          [say(page.error), page.error === 'shareUnavailable' ? 'wishlist-share-button' : 'wishlist-items'],
        ])
  const shareBlock =
    flash !== undefined && 'shareUrl' in flash
      ? [
          '  <p class="wishlist-page__share-ready">',
          `    <label for="wishlist-share-url">${say('shareIntro')}</label><br>`,
          `    <input id="wishlist-share-url" class="wishlist-page__share-url" type="text" readonly value="${inert(flash.shareUrl)}">`,
          '  </p>',
        ].join('\n')
      : ''
  const pager = [
    page.page > 1 ? `<a href="{{ wl_root }}${inert(prefix)}?page=${page.page - 1}" rel="prev">${say('previousPage')}</a>` : '',
    page.hasMore ? `<a href="{{ wl_root }}${inert(prefix)}?page=${page.page + 1}" rel="next">${say('nextPage')}</a>` : '',
  ].filter((a) => a !== '')
  return [
    "{%- assign wl_cart = '' -%}",
    '{%- capture wl_list -%}',
    page.items.length === 0
      ? `<p class="wishlist-page__empty">${say('wishlistEmpty')}</p>`
      : ['<ul class="wishlist-page__items" id="wishlist-items" tabindex="-1">', items, '</ul>'].join('\n'),
    '{%- endcapture -%}',
    '<section class="wishlist-page" id="wishlist-page" data-wishlist-page data-logged-in="true">',
    errors,
    `  <h1 class="wishlist-page__title">${page.name === null ? say('wishlistTitle') : inert(page.name)}</h1>`,
    `  <p class="wishlist-page__status" role="status">${status}</p>`,
    shareBlock,
    '  <div class="wishlist-page__actions">',
    addAllLiquid,
    page.items.length === 0
      ? ''
      : [
          `  <form class="wishlist-page__share" method="post" action="{{ wl_root }}${inert(prefix)}/share" data-wishlist-share>`,
          `    ${ROOT_FIELD}<button type="submit" class="button button--secondary wishlist-page__button" id="wishlist-share-button">${say('share')}</button>`,
          '  </form>',
        ].join('\n'),
    '  </div>',
    '  {{ wl_list }}',
    pager.length === 0 ? '' : `  <nav class="wishlist-page__pages" aria-label="${say('wishlistTitle')}">${pager.join('')}</nav>`,
    `  <p><a href="{{ routes.root_url }}">${say('continueShopping')}</a></p>`,
    '</section>',
  ]
    .filter((line) => line !== '')
    .join('\n')
}

/** The Liquid source of the page; `prefix` is the proxy's path on the shop (`/apps/wishlist`). */
export function wishlistPageLiquid(page: WishlistPage, prefix: string, overrides: StringOverrides = {}): string {
  return [
    liquidStrings(KEYS, overrides, WIDGET_STRINGS),
    ROOT_LIQUID,
    PAGE_STYLE,
    page.kind === 'guest' ? guestLiquid() : customerLiquid(page, prefix),
    '',
  ].join('\n')
}
