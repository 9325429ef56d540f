import { Type } from 'typebox'
import { Timestamp } from '../../lib/http-schemas.js'

export const Settings = Type.Object({
  multi_wishlist_enabled: Type.Boolean(),
  reviews_auto_approve: Type.Boolean(),
  share_link_ttl_days: Type.Integer({ minimum: 1, maximum: 365 }),
  remove_on_purchase: Type.Boolean(),
})

export const SettingsPatch = Type.Object(
  {
    multi_wishlist_enabled: Type.Optional(Type.Boolean()),
    reviews_auto_approve: Type.Optional(Type.Boolean()),
    share_link_ttl_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 365 })),
    remove_on_purchase: Type.Optional(Type.Boolean()),
  },
  // A misspelt setting must not be silently ignored.
  { additionalProperties: false },
)

export const ShopView = Type.Object({
  id: Type.String(),
  domain: Type.String(),
  plan: Type.String(),
  settings: Settings,
  storefrontKey: Type.String(),
  uninstalledAt: Type.Union([Timestamp, Type.Null()], { description: 'Shopify app mode: when the app was uninstalled from the shop (the storefront key and the app proxy are refused, outbound webhooks wait); null while installed' }),
})

export const ApiKeyView = Type.Object({
  keyId: Type.String(),
  name: Type.String(),
  scope: Type.String(),
  createdAt: Timestamp,
  lastUsedAt: Type.Union([Timestamp, Type.Null()]),
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
