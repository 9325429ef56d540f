import { Type } from 'typebox'
import { type OperationDocs, Timestamp } from '../../lib/http-schemas.js'
import { GUEST_ID_BODY, PLATFORM_ID_MAX_LENGTH, platformIdPattern } from '../../lib/platform-ids.js'

/** The longest consent text kept (the sentence the shopper saw beside the e-mail field). */
export const CONSENT_TEXT_MAX = 1000
const EMAIL = Type.String({
  format: 'email',
  maxLength: 254,
  description: 'The e-mail address, at most 254 characters; stored trimmed and lower-cased',
})

export const MerchantContactBody = Type.Object({ email: EMAIL }, { additionalProperties: false })

export const ShopperContactBody = Type.Object(
  {
    email: EMAIL,
    consent: Type.Literal(true, {
      description: 'Must be `true`: the shopper ticked the consent box themselves (anything else is 400 VALIDATION_ERROR)',
    }),
    consent_text: Type.String({
      minLength: 1,
      maxLength: CONSENT_TEXT_MAX,
      pattern: '\\S',
      description: `The consent text the shopper saw and agreed to, as shown (1..${CONSENT_TEXT_MAX} characters); stored with the e-mail`,
    }),
  },
  { additionalProperties: false },
)

export const CustomerParams = Type.Object({
  customerId: Type.String({ pattern: platformIdPattern('Customer'), description: 'Digits or a URL-encoded platform GID' }),
})

export const ContactView = Type.Object({
  ownerType: Type.Union([Type.Literal('customer'), Type.Literal('guest')]),
  ownerId: Type.String({ description: 'The customer id, or the guest id' }),
  email: Type.String(),
  source: Type.Union([Type.Literal('order'), Type.Literal('merchant'), Type.Literal('shopper')], {
    description:
      "`order`: an order of the customer's; `merchant`: the merchant's customer record; `shopper`: given by the shopper with consent",
  }),
  consentText: Type.Union([Type.String(), Type.Null()], {
    description: 'The consent text the shopper agreed to (source `shopper`); else null',
  }),
  consentedAt: Timestamp,
  updatedAt: Timestamp,
  optedOut: Type.Boolean({ description: 'Whether the owner stopped every notification through the opt-out link' }),
})

const OWNER_DOC = Type.Object({
  customerId: Type.String({
    pattern: `^(me|[0-9]{1,32}|gid://[A-Za-z]+/Customer/[0-9]{1,32}|${GUEST_ID_BODY})$`,
    maxLength: PLATFORM_ID_MAX_LENGTH,
    description: 'Customer id (digits or GID), the guest id in guest mode, or `me`',
  }),
})

const WHO =
  'Whom the shop may notify through its channels (Klaviyo, Shopify Flow) of their wishlist: an owner with a contact who has not opted out (docs/notifications.md).'
const contact = {
  ownerType: 'customer',
  ownerId: '1001',
  email: 'ann@example.com',
  source: 'shopper',
  consentText: 'E-mail me when an item of my wishlist is back in stock or cheaper. I can stop this at any time.',
  consentedAt: '2026-01-02T03:04:05.678Z',
  updatedAt: '2026-01-02T03:04:05.678Z',
  optedOut: false,
}

/** OpenAPI metadata of the contact and opt-out routes (plugins/openapi.ts). */
export const contactsOperations: OperationDocs = {
  'PUT /v1/admin/customers/:customerId/contact': {
    operationId: 'putCustomerContact',
    summary: "Set a customer's e-mail for notifications",
    description: `The e-mail of the merchant's own customer record (source \`merchant\`), replacing whatever the shop had for the customer (an order's e-mail, or one the shopper gave). It does not undo an opt-out. ${WHO} Admin token, every plan.`,
    responses: { 200: 'The contact as stored' },
    requestExample: { email: 'ann@example.com' },
    examples: { 200: { ok: true, data: { ...contact, source: 'merchant', consentText: null } } },
  },
  'PUT /v1/wishlists/:customerId/contact': {
    operationId: 'putWishlistContact',
    summary: 'Give an e-mail for notifications (shopper consent)',
    description: `The shopper's own e-mail with their explicit consent (source \`shopper\`): \`consent\` must be \`true\` and \`consent_text\` is the sentence they agreed to, stored with it (400 VALIDATION_ERROR otherwise). Replaces the e-mail the shop had for the owner, and, being the owner's own new consent, lifts an earlier opt-out. customerId is the caller's own customer (customer token, or \`me\`) or guest id (guest mode: storefront key and guest id). Bearer tokens need the starter plan or above; guest mode works on every plan. ${WHO}`,
    responses: { 200: 'The contact as stored' },
    requestExample: { email: 'ann@example.com', consent: true, consent_text: contact.consentText },
    examples: { 200: { ok: true, data: contact } },
    document: { params: OWNER_DOC },
  },
  'DELETE /v1/wishlists/:customerId/contact': {
    operationId: 'deleteWishlistContact',
    summary: 'Withdraw the e-mail for notifications',
    description: `Deletes the owner's contact, whatever its source: nothing is made for the owner any more until a new one is given. No contact: 404. Same credentials as the PUT. ${WHO}`,
    responses: { 200: 'Deleted' },
    examples: { 200: { ok: true, data: { deleted: true } } },
    document: { params: OWNER_DOC },
  },
  'GET /notifications/opt-out/:token': {
    operationId: 'optOutPage',
    summary: 'Opt-out page of a notification link',
    description:
      "The page behind the opt-out link every notification carries (`OptOutURL`): an HTML page in the shopper's language (`?locale=`, else `Accept-Language`) naming the shop, with a button that posts to the same address. No login: the token is the credential (signed by the server, no expiry). An owner who already opted out sees that it is done. A token that does not verify, or names a shop that is gone: 404 with a page saying the link is not valid.",
    responses: { 200: 'The page' },
  },
  'POST /notifications/opt-out/:token': {
    operationId: 'optOut',
    summary: 'Opt out of notifications',
    description:
      "Stops every notification of the owner the token names, through every channel and for any e-mail given later (until the shopper gives one again with consent themselves). The page's button, and RFC 8058 one-click unsubscribe: a mail client's POST with the body `List-Unsubscribe=One-Click` (`application/x-www-form-urlencoded` or `multipart/form-data`), no cookie or login needed. Answers the confirmation page (200); again is the same. A token that does not verify: 404 with a page saying so, nothing recorded.",
    responses: { 200: 'Opted out: the confirmation page' },
  },
}
