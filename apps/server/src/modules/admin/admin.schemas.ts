import { Type } from 'typebox'
import { type OperationDocs, Timestamp, trimmedTextPattern } from '../../lib/http-schemas.js'
import { CURRENCY_CODES } from '../../lib/money.js'
import { MAX_OVERRIDE_LENGTH, PAGE_LOCALES, PAGE_STRING_KEYS } from '../../lib/page-strings.js'

/** An ISO 4217 code in use, or null: the document lists them all, and the service accepts exactly those. */
const CurrencyOrNull = Type.Unsafe<string | null>({ enum: [...CURRENCY_CODES, null] })
const CURRENCY_RULES =
  "The shop's currency, an ISO 4217 code in use (three capital letters, such as `EUR`): shopper notifications carry it with the product's price (Klaviyo's event value, Shopify Flow's `Currency`). A Shopify shop gets its store currency at install when it has none; the merchant's own choice is kept."

const STRINGS_RULES = `The merchant's texts of the pages the service renders for shoppers (the app proxy's wishlist, shared and review pages, and the service's own review page), keyed by language (\`${PAGE_LOCALES.join('`, `')}\`), then by string key (docs/api.md, "Shops, plans and settings", lists them); each replaces the shipped text of that key in that language. \`{title}\` and \`{page}\` are filled in where the shipped text has them.`

/** The setting as returned: what was stored (checked when written). */
const StorefrontStringsView = Type.Union([Type.Record(Type.String(), Type.Record(Type.String(), Type.String())), Type.Null()], {
  description: `${STRINGS_RULES} Null when the shop uses the shipped texts.`,
})

/**
 * The setting as written, for the document: the languages and keys named (`propertyNames`).
 * The service checks it itself (admin.routes.ts), so that each unknown language or key is
 * reported at its own path.
 */
const StorefrontStringsDoc = Type.Union(
  [
    Type.Unsafe<Record<string, Record<string, string>>>({
      type: 'object',
      propertyNames: { enum: [...PAGE_LOCALES] },
      additionalProperties: {
        type: 'object',
        propertyNames: { enum: PAGE_STRING_KEYS },
        additionalProperties: { type: 'string', pattern: trimmedTextPattern(1, MAX_OVERRIDE_LENGTH) },
      },
    }),
    Type.Null(),
  ],
  {
    description: `${STRINGS_RULES} Replaces the whole setting; \`null\` (or an object with no text) clears it. Texts are trimmed, then 1..${MAX_OVERRIDE_LENGTH} characters; an unknown language or key is 400 VALIDATION_ERROR naming its path.`,
  },
)

export const Settings = Type.Object({
  multi_wishlist_enabled: Type.Boolean({ description: 'Named lists (growth plan or above); default false' }),
  reviews_auto_approve: Type.Boolean({ description: 'Submitted reviews are approved at once; default false' }),
  share_link_ttl_days: Type.Integer({ minimum: 1, maximum: 365, description: 'Lifetime of new share links; default 30' }),
  remove_on_purchase: Type.Boolean({ description: "order.created removes the bought products from the customer's lists; default false" }),
  attribution_window_days: Type.Integer({
    minimum: 1,
    maximum: 90,
    description:
      'Days before an order in which a product the customer held, or a signal that named them, makes its line wishlist-influenced; default 30',
  }),
  notification_cooldown_hours: Type.Integer({
    minimum: 1,
    maximum: 720,
    description:
      "Hours in which a shopper gets at most one notification per product and signal through the shop's channels (Klaviyo, Shopify Flow); default 24",
  }),
  notifications_per_day: Type.Integer({
    minimum: 1,
    maximum: 50,
    description: 'Notifications a shopper gets at most in any 24 hours, all products and signals together; default 3',
  }),
  reminder_after_days: Type.Integer({
    minimum: 1,
    maximum: 90,
    description: 'Days after an item was added, not bought, when its one reminder notification is made; default 7',
  }),
  currency: Type.Unsafe<string | null>({ ...CurrencyOrNull, description: `${CURRENCY_RULES} Null when none is set (the default).` }),
  storefront_strings: StorefrontStringsView,
})

