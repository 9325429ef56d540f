/**
 * The review page of an invitation, as markup: a form that works with no script, posted back
 * to the same address (`application/x-www-form-urlencoded`), answered with a thank-you page
 * or the form again with each field's problem. Used, expired and unknown invitations, and
 * products the shop no longer has, get a page saying so; never an error body. The form is
 * shared by two renderers, each writing the page's texts its own way (`PageWriter`):
 * - the service's own HTML page (`PUBLIC_BASE_URL/reviews/new?invitation=…`), here;
 * - the Liquid page inside a Shopify shop's theme, through the app proxy
 *   (platforms/shopify/review-page.ts).
 * Whatever the shopper typed is written `inert`, safe in both.
 */
import { escapeHtml, inert, servicePageHtml } from '../../lib/html-text.js'
import { fill, type PageLocale, type PageStringKey, type PageStrings } from '../../lib/page-strings.js'
import { REVIEW_FIELDS, type ReviewField, type ReviewPageState } from './review-page.schemas.js'
import { RATING_MAX, RATING_MIN, REVIEW_LIMITS } from './reviews.schemas.js'

/** The heading and sentence of each notice. */
export const REVIEW_NOTICES = {
  used: ['invitationUsedTitle', 'invitationUsedText'],
  expired: ['invitationExpiredTitle', 'invitationExpiredText'],
  unknown: ['invitationUnknownTitle', 'invitationUnknownText'],
  productMissing: ['productMissingTitle', 'productMissingText'],
} as const satisfies Record<string, readonly [PageStringKey, PageStringKey]>

/** How a text of the page is written: escaped HTML text for the service's page, a Liquid variable for the theme's. */
export interface PageWriter {
  t(key: PageStringKey, fills?: Record<string, string>): string
}

/**
 * The form (`heading` first): every field with its label, its problem and the limit the service
 * applies. `form.prefix` goes before the action as it is (a renderer's own markup: the Liquid
 * page's language root), `form.fields` inside the form (its hidden fields).
 */
export function reviewFormMarkup(
  w: PageWriter,
  state: Extract<ReviewPageState, { kind: 'form' }>,
  action: string,
  heading: string,
  form: { prefix?: string; fields?: string } = {},
): string {
  const { values, errors, invitation } = state
  const v = (f: ReviewField) => inert(values[f] ?? '')
  const invalid = (f: ReviewField) => (errors[f] === undefined ? '' : ` aria-invalid="true" aria-describedby="wl-review-${f}-error"`)
  const errorLine = (f: ReviewField) =>
    errors[f] === undefined ? '' : `<p class="wl-review__error" id="wl-review-${f}-error">${w.t(errors[f])}</p>`
  const wrong = REVIEW_FIELDS.filter((f) => errors[f] !== undefined)
  const summary =
    wrong.length === 0 && state.duplicate !== true
      ? ''
      : [
          '<div class="wl-review__summary" role="alert" tabindex="-1" autofocus id="wl-review-errors">',
          `  <h2>${w.t('errorsHeading')}</h2>`,
          '  <ul>',
          ...(state.duplicate === true ? [`    <li>${w.t('errorDuplicate')}</li>`] : []),
          ...wrong.map(
            (f) =>
              `    <li><a href="#wl-review-${f === 'rating' ? `rating-${RATING_MAX}` : f}">${w.t(errors[f] as PageStringKey)}</a></li>`,
          ),
          '  </ul>',
          '</div>',
        ].join('\n')
  const required = `<span class="wl-review__required">(${w.t('required')})</span>`
  // Highest first, as shoppers read a rating scale.
  const stars = Array.from({ length: RATING_MAX - RATING_MIN + 1 }, (_, i) => RATING_MAX - i)
    .map(
      (n) =>
        `    <label class="wl-review__star"><input type="radio" name="rating" value="${n}" id="wl-review-rating-${n}" required${values.rating === String(n) ? ' checked' : ''}> ${w.t(`star${n}` as PageStringKey)}</label>`,
    )
    .join('\n')
  return [
    heading,
    `<p>${w.t('reviewIntro')}</p>`,
    summary,
    `<form class="wl-review__form" method="post" action="${form.prefix ?? ''}${inert(action)}" novalidate>`,
    `  <input type="hidden" name="invitation" value="${inert(invitation.token)}">${form.fields ?? ''}`,
    `  <fieldset class="wl-review__rating"${errors.rating === undefined ? '' : ' aria-describedby="wl-review-rating-error"'}>`,
    `    <legend>${w.t('rating')} ${required}</legend>`,
    errorLine('rating'),
    stars,
    '  </fieldset>',
    `  <p><label for="wl-review-title">${w.t('reviewTitle')}</label><br><input id="wl-review-title" name="title" maxlength="${REVIEW_LIMITS.title}" value="${v('title')}"${invalid('title')}>${errorLine('title')}</p>`,
    `  <p><label for="wl-review-body">${w.t('reviewBody')} ${required}</label><br><textarea id="wl-review-body" name="body" rows="6" maxlength="${REVIEW_LIMITS.body}" required${invalid('body')}>${v('body')}</textarea>${errorLine('body')}</p>`,
    `  <p><label for="wl-review-name">${w.t('reviewName')} ${required}</label><br><input id="wl-review-name" name="name" maxlength="${REVIEW_LIMITS.name}" autocomplete="name" required value="${v('name')}"${invalid('name')}>${errorLine('name')}</p>`,
    invitation.email === null
      ? `  <p><label for="wl-review-email">${w.t('reviewEmail')} ${required}</label><br><input id="wl-review-email" name="email" type="email" maxlength="${REVIEW_LIMITS.email}" autocomplete="email" required value="${v('email')}" aria-describedby="wl-review-email-hint${errors.email === undefined ? '' : ' wl-review-email-error'}"${errors.email === undefined ? '' : ' aria-invalid="true"'}><br><span id="wl-review-email-hint" class="wl-review__hint">${w.t('reviewEmailHint')}</span>${errorLine('email')}</p>`
      : '',
    `  <p><button type="submit" class="button button--primary wl-review__submit">${w.t('submit')}</button></p>`,
    '</form>',
  ]
    .filter((line) => line !== '')
    .join('\n')
}

