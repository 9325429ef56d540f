/**
 * The page a review invitation's link opens: a form that works with no script, posted back
 * to the same address (`application/x-www-form-urlencoded`), answered with a thank-you page
 * or the form again with each field's problem. Served two ways (docs/shopify.md):
 * - as Liquid inside the shop's theme through the Shopify app proxy
 *   (`https://{shop}/apps/wishlist/reviews/new?invitation=…`), the product's title and image
 *   from `all_products` by the catalog's handle;
 * - as a small HTML page of the service (`PUBLIC_BASE_URL/reviews/new?invitation=…`).
 * Used, expired and unknown invitations, and products the shop no longer has, get a page
 * saying so; never an error body.
 */
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Db } from '../../db/types.js'
import type { RequestContext } from '../auth/auth.types.js'
import type { ReviewsService } from './reviews.service.js'
import type { ErrorDetail } from '../../lib/errors.js'
import { AppError } from '../../lib/errors.js'
import { fill, type PageLocale, type PageStringKey, type PageStrings, type StringOverrides } from '../../lib/page-strings.js'
import { inert, liquidStrings, PAGE_STYLE, PLAIN_HANDLE, say } from '../../lib/liquid-pages.js'
import { invitationsRepo } from './invitations.repo.js'

/** The review form's fields as the browser posts them (the service's page and the app proxy's). */
export const ReviewFormBody = Type.Object(
  {
    invitation: Type.Optional(Type.String({ maxLength: 200 })),
    rating: Type.Optional(Type.String({ maxLength: 10 })),
    title: Type.Optional(Type.String({ maxLength: 1000 })),
    body: Type.Optional(Type.String({ maxLength: 20000 })),
    name: Type.Optional(Type.String({ maxLength: 1000 })),
    email: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { description: "The form's fields, `application/x-www-form-urlencoded`" },
)

export const REVIEW_FIELDS = ['rating', 'title', 'body', 'name', 'email'] as const
export type ReviewField = (typeof REVIEW_FIELDS)[number]
export type ReviewValues = Partial<Record<ReviewField, string>>

export interface InvitationForPage {
  token: string
  shopId: string
  productId: string
  /** The catalog's handle of the product, when the shop's events told it. */
  handle: string | null
  /** The order's e-mail: the form does not ask for it when known. */
  email: string | null
}

export type ReviewPageState =
  /** `shopId`: the invitation's shop, when the token names one (its texts are the page's). */
  | { kind: 'notice'; which: 'used' | 'expired' | 'unknown' | 'productMissing'; shopId?: string }
  | { kind: 'form'; invitation: InvitationForPage; values: ReviewValues; errors: Partial<Record<ReviewField, PageStringKey>>; duplicate?: boolean }
  | { kind: 'thanks'; status: 'pending' | 'approved'; handle: string | null }

const NOTICES = {
  used: ['invitationUsedTitle', 'invitationUsedText'],
  expired: ['invitationExpiredTitle', 'invitationExpiredText'],
  unknown: ['invitationUnknownTitle', 'invitationUnknownText'],
  productMissing: ['productMissingTitle', 'productMissingText'],
} as const satisfies Record<string, readonly [PageStringKey, PageStringKey]>

/** The invitation of a token, and what the page should say about it (`at`: now). */
export async function invitationState(db: Db, token: string | undefined, at: number, shopId?: string): Promise<ReviewPageState> {
  if (token === undefined || !/^[A-Za-z0-9_-]{16,128}$/.test(token)) return { kind: 'notice', which: 'unknown' }
  const row = shopId === undefined ? await invitationsRepo.byToken(db, token) : await invitationsRepo.ofShop(db, shopId, token)
  if (!row) return { kind: 'notice', which: 'unknown' }
  if (row.used_at !== null) return { kind: 'notice', which: 'used', shopId: row.shop_id }
  if (Number(row.expires_at) <= at) return { kind: 'notice', which: 'expired', shopId: row.shop_id }
  const product = await db.selectFrom('catalog_products').select('handle').where('shop_id', '=', row.shop_id).where('product_id', '=', row.product_id).executeTakeFirst()
  return {
    kind: 'form',
    invitation: { token: row.token, shopId: row.shop_id, productId: row.product_id, handle: product?.handle ?? null, email: row.email },
    values: {},
    errors: {},
  }
}

/** A form body's fields as text (the first value of each; anything else is ignored). */
export function formValues(body: unknown): ReviewValues & { invitation?: string } {
  const out: ReviewValues & { invitation?: string } = {}
  if (typeof body !== 'object' || body === null) return out
  const record = body as Record<string, unknown>
  for (const key of [...REVIEW_FIELDS, 'invitation'] as const) {
    const v = record[key]
    const text = Array.isArray(v) ? v[0] : v
    if (typeof text === 'string') out[key] = text
  }
  return out
}

/** The API's field errors (`details[].path`) as the form's fields and their sentences. */
export function fieldErrors(err: unknown): { errors: Partial<Record<ReviewField, PageStringKey>>; duplicate: boolean; notice?: 'used' | 'expired' | 'unknown' } | null {
  if (!(err instanceof AppError)) return null
  if (err.code === 'DUPLICATE_REVIEW') return { errors: {}, duplicate: true }
  if (err.code !== 'VALIDATION_ERROR') return null
  const errors: Partial<Record<ReviewField, PageStringKey>> = {}
  const details = (Array.isArray(err.details) ? err.details : []) as ErrorDetail[]
  for (const d of details) {
    const path = d.path
    if (path.startsWith('body.invitation')) return { errors, duplicate: false, notice: d.message.includes('used') ? 'used' : d.message.includes('expired') ? 'expired' : 'unknown' }
    if (path.startsWith('body.rating')) errors.rating = 'errorRating'
    else if (path.startsWith('body.body')) errors.body = 'errorBody'
    else if (path.startsWith('body.customerName')) errors.name = 'errorName'
    else if (path.startsWith('body.customerEmail')) errors.email = 'errorEmail'
    else if (path.startsWith('body.title')) errors.title = 'errorTitle'
  }
  return { errors, duplicate: false }
}

/** How a piece of text is written: escaped HTML text for the service's page, a Liquid variable for the theme's. */
interface Writer {
  t(key: PageStringKey, fills?: Record<string, string>): string
}

const FIELD_ORDER: ReviewField[] = ['rating', 'title', 'body', 'name', 'email']

function formMarkup(w: Writer, state: Extract<ReviewPageState, { kind: 'form' }>, action: string, heading: string): string {
  const { values, errors, invitation } = state
  const v = (f: ReviewField) => inert(values[f] ?? '')
  const invalid = (f: ReviewField) => (errors[f] === undefined ? '' : ` aria-invalid="true" aria-describedby="wl-review-${f}-error"`)
  const errorLine = (f: ReviewField) => (errors[f] === undefined ? '' : `<p class="wl-review__error" id="wl-review-${f}-error">${w.t(errors[f])}</p>`)
  const wrong = FIELD_ORDER.filter((f) => errors[f] !== undefined)
  const summary =
    wrong.length === 0 && state.duplicate !== true
      ? ''
      : [
          '<div class="wl-review__summary" role="alert" tabindex="-1" id="wl-review-errors">',
          `  <h2>${w.t('errorsHeading')}</h2>`,
          '  <ul>',
          ...(state.duplicate === true ? [`    <li>${w.t('errorDuplicate')}</li>`] : []),
          ...wrong.map((f) => `    <li><a href="#wl-review-${f === 'rating' ? 'rating-5' : f}">${w.t(errors[f] as PageStringKey)}</a></li>`),
          '  </ul>',
          '</div>',
        ].join('\n')
  const required = `<span class="wl-review__required">(${w.t('required')})</span>`
  const stars = [5, 4, 3, 2, 1]
    .map(
      (n) =>
        `    <label class="wl-review__star"><input type="radio" name="rating" value="${n}" id="wl-review-rating-${n}" required${values.rating === String(n) ? ' checked' : ''}> ${w.t(`star${n}` as PageStringKey)}</label>`,
    )
    .join('\n')
  return [
    heading,
    `<p>${w.t('reviewIntro')}</p>`,
    summary,
    `<form class="wl-review__form" method="post" action="${inert(action)}" novalidate>`,
    `  <input type="hidden" name="invitation" value="${inert(invitation.token)}">`,
    `  <fieldset class="wl-review__rating"${errors.rating === undefined ? '' : ' aria-describedby="wl-review-rating-error"'}>`,
    `    <legend>${w.t('rating')} ${required}</legend>`,
    errorLine('rating'),
    stars,
    '  </fieldset>',
    `  <p><label for="wl-review-title">${w.t('reviewTitle')}</label><br><input id="wl-review-title" name="title" maxlength="150" value="${v('title')}"${invalid('title')}>${errorLine('title')}</p>`,
    `  <p><label for="wl-review-body">${w.t('reviewBody')} ${required}</label><br><textarea id="wl-review-body" name="body" rows="6" maxlength="5000" required${invalid('body')}>${v('body')}</textarea>${errorLine('body')}</p>`,
    `  <p><label for="wl-review-name">${w.t('reviewName')} ${required}</label><br><input id="wl-review-name" name="name" maxlength="100" autocomplete="name" required value="${v('name')}"${invalid('name')}>${errorLine('name')}</p>`,
    invitation.email === null
      ? `  <p><label for="wl-review-email">${w.t('reviewEmail')} ${required}</label><br><input id="wl-review-email" name="email" type="email" maxlength="254" autocomplete="email" required value="${v('email')}" aria-describedby="wl-review-email-hint${errors.email === undefined ? '' : ' wl-review-email-error'}"${errors.email === undefined ? '' : ' aria-invalid="true"'}><br><span id="wl-review-email-hint" class="wl-review__hint">${w.t('reviewEmailHint')}</span>${errorLine('email')}</p>`
      : '',
    `  <p><button type="submit" class="button button--primary wl-review__submit">${w.t('submit')}</button></p>`,
    '</form>',
  ]
    .filter((line) => line !== '')
    .join('\n')
}

const REVIEW_STYLE = [
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

const KEYS: PageStringKey[] = [
  'reviewHeading', 'reviewHeadingNoTitle', 'reviewIntro', 'rating', 'star1', 'star2', 'star3', 'star4', 'star5', 'reviewTitle', 'reviewBody', 'reviewName', 'reviewEmail',
  'reviewEmailHint', 'required', 'submit', 'thanksTitle', 'thanksPending', 'thanksPublished', 'errorsHeading', 'errorRating', 'errorBody', 'errorName', 'errorEmail', 'errorTitle',
  'errorDuplicate', 'invitationUsedTitle', 'invitationUsedText', 'invitationExpiredTitle', 'invitationExpiredText', 'invitationUnknownTitle', 'invitationUnknownText',
  'productMissingTitle', 'productMissingText', 'continueShopping',
]

/** The Liquid source of the page (app proxy). */
export function reviewPageLiquid(state: ReviewPageState, action: string, overrides: StringOverrides = {}): string {
  const w: Writer = { t: (key, fills) => say(key, fills) }
  const head = [liquidStrings(KEYS, overrides), PAGE_STYLE, REVIEW_STYLE].join('\n')
  const back = `<p><a href="{{ routes.root_url }}">${say('continueShopping')}</a></p>`
  if (state.kind === 'notice') {
    const [title, text] = NOTICES[state.which]
    return [head, '<section class="wl-review wl-review--notice">', `<h1>${say(title)}</h1>`, `<p>${say(text)}</p>`, back, '</section>', ''].join('\n')
  }
  if (state.kind === 'thanks') {
    const productLink = state.handle !== null && PLAIN_HANDLE.test(state.handle) ? `{%- assign p = all_products['${state.handle}'] -%}{%- if p.title -%}<p><a href="{{ p.url }}">{{ p.title | escape }}</a></p>{%- endif -%}` : ''
    return [head, '<section class="wl-review wl-review--thanks">', `<h1>${say('thanksTitle')}</h1>`, `<p role="status">${say(state.status === 'pending' ? 'thanksPending' : 'thanksPublished')}</p>`, productLink, back, '</section>', ''].join('\n')
  }
  const handle = state.invitation.handle
  const generic = `<h1>${say('reviewHeadingNoTitle')}</h1>`
  if (handle === null || !PLAIN_HANDLE.test(handle)) {
    return [head, '<section class="wl-review">', formMarkup(w, state, action, generic), '</section>', ''].join('\n')
  }
  const heading = [
    '<div class="wl-review__product">',
    '{%- if p.featured_image -%}<img src="{{ p.featured_image | image_url: width: 192 }}" alt="" width="96" height="96">{%- endif -%}',
    `<h1>${say('reviewHeading', { title: 'wl_t' })}</h1>`,
    '</div>',
  ].join('')
  const [missingTitle, missingText] = NOTICES.productMissing
  return [
    head,
    `{%- assign p = all_products['${handle}'] -%}`,
    '{%- if p.title -%}',
    '{%- assign wl_t = p.title | escape -%}',
    '<section class="wl-review">',
    formMarkup(w, state, action, heading),
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

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** A whole HTML document (the service's own page, for shops that are not on Shopify). */
export function reviewPageHtml(state: ReviewPageState, action: string, locale: PageLocale, strings: PageStrings): string {
  const w: Writer = { t: (key, fills) => escapeHtml(fill(strings[key], fills ?? {})) }
  let title: string
  let main: string
  if (state.kind === 'notice') {
    const [t, text] = NOTICES[state.which]
    title = w.t(t)
    main = `<h1>${title}</h1>\n<p>${w.t(text)}</p>`
  } else if (state.kind === 'thanks') {
    title = w.t('thanksTitle')
    main = `<h1>${title}</h1>\n<p role="status">${w.t(state.status === 'pending' ? 'thanksPending' : 'thanksPublished')}</p>`
  } else {
    title = w.t('reviewHeadingNoTitle')
    main = formMarkup(w, state, action, `<h1>${title}</h1>`)
  }
  return [
    '<!doctype html>',
    `<html lang="${locale}">`,
    '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${title}</title>`,
    '<meta name="robots" content="noindex">',
    '<style>body{font:1rem/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1a1a1a;background:#fff;margin:0}a{color:#0645ad}',
    'button{background:#1a1a1a;color:#fff;border:0;border-radius:4px;font:inherit}button:focus-visible,input:focus-visible,textarea:focus-visible,a:focus-visible{outline:3px solid #0645ad;outline-offset:2px}',
    'input,textarea{border:1px solid #595959;border-radius:4px}.wl-review__error{color:#b00020}.wl-review__hint{color:#595959}</style>',
    REVIEW_STYLE,
    '</head>',
    '<body>',
    '<main class="wl-review">',
    main,
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n')
}

/** What a submission needs: the shop's context (its storefront, or the proxied shopper) and the services. */
export interface ReviewSubmitDeps {
  db: Db
  reviews: Pick<ReviewsService, 'submit'>
  clock?: () => number
}

/**
 * Submits the form of an invitation as the reviews API would (`POST /api/v1/reviews` with
 * `invitation`): the same rules, the same errors, turned into the page's states. A rating
 * that is not 1..5 is reported with the other fields' problems, nothing written.
 */
export async function submitReviewForm(deps: ReviewSubmitDeps, ctx: RequestContext, raw: unknown): Promise<ReviewPageState> {
  const form = formValues(raw)
  const state = await invitationState(deps.db, form.invitation, (deps.clock ?? Date.now)(), ctx.shop.id)
  if (state.kind !== 'form') return state
  const invitation = state.invitation
  const values: ReviewValues = { rating: form.rating, title: form.title ?? '', body: form.body ?? '', name: form.name ?? '', email: form.email ?? '' }
  const rating = /^[1-5]$/.test(form.rating ?? '') ? Number(form.rating) : undefined
  const input = {
    // Without a valid rating, an invalid product id makes the service report the other fields and write nothing.
    productId: rating === undefined ? '' : invitation.productId,
    customerEmail: invitation.email ?? values.email ?? '',
    customerName: values.name ?? '',
    rating: rating ?? 1,
    title: values.title,
    body: values.body ?? '',
    invitation: invitation.token,
  }
  try {
    const done = await deps.reviews.submit(ctx, input)
    return { kind: 'thanks', status: done.status, handle: invitation.handle }
  } catch (err) {
    const found = fieldErrors(err)
    if (found === null) throw err
    if (found.notice !== undefined) return { kind: 'notice', which: found.notice }
    const errors = rating === undefined ? { ...found.errors, rating: 'errorRating' as const } : found.errors
    return { kind: 'form', invitation, values, errors, duplicate: found.duplicate }
  }
}

/** Form posts (`application/x-www-form-urlencoded`, 64 KiB at most) as a plain object, in this plugin scope. */
export function acceptFormBodies(app: FastifyInstance): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
    const out: Record<string, string> = {}
    for (const [k, v] of new URLSearchParams(body as string)) if (!(k in out)) out[k] = v
    done(null, out)
  })
}