export const SettingsPatch = Type.Object(
  {
    multi_wishlist_enabled: Type.Optional(Type.Boolean()),
    reviews_auto_approve: Type.Optional(Type.Boolean()),
    share_link_ttl_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 365 })),
    remove_on_purchase: Type.Optional(Type.Boolean()),
    attribution_window_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90 })),
    notification_cooldown_hours: Type.Optional(Type.Integer({ minimum: 1, maximum: 720 })),
    notifications_per_day: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
    reminder_after_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90 })),
    currency: Type.Optional(CurrencyOrNull),
    // Checked by the route (storefrontStrings), each problem at its path; the document states the shape.
    storefront_strings: Type.Optional(Type.Unknown()),
  },
  // A misspelt setting must not be silently ignored.
  { additionalProperties: false },
)

const SettingsPatchDoc = Type.Object(
  {
    multi_wishlist_enabled: Type.Optional(Type.Boolean()),
    reviews_auto_approve: Type.Optional(Type.Boolean()),
    share_link_ttl_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 365 })),
    remove_on_purchase: Type.Optional(Type.Boolean()),
    attribution_window_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90 })),
    notification_cooldown_hours: Type.Optional(Type.Integer({ minimum: 1, maximum: 720 })),
    notifications_per_day: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
    reminder_after_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90 })),
    currency: Type.Optional(
      Type.Unsafe<string | null>({
        ...CurrencyOrNull,
        description: `${CURRENCY_RULES} \`null\` clears it; anything else is 400 VALIDATION_ERROR at this field.`,
      }),
    ),
    storefront_strings: Type.Optional(StorefrontStringsDoc),
  },
  { additionalProperties: false },
)

export const ShopView = Type.Object({
  id: Type.String(),
  domain: Type.String({ description: 'e.g. example.myshopify.com' }),
  plan: Type.String({ description: '`free`, `starter`, `growth` or `scale`' }),
  settings: Settings,
  storefrontKey: Type.String({ description: 'The public `sfk_…` key of guest mode and reviews' }),
  uninstalledAt: Type.Union([Timestamp, Type.Null()], {
    description:
      'Shopify app mode: when the app was uninstalled from the shop (the storefront key and the app proxy are refused, outbound webhooks wait); null while installed',
  }),
})

export const ApiKeyView = Type.Object({
  keyId: Type.String({ description: '`ak_…`' }),
  name: Type.String(),
  scope: Type.String({ description: '`admin` or `customer`' }),
  createdAt: Timestamp,
  lastUsedAt: Type.Union([Timestamp, Type.Null()], {
    description: 'The last token exchange (recorded at most once a minute); null when never used',
  }),
})

export const CreateApiKey = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  scope: Type.Optional(Type.Union([Type.Literal('admin'), Type.Literal('customer')])),
})

export const CreatedApiKey = Type.Object({
  keyId: Type.String(),
  secret: Type.String({ description: 'Shown only in this response' }),
  name: Type.String(),
  scope: Type.String(),
  createdAt: Timestamp,
})

export const KeyIdParams = Type.Object({ keyId: Type.String({ minLength: 1, maxLength: 100 }) })

const settings = {
  multi_wishlist_enabled: true,
  reviews_auto_approve: false,
  share_link_ttl_days: 30,
  remove_on_purchase: false,
  attribution_window_days: 30,
  notification_cooldown_hours: 24,
  notifications_per_day: 3,
  reminder_after_days: 7,
  currency: 'EUR',
  storefront_strings: null,
}

