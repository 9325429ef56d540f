/**
 * TypeBox schemas of the wishlist endpoints (SPEC: Wishlist items, Multi-wishlist, share,
 * import; docs/api.md, "Wishlists"). One schema validates, types and documents each route.
 */
import { type Static, Type } from 'typebox'
import { Timestamp } from '../../lib/http-schemas.js'
import { type PlatformKind, platformIdPattern } from '../../lib/platform-ids.js'

export const ITEM_LIMIT = 2_500
export const LIST_LIMIT = 20
export const METADATA_MAX_CHARS = 200
export const BULK_DELETE_MAX = 100
export const IMPORT_MAX = 500
export const DEFAULT_LIST_ID = 'default'
export const DEFAULT_LIST_NAME = 'My Wishlist'

const PlatformId = (kind: PlatformKind, description: string) => Type.String({ pattern: platformIdPattern(kind), maxLength: 100, description })
const Handle = Type.String({ minLength: 1, maxLength: 255, description: 'Product handle (URL slug)' })
const Metadata = Type.Object({}, { additionalProperties: true, description: `Arbitrary JSON object, at most ${METADATA_MAX_CHARS} characters serialized` })
const WishlistIdQuery = Type.String({ minLength: 1, maxLength: 64, description: '`default` (when omitted) or a `wl_…` list id' })

export const OwnerParams = Type.Object({
  customerId: Type.String({ minLength: 1, maxLength: 100, description: 'Customer id (digits or GID), the guest id in guest mode, or `me`' }),
})

export const ListQuery = Type.Object({ wishlist_id: Type.Optional(WishlistIdQuery) })

export const ItemsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  wishlist_id: Type.Optional(WishlistIdQuery),
})

export const WishlistItem = Type.Object({
  productId: Type.String(),
  variantId: Type.Union([Type.String(), Type.Null()], { description: "As given on add, else the catalog's default variant; null while unknown" }),
  handle: Type.Optional(Type.String()),
  metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
  addedAt: Timestamp,
})

export const ItemsPage = Type.Object({
  items: Type.Array(WishlistItem),
  count: Type.Integer(),
  total: Type.Integer(),
  has_more: Type.Boolean(),
})

export const AddItemBody = Type.Object({
  product_id: PlatformId('Product', 'Product id (digits or GID)'),
  variant_id: Type.Optional(PlatformId('ProductVariant', 'Variant id; the default variant when omitted')),
  handle: Type.Optional(Handle),
  metadata: Type.Optional(Metadata),
})

export const AddItemResult = Type.Object({ item: WishlistItem, count: Type.Integer({ description: 'Items in the list' }) })

export const DeleteItemParams = Type.Object({
  customerId: OwnerParams.properties.customerId,
  productId: Type.String({ minLength: 1, maxLength: 255, description: 'Product id, or the handle with `by=handle`' }),
})

export const DeleteItemQuery = Type.Object({
  wishlist_id: Type.Optional(WishlistIdQuery),
  by: Type.Optional(Type.Literal('handle')),
})

export const DeleteItemResult = Type.Object({ removed: Type.Boolean(), count: Type.Integer() })

export const BulkDeleteBody = Type.Object({
  product_ids: Type.Optional(Type.Array(PlatformId('Product', 'Product id'), { maxItems: BULK_DELETE_MAX })),
  handles: Type.Optional(Type.Array(Handle, { maxItems: BULK_DELETE_MAX })),
})

export const BulkDeleteResult = Type.Object({ removed_count: Type.Integer(), count: Type.Integer() })

export const MergeBody = Type.Object({
  guest_items: Type.Optional(
    Type.Array(
      Type.Object({
        product_id: PlatformId('Product', 'Product id'),
        handle: Type.Optional(Handle),
        added_at: Type.Optional(Timestamp),
      }),
      { maxItems: ITEM_LIMIT },
    ),
  ),
  guest_id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{8,64}$', description: 'A guest whose stored wishlist is merged too, then deleted' })),
})

export const MergeResult = Type.Object({
  merged_count: Type.Integer(),
  skipped_count: Type.Integer({ description: 'New items not merged because of the item limit' }),
  items: Type.Array(WishlistItem),
  count: Type.Integer(),
})

export const ListRecord = Type.Object({
  wishlistId: Type.String(),
  name: Type.String(),
  itemCount: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})

export const ListNameBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 500, description: 'Trimmed; 1 to 100 characters' }) })

export const ListParams = Type.Object({
  customerId: OwnerParams.properties.customerId,
  listId: Type.String({ minLength: 1, maxLength: 64 }),
})

export const MoveBody = Type.Object({
  product_id: PlatformId('Product', 'Product id'),
  from: Type.String({ minLength: 1, maxLength: 64 }),
  to: Type.String({ minLength: 1, maxLength: 64 }),
})

export const ShareLinkView = Type.Object({ share_url: Type.String({ format: 'uri' }), expires_at: Timestamp })

export const SharedTokenParams = Type.Object({ shareToken: Type.String({ minLength: 1, maxLength: 200 }) })

export const SharedWishlist = Type.Object({
  name: Type.String(),
  items: Type.Array(Type.Object({ productId: Type.String(), variantId: Type.Union([Type.String(), Type.Null()]), addedAt: Timestamp })),
  count: Type.Integer(),
  created_at: Timestamp,
  expires_at: Timestamp,
})
export type SharedView = Static<typeof SharedWishlist>

export const ImportBody = Type.Object({
  items: Type.Array(
    Type.Object({
      customer_id: PlatformId('Customer', 'Customer id'),
      product_id: PlatformId('Product', 'Product id'),
      variant_id: Type.Optional(PlatformId('ProductVariant', 'Variant id')),
      handle: Type.Optional(Handle),
      added_at: Type.Optional(Timestamp),
      metadata: Type.Optional(Metadata),
    }),
    { minItems: 1, maxItems: IMPORT_MAX },
  ),
  dry_run: Type.Optional(Type.Boolean({ default: false })),
})

export const ImportResult = Type.Object({
  customers: Type.Integer(),
  imported: Type.Integer(),
  skipped: Type.Integer(),
  dry_run: Type.Boolean(),
})
