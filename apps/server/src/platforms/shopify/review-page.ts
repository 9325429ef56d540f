/**
 * The review page of an invitation inside the shop's theme, through the app proxy
 * (`https://{shop}/apps/wishlist/reviews/new?invitation=…`): Liquid, in the shop's language,
 * the product's title and image from `all_products` by the catalog's handle, and the form of
 * modules/reviews/review-page.ts written with Liquid variables, posted from the page's language
 * subfolder (`routes.root_url`), which the redirect after it keeps.
 */
import type { PageStringKey, StringOverrides } from '../../lib/page-strings.js'
import { type PageWriter, REVIEW_NOTICES, REVIEW_STYLE, reviewFormMarkup } from '../../modules/reviews/review-page.js'
import type { ReviewPageState } from '../../modules/reviews/review-page.schemas.js'
import { liquidStrings, PAGE_STYLE, PLAIN_HANDLE, ROOT_FIELD, ROOT_LIQUID, say } from './liquid-pages.js'

/** The texts the page may say, assigned in the shop's language. */
const KEYS: PageStringKey[] = [
  'reviewHeading',
  'reviewHeadingNoTitle',
  'reviewIntro',
  'rating',
  'star1',
  'star2',
  'star3',
  'star4',
  'star5',
  'reviewTitle',
  'reviewBody',
  'reviewName',
  'reviewEmail',
  'reviewEmailHint',
  'required',
  'submit',
  'thanksTitle',
  'thanksPending',
  'thanksPublished',
  'errorsHeading',
  'errorRating',
  'errorBody',
  'errorName',
  'errorEmail',
  'errorTitle',
  'errorDuplicate',
  'invitationUsedTitle',
  'invitationUsedText',
  'invitationExpiredTitle',
  'invitationExpiredText',
  'invitationUnknownTitle',
  'invitationUnknownText',
  'productMissingTitle',
  'productMissingText',
  'continueShopping',
]

/** The Liquid source of the page; `action` is where its form posts (the proxy's path on the shop). */
export function reviewPageLiquid(state: ReviewPageState, action: string, overrides: StringOverrides = {}): string {
  const w: PageWriter = { t: (key, fills) => say(key, fills) }
  const head = [liquidStrings(KEYS, overrides), ROOT_LIQUID, PAGE_STYLE, REVIEW_STYLE].join('\n')
  // The form posts from, and its redirect comes back to, the page's language subfolder.
  const form = { prefix: '{{ wl_root }}', fields: ROOT_FIELD }
  const back = `<p><a href="{{ routes.root_url }}">${say('continueShopping')}</a></p>`
  if (state.kind === 'notice') {
    const [title, text] = REVIEW_NOTICES[state.which]
    return [
      head,
      '<section class="wl-review wl-review--notice">',
      `<h1>${say(title)}</h1>`,
      `<p>${say(text)}</p>`,
      back,
      '</section>',
      '',
    ].join('\n')
  }
  if (state.kind === 'thanks') {
    const productLink =
      state.handle !== null && PLAIN_HANDLE.test(state.handle)
        ? `{%- assign p = all_products['${state.handle}'] -%}{%- if p.title -%}<p><a href="{{ p.url }}">{{ p.title | escape }}</a></p>{%- endif -%}`
        : ''
    return [
      head,
      '<section class="wl-review wl-review--thanks">',
      `<h1>${say('thanksTitle')}</h1>`,
      `<p role="status">${say(state.status === 'pending' ? 'thanksPending' : 'thanksPublished')}</p>`,
      productLink,
      back,
      '</section>',
      '',
    ].join('\n')
  }
  const handle = state.invitation.handle
  const generic = `<h1>${say('reviewHeadingNoTitle')}</h1>`
  if (handle === null || !PLAIN_HANDLE.test(handle)) {
    return [head, '<section class="wl-review">', reviewFormMarkup(w, state, action, generic, form), '</section>', ''].join('\n')
  }
  const heading = [
    '<div class="wl-review__product">',
    '{%- if p.featured_image -%}<img src="{{ p.featured_image | image_url: width: 192 }}" alt="" width="96" height="96">{%- endif -%}',
    `<h1>${say('reviewHeading', { title: 'wl_t' })}</h1>`,
    '</div>',
  ].join('')
  const [missingTitle, missingText] = REVIEW_NOTICES.productMissing
  return [
    head,
    `{%- assign p = all_products['${handle}'] -%}`,
    '{%- if p.title -%}',
    '{%- assign wl_t = p.title | escape -%}',
    '<section class="wl-review">',
    reviewFormMarkup(w, state, action, heading, form),
    '</section>',
    '{%- else -%}',
    '<section class="wl-review wl-review--notice">',
    `<h1>${say(missingTitle)}</h1>`,
    `<p>${say(missingText)}</p>`,
    back,
    '</section>',
    '{%- endif -%}',
    '',
  ].join('\n')
}
