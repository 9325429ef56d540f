/**
 * The review page of an invitation (review-page.ts): the form's fields as the browser posts
 * them (the service's page and the app proxy's), the service page's query, and what a page
 * shows (the invitations service's `page` and `submitPage` answer it).
 */
import { type Static, Type } from 'typebox'
import type { PageStringKey } from '../../lib/page-strings.js'

/**
 * What a posted field may carry before the service trims and checks it against the review's
 * limits (REVIEW_LIMITS, reported beside the other fields' problems): a bound on the text as
 * sent, never the rule itself.
 */
const FORM_RAW_MAX = { token: 200, rating: 10, text: 1000, body: 20_000 } as const

/** The review form's fields as the browser posts them. */
export const ReviewFormBody = Type.Object(
  {
    invitation: Type.Optional(Type.String({ maxLength: FORM_RAW_MAX.token })),
    rating: Type.Optional(Type.String({ maxLength: FORM_RAW_MAX.rating })),
    title: Type.Optional(Type.String({ maxLength: FORM_RAW_MAX.text })),
    body: Type.Optional(Type.String({ maxLength: FORM_RAW_MAX.body })),
    name: Type.Optional(Type.String({ maxLength: FORM_RAW_MAX.text })),
    email: Type.Optional(Type.String({ maxLength: FORM_RAW_MAX.text })),
  },
  { description: "The form's fields, `application/x-www-form-urlencoded`" },
)
export type ReviewForm = Static<typeof ReviewFormBody>

/** The service's own page (`/reviews/new`): the invitation, and the shopper's language. */
export const ReviewPageQuery = Type.Object({
  invitation: Type.Optional(
    Type.String({ maxLength: FORM_RAW_MAX.token, description: "The invitation token (from the `review.requested` event's `reviewUrl`)" }),
  ),
  locale: Type.Optional(Type.String({ maxLength: 35, description: 'A language tag (`fr`, `pt-BR`, …); default: from `Accept-Language`' })),
  done: Type.Optional(
    Type.String({
      maxLength: 10,
      description: 'Set by the redirect after the form went in: the thank-you page while the invitation is the one used',
    }),
  ),
})

/** The review's fields on the form, in the form's order. */
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
  | {
      kind: 'form'
      invitation: InvitationForPage
      values: ReviewValues
      errors: Partial<Record<ReviewField, PageStringKey>>
      duplicate?: boolean
    }
  | { kind: 'thanks'; status: 'pending' | 'approved'; handle: string | null; shopId?: string }