/** The form's own CSS, in both renderers (the theme, or the service's page, styles the rest). */
export const REVIEW_STYLE = [
  '<style>',
  '.wl-review{max-width:40rem;margin:2rem auto;padding:0 1.5rem}',
  '.wl-review__form input:not([type=radio]),.wl-review__form textarea{width:100%;min-height:44px;font:inherit;padding:.5rem;box-sizing:border-box}',
  '.wl-review__rating{border:0;padding:0;margin:0 0 1rem}',
  '.wl-review__star{display:flex;gap:.5rem;align-items:center;min-height:44px}',
  '.wl-review__star input{width:1.25rem;height:1.25rem}',
  '.wl-review__error{font-weight:bold;margin:.25rem 0}',
  '.wl-review__summary{border:2px solid currentColor;padding:0 1rem;margin:1rem 0}',
  '.wl-review__submit{min-height:44px;padding:0 1.5rem;cursor:pointer}',
  '.wl-review__product{display:flex;gap:1rem;align-items:center}',
  '.wl-review__product img{width:96px;height:96px;object-fit:cover}',
  '</style>',
].join('')

/** A whole HTML document: the service's own page, for shops outside the configured platforms. */
export function reviewPageHtml(state: ReviewPageState, action: string, locale: PageLocale, strings: PageStrings): string {
  const w: PageWriter = { t: (key, fills) => escapeHtml(fill(strings[key], fills ?? {})) }
  let title: string
  let main: string
  if (state.kind === 'notice') {
    const [t, text] = REVIEW_NOTICES[state.which]
    title = w.t(t)
    main = `<h1>${title}</h1>\n<p>${w.t(text)}</p>`
  } else if (state.kind === 'thanks') {
    title = w.t('thanksTitle')
    main = `<h1>${title}</h1>\n<p role="status">${w.t(state.status === 'pending' ? 'thanksPending' : 'thanksPublished')}</p>`
  } else {
    title = w.t('reviewHeadingNoTitle')
    main = reviewFormMarkup(w, state, action, `<h1>${title}</h1>`)
    // A form that came back with problems says so first in the tab's title.
    if (Object.keys(state.errors).length > 0 || state.duplicate === true)
      title = escapeHtml(fill(strings.errorDocumentTitle, { title: strings.reviewHeadingNoTitle }))
  }
  return servicePageHtml({
    locale,
    title,
    head: [
      '<style>body{font:1rem/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1a1a1a;background:#fff;margin:0}a{color:#0645ad}',
      'button{background:#1a1a1a;color:#fff;border:0;border-radius:4px;font:inherit}button:focus-visible,input:focus-visible,textarea:focus-visible,a:focus-visible{outline:3px solid #0645ad;outline-offset:2px}',
      'input,textarea{border:1px solid #595959;border-radius:4px}.wl-review__error{color:#b00020}.wl-review__hint{color:#595959}</style>',
      REVIEW_STYLE,
    ],
    main,
    mainClass: 'wl-review',
  })
}