/** OpenAPI metadata of the admin routes (plugins/openapi.ts). Admin tokens only, every plan. */
export const adminOperations: OperationDocs = {
  'GET /v1/admin/shop': {
    operationId: 'getShop',
    summary: 'Read the shop',
    description:
      'The shop of the admin token: id, domain, plan (`free`, `starter`, `growth`, `scale`), every setting and the public storefront key.',
    responses: { 200: 'The shop' },
    examples: {
      200: {
        ok: true,
        data: {
          id: 'shp_5c1d2e3f4a5b6c7d',
          domain: 'example.myshopify.com',
          plan: 'growth',
          settings,
          storefrontKey: 'sfk_Jx2…',
          uninstalledAt: null,
        },
      },
    },
  },
  'PATCH /v1/admin/settings': {
    operationId: 'updateSettings',
    summary: 'Change settings',
    description:
      'A flat object of the settings to change; omitted settings keep their values. Unknown fields are refused (400 VALIDATION_ERROR naming the field), so a misspelt setting is never ignored. `share_link_ttl_days` (1..365) applies to links created afterwards; `attribution_window_days` (1..90) to orders received afterwards. The notification frequency (`notification_cooldown_hours` 1..720, `notifications_per_day` 1..50, `reminder_after_days` 1..90) and `currency` (an ISO 4217 code, or null) apply to notifications made afterwards. `storefront_strings` (the texts of the pages shoppers see, by language and string key) is replaced as a whole, and the next page rendered uses it. Returns every setting.',
    responses: { 200: 'Every setting after the change' },
    requestExample: { share_link_ttl_days: 14, storefront_strings: { fr: { wishlistTitle: 'Mes coups de cœur' } } },
    examples: {
      200: { ok: true, data: { ...settings, share_link_ttl_days: 14, storefront_strings: { fr: { wishlistTitle: 'Mes coups de cœur' } } } },
    },
    document: { body: SettingsPatchDoc },
  },
  'GET /v1/admin/api-keys': {
    operationId: 'listApiKeys',
    summary: 'List API keys',
    description:
      'The active API keys of the shop, never their secrets. `lastUsedAt` is the last token exchange, recorded at most once a minute (null when never used).',
    responses: { 200: 'The active keys' },
    examples: {
      200: {
        ok: true,
        data: {
          apiKeys: [
            {
              keyId: 'ak_9f8e7d6c5b4a3210',
              name: 'Storefront server',
              scope: 'admin',
              createdAt: '2026-01-02T03:04:05.678Z',
              lastUsedAt: null,
            },
          ],
        },
      },
    },
  },
  'POST /v1/admin/api-keys': {
    operationId: 'createApiKey',
    summary: 'Create an API key',
    description:
      'Creates a key of scope `admin` (default) or `customer` (may only mint customer tokens). The secret (`sk_…`) is in this response only; the service keeps a hash. A shop holds at most 50 active keys: a 51st is 400 KEY_LIMIT with `details: {limit: 50}`; revoking a key frees its place.',
    responses: { 201: 'The new key, with its secret (shown once)' },
    requestExample: { name: 'Storefront server', scope: 'customer' },
    examples: {
      201: {
        ok: true,
        data: {
          keyId: 'ak_9f8e7d6c5b4a3210',
          secret: 'sk_…',
          name: 'Storefront server',
          scope: 'customer',
          createdAt: '2026-01-02T03:04:05.678Z',
        },
      },
    },
  },
  'DELETE /v1/admin/api-keys/:keyId': {
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key',
    description:
      'Revokes the key: every token minted from it stops working at once on this node and within 5 seconds on the others. Unknown key: 404.',
    responses: { 200: 'Revoked' },
    examples: { 200: { ok: true, data: { deleted: true } } },
  },
  'POST /v1/admin/storefront-key/rotate': {
    operationId: 'rotateStorefrontKey',
    summary: 'Rotate the storefront key',
    description: 'Replaces the storefront key; the old one stops working at once. Update the widget and storefront clients.',
    responses: { 200: 'The new storefront key' },
    examples: { 200: { ok: true, data: { storefrontKey: 'sfk_…' } } },
  },
}
