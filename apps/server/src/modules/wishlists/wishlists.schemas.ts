/**
 * TypeBox schemas of the wishlist endpoints (docs/api.md: Wishlist items, Multi-wishlist, share,
 * import; docs/api.md, "Wishlists"). One schema validates, types and documents each route.
 */
import { type Static, type TSchema, Type } from 'typebox'
import { type OperationDoc, type OperationDocs, Timestamp, TrimmedText } from '../../lib/http-schemas.js'
import { GUEST_ID_BODY, GUEST_ID_PATTERN, PLATFORM_ID_MAX_LENGTH, type PlatformKind, platformIdPattern } from '../../lib/platform-ids.js'

export const ITEM_LIMIT = 2_500
export const LIST_LIMIT = 20
export const METADATA_MAX_CHARS = 200
/** A note's limit after trimming (code points); NOTE_MAX_RAW_CHARS bounds the text as sent. */
export const NOTE_MAX_CHARS = 280
export const NOTE_MAX_RAW_CHARS = 2_000
/** A list name's limit after trimming (code points); LIST_NAME_MAX_RAW_CHARS bounds the text as sent. */
export const LIST_NAME_MAX_CHARS = 100
export const LIST_NAME_MAX_RAW_CHARS = 500
export const QUANTITY_MAX = 99
export const PRIORITIES = ['low', 'normal', 'high'] as const
export const BULK_DELETE_MAX = 100
export const IMPORT_MAX = 500
export const DEFAULT_LIST_ID = 'default'
export const DEFAULT_LIST_NAME = 'My Wishlist'

const PlatformId = (kind: PlatformKind, description: string) =>
  Type.String({ pattern: platformIdPattern(kind), maxLength: PLATFORM_ID_MAX_LENGTH, description })
const Handle = Type.String({ minLength: 1, maxLength: 255, description: 'Product handle (URL slug)' })
const Metadata = Type.Object(
  {},
  { additionalProperties: true, description: `Arbitrary JSON object, at most ${METADATA_MAX_CHARS} characters serialized` },
)
const Quantity = Type.Integer({
  minimum: 1,
  maximum: QUANTITY_MAX,
  description: `How many the shopper wants, 1..${QUANTITY_MAX} (default 1)`,
})
const NOTE = `A note, trimmed, at most ${NOTE_MAX_CHARS} characters; null (or only whitespace) clears it`
/** Bounded here as sent; trimmed and checked against NOTE_MAX_CHARS by the service (item-fields.ts). */
const Note = Type.Union([Type.String({ maxLength: NOTE_MAX_RAW_CHARS }), Type.Null()], { description: NOTE })
/** The note as the document states it: the limit the service applies after trimming. */
const NoteDoc = Type.Union([TrimmedText(0, NOTE_MAX_CHARS, `At most ${NOTE_MAX_CHARS} characters`, NOTE_MAX_RAW_CHARS), Type.Null()], {
  description: NOTE,
})
const Priority = Type.Union(
  PRIORITIES.map((p) => Type.Literal(p)),
  { description: '`low`, `normal` (default) or `high`' },
)
/** The fields add, patch, merge and import take (each optional); `note` is the note schema (validation or document). */
const itemFieldsWith = <N extends TSchema>(note: N) => ({
  quantity: Type.Optional(Quantity),
  note: Type.Optional(note),
  priority: Type.Optional(Priority),
})
const itemFields = itemFieldsWith(Note)
const itemFieldsDoc = itemFieldsWith(NoteDoc)
const WishlistIdQuery = Type.String({
  minLength: 1,
  maxLength: 64,
  description: '`default` (when omitted) or a `wl_…` list id',
  examples: ['default'],
})

const OWNER_ID = 'Customer id (digits or GID), the guest id in guest mode, or `me`'

export const OwnerParams = Type.Object({
  customerId: Type.String({ minLength: 1, maxLength: PLATFORM_ID_MAX_LENGTH, description: OWNER_ID }),
})

export const ListQuery = Type.Object({ wishlist_id: Type.Optional(WishlistIdQuery) })

export const ItemsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  wishlist_id: Type.Optional(WishlistIdQuery),
})

export const WishlistItem = Type.Object({
  productId: Type.String({ description: 'Product id (digits)' }),
  variantId: Type.Union([Type.String(), Type.Null()], {
    description: "As given on add, else the catalog's default variant; null while unknown",
  }),
  handle: Type.Optional(Type.String({ description: 'Present when one was given' })),
  metadata: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Present when one was given' })),
  addedAt: Type.String({ format: 'date-time', description: 'When the item was added (milliseconds, UTC)' }),
  quantity: Type.Integer({ minimum: 1, maximum: QUANTITY_MAX, description: 'How many the shopper wants (1 unless set)' }),
  note: Type.Union([Type.String(), Type.Null()], { description: "The shopper's note; null when unset" }),
  priority: Type.Union([Type.Literal('low'), Type.Literal('normal'), Type.Literal('high')], { description: '`low`, `normal` or `high`' }),
  purchasedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: "When an order of the owner bought the product (the order's time); null until then",
  }),
})

export const ItemsPage = Type.Object({
  items: Type.Array(WishlistItem, { description: 'Newest first' }),
  count: Type.Integer({ description: 'Items in this page' }),
  total: Type.Integer({ description: 'Items in the list' }),
  has_more: Type.Boolean({ description: 'offset + count < total' }),
})

const addItemBody = <F extends typeof itemFields>(fields: F) =>
  Type.Object({
    product_id: PlatformId('Product', 'Product id (digits or GID)'),
    variant_id: Type.Optional(PlatformId('ProductVariant', 'Variant id; the default variant when omitted')),
    handle: Type.Optional(Handle),
    metadata: Type.Optional(Metadata),
    ...fields,
  })
export const AddItemBody = addItemBody(itemFields)

export const AddItemResult = Type.Object({ item: WishlistItem, count: Type.Integer({ description: 'Items in the list' }) })

export const DeleteItemParams = Type.Object({
  customerId: OwnerParams.properties.customerId,
  productId: Type.String({ minLength: 1, maxLength: 255, description: 'Product id, or the handle with `by=handle`' }),
})

export const DeleteItemQuery = Type.Object({
  wishlist_id: Type.Optional(WishlistIdQuery),
  by: Type.Optional(Type.Literal('handle')),
})

const patchItemBody = <F extends typeof itemFields>(fields: F) =>
  Type.Object({
    ...fields,
    variant_id: Type.Optional(PlatformId('ProductVariant', 'Variant id')),
  })
export const PatchItemBody = patchItemBody(itemFields)

export const PatchItemResult = Type.Object({ item: WishlistItem })

export const DeleteItemResult = Type.Object({
  removed: Type.Boolean({ description: 'false when no item matched' }),
  count: Type.Integer({ description: 'Items left in the list' }),
})

const ProductIdItem = PlatformId('Product', 'Product id')

export const BulkDeleteBody = Type.Object({
  product_ids: Type.Optional(Type.Array(ProductIdItem, { maxItems: BULK_DELETE_MAX })),
  handles: Type.Optional(Type.Array(Handle, { maxItems: BULK_DELETE_MAX })),
})

export const BulkDeleteResult = Type.Object({
  removed_count: Type.Integer({ description: 'Items really removed' }),
  count: Type.Integer({ description: 'Items left in the list' }),
})

const guestItems = <F extends typeof itemFields>(fields: F) =>
  Type.Array(
    Type.Object({
      product_id: PlatformId('Product', 'Product id'),
      variant_id: Type.Optional(PlatformId('ProductVariant', 'The variant the guest chose; kept by the merge')),
      handle: Type.Optional(Handle),
      added_at: Type.Optional(Timestamp),
      ...fields,
    }),
    { maxItems: ITEM_LIMIT },
  )
const GuestItems = guestItems(itemFields)
const GuestItemsDoc = guestItems(itemFieldsDoc)
const GuestIdField = Type.String({ pattern: GUEST_ID_PATTERN, description: 'A guest whose stored wishlist is merged too, then deleted' })

export const MergeBody = Type.Object({
  guest_items: Type.Optional(GuestItems),
  guest_id: Type.Optional(GuestIdField),
})

export const MergeResult = Type.Object({
  merged_count: Type.Integer({ description: 'New items merged' }),
  skipped_count: Type.Integer({ description: 'New items not merged because of the item limit' }),
  items: Type.Array(WishlistItem, { description: 'The whole target list after the merge, newest first' }),
  count: Type.Integer({ description: 'Items in the target list' }),
})

export const ListRecord = Type.Object({
  wishlistId: Type.String({ description: '`default` or a `wl_…` id' }),
  name: Type.String({ description: '`My Wishlist` for the default list until renamed' }),
  itemCount: Type.Integer(),
  createdAt: Type.String({ format: 'date-time', description: 'For the default list: when the owner first wrote anything' }),
  updatedAt: Type.String({ format: 'date-time', description: 'Changes on creation and rename' }),
})

export const ListNameBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: LIST_NAME_MAX_RAW_CHARS, description: `Trimmed; 1 to ${LIST_NAME_MAX_CHARS} characters` }),
})

export const ListParams = Type.Object({
  customerId: OwnerParams.properties.customerId,
  listId: Type.String({ minLength: 1, maxLength: 64 }),
})

export const MoveBody = Type.Object({
  product_id: PlatformId('Product', 'Product id'),
  from: Type.String({ minLength: 1, maxLength: 64 }),
  to: Type.String({ minLength: 1, maxLength: 64 }),
})

export const ShareLinkView = Type.Object({
  token: Type.String({ description: 'The share token: the last segment of `share_url`, for `GET /v1/wishlists/shared/{shareToken}`' }),
  share_url: Type.String({ format: 'uri', description: 'PUBLIC_BASE_URL/v1/wishlists/shared/{token}' }),
  expires_at: Timestamp,
})

export const SharedTokenParams = Type.Object({ shareToken: Type.String({ minLength: 1, maxLength: 200 }) })

export const SharedWishlist = Type.Object({
  name: Type.String(),
  items: Type.Array(
    Type.Object({
      productId: Type.String(),
      variantId: Type.Union([Type.String(), Type.Null()]),
      addedAt: Timestamp,
      quantity: Type.Integer(),
      note: Type.Union([Type.String(), Type.Null()]),
      priority: Type.Union([Type.Literal('low'), Type.Literal('normal'), Type.Literal('high')]),
      purchasedAt: Type.Union([Timestamp, Type.Null()]),
    }),
  ),
  count: Type.Integer(),
  created_at: Timestamp,
  expires_at: Timestamp,
})
export type SharedView = Static<typeof SharedWishlist>

const importBody = <F extends typeof itemFields>(fields: F) =>
  Type.Object({
    items: Type.Array(
      Type.Object({
        customer_id: PlatformId('Customer', 'Customer id'),
        product_id: PlatformId('Product', 'Product id'),
        variant_id: Type.Optional(PlatformId('ProductVariant', 'Variant id')),
        handle: Type.Optional(Handle),
        added_at: Type.Optional(Timestamp),
        metadata: Type.Optional(Metadata),
        ...fields,
      }),
      { minItems: 1, maxItems: IMPORT_MAX },
    ),
    dry_run: Type.Optional(Type.Boolean({ default: false })),
  })
export const ImportBody = importBody(itemFields)

export const ImportResult = Type.Object({
  customers: Type.Integer({ description: 'Distinct customer ids in the input' }),
  imported: Type.Integer({ description: 'Items written (or that would be, with dry_run)' }),
  skipped: Type.Integer({ description: 'Input items − imported: already stored, repeated in the call, or beyond the item limit' }),
  dry_run: Type.Boolean(),
})

const OWNER =
  "customerId is a customer id (digits or a URL-encoded GID), the caller's guest id in guest mode, or `me` (the caller's own customer or guest). A customer token reaches only its own customer; guest mode only its own guest id."
const LIST_PARAM =
  "`wishlist_id` (optional) picks the list: `default` when omitted; any other list id needs multi-wishlist (growth plan and the shop's `multi_wishlist_enabled`, else 403 PLAN_UPGRADE_REQUIRED / FEATURE_DISABLED), then an unknown id is 404."
const PLAN = 'Bearer tokens need the starter plan or above (403 PLAN_UPGRADE_REQUIRED); guest mode works on every plan.'
const item = {
  productId: '7001',
  variantId: '70011',
  handle: 'classic-leather-bag',
  addedAt: '2026-01-02T03:04:05.678Z',
  quantity: 1,
  note: null,
  priority: 'normal',
  purchasedAt: null,
}
const ITEM_FIELDS = `\`quantity\` (1..${QUANTITY_MAX}, default 1), \`note\` (trimmed, at most ${NOTE_MAX_CHARS} characters; null or only whitespace clears it) and \`priority\` (\`low\`, \`normal\` default, \`high\`)`
const listRecord = {
  wishlistId: 'wl_2b9c1f0e8d7a6b5c',
  name: 'Gift ideas',
  itemCount: 0,
  createdAt: '2026-01-02T03:04:05.678Z',
  updatedAt: '2026-01-02T03:04:05.678Z',
}

/** OpenAPI metadata of the wishlist, list, share and import routes (plugins/openapi.ts). */
export const wishlistsOperations: OperationDocs = {
  'GET /v1/wishlists/:customerId': {
    operationId: 'getWishlist',
    summary: 'Read a page of a wishlist',
    description: `Items of one list, newest first (\`addedAt\` descending, ties by \`productId\` descending). \`count\` is the number of items in this page, \`total\` all items in the list, \`has_more\` is \`offset + count < total\`. Reading never creates anything. ${OWNER} ${LIST_PARAM} ${PLAN}`,
    responses: { 200: 'The page of items' },
    examples: { 200: { ok: true, data: { items: [item], count: 1, total: 1, has_more: false } } },
  },
  'POST /v1/wishlists/:customerId/items': {
    operationId: 'addWishlistItem',
    summary: 'Add a product to a wishlist',
    description: `Adds \`product_id\` to the list. A new item is 201 and emits \`wishlist.item.added\`; a product already in the list is 200 with the stored item, updating \`variant_id\`, \`handle\`, \`metadata\`, \`quantity\`, \`note\` and \`priority\` where given, keeping \`addedAt\`, emitting nothing. Item fields: ${ITEM_FIELDS}; items in answers always carry \`quantity\`, \`priority\`, \`note\` and \`purchasedAt\` (null until an order of the owner bought the product). An owner holds at most ${ITEM_LIMIT.toLocaleString('en-US')} items across all lists (400 ITEM_LIMIT, \`details: {limit: ${ITEM_LIMIT}}\`; re-adding a present product is still 200). \`metadata\` is a JSON object of at most ${METADATA_MAX_CHARS} characters serialized. Unknown body fields are ignored. ${OWNER} ${LIST_PARAM} ${PLAN}`,
    responses: { 200: 'The product was already in the list (stored fields updated where given)', 201: 'The product was added' },
    requestExample: {
      product_id: '7001',
      variant_id: '70011',
      handle: 'classic-leather-bag',
      metadata: { source: 'pdp' },
      quantity: 2,
      note: 'Size M, navy',
      priority: 'high',
    },
    document: { body: addItemBody(itemFieldsDoc) },
    examples: {
      201: {
        ok: true,
        data: { item: { ...item, metadata: { source: 'pdp' }, quantity: 2, note: 'Size M, navy', priority: 'high' }, count: 1 },
      },
      200: { ok: true, data: { item, count: 1 } },
    },
  },
  'PATCH /v1/wishlists/:customerId/items/:productId': {
    operationId: 'updateWishlistItem',
    summary: "Change an item's quantity, note, priority or variant",
    description: `Changes the given fields of one item and keeps the others (and \`addedAt\`): ${ITEM_FIELDS}, and \`variant_id\`. \`note: null\` clears the note. With \`by=handle\` the last path segment is the item's handle. An item the list does not hold is 404 NOT_FOUND; a bad field is 400 VALIDATION_ERROR naming it, and nothing is written. Emits nothing. ${OWNER} ${LIST_PARAM} ${PLAN}`,
    responses: { 200: 'The item as stored' },
    requestExample: { quantity: 3, note: 'One for each niece', priority: 'high' },
    document: { body: patchItemBody(itemFieldsDoc) },
    examples: { 200: { ok: true, data: { item: { ...item, quantity: 3, note: 'One for each niece', priority: 'high' } } } },
  },
  'POST /v1/wishlists/:customerId/items/bulk-delete': {
    operationId: 'bulkDeleteWishlistItems',
    summary: 'Remove several products and handles',
    description: `Removes the items named by \`product_ids\` and by \`handles\` from one list. At least one of them must be a non-empty array, and together they hold at most ${BULK_DELETE_MAX} entries (400 VALIDATION_ERROR otherwise). \`removed_count\` counts what was really removed; each removal emits \`wishlist.item.removed\`. ${OWNER} ${LIST_PARAM} ${PLAN}`,
    responses: { 200: 'What was removed, and the items left in the list' },
    requestExample: { product_ids: ['7001', '7002'], handles: ['wool-scarf'] },
    examples: { 200: { ok: true, data: { removed_count: 3, count: 1 } } },
    document: {
      body: Type.Union(
        [
          Type.Object({
            product_ids: Type.Array(ProductIdItem, { minItems: 1, maxItems: BULK_DELETE_MAX }),
            handles: Type.Optional(Type.Array(Handle, { maxItems: BULK_DELETE_MAX })),
          }),
          Type.Object({
            product_ids: Type.Optional(Type.Array(ProductIdItem, { maxItems: BULK_DELETE_MAX })),
            handles: Type.Array(Handle, { minItems: 1, maxItems: BULK_DELETE_MAX }),
          }),
        ],
        { description: `At least one of product_ids and handles is a non-empty array; at most ${BULK_DELETE_MAX} entries together` },
      ),
    },
  },
  'DELETE /v1/wishlists/:customerId/items/:productId': {
    operationId: 'removeWishlistItem',
    summary: 'Remove a product (or a handle) from a wishlist',
    description: `Removes one item. With \`by=handle\` the last path segment is the item's handle (matched exactly) instead of the product id. An absent product or handle is 200 with \`removed: false\`. A removal emits \`wishlist.item.removed\`. ${OWNER} ${LIST_PARAM} ${PLAN}`,
    responses: { 200: 'Whether an item was removed, and the items left in the list' },
    examples: { 200: { ok: true, data: { removed: true, count: 2 } } },
  },
  'POST /v1/wishlists/:customerId/merge': {
    operationId: 'mergeGuestWishlist',
    summary: 'Merge a guest wishlist into a customer wishlist',
    description: `At login: merges \`guest_items\` (in the given order), then the stored wishlist of \`guest_id\` (all its lists, newest first) into the list; the first occurrence of a product wins, except that a variant or handle given by a later occurrence (a guest item's \`variant_id\`, or the stored guest item's) fills one the first left out: a missing \`variant_id\` never erases a known one. Products already present are kept as they are. Guest items may carry ${ITEM_FIELDS}; a stored guest item keeps its own. At least one of \`guest_items\` and \`guest_id\` is required (\`guest_items: []\` is allowed). \`added_at\` defaults to now (a future time is stored as now). Items beyond the ${ITEM_LIMIT.toLocaleString('en-US')} limit are not merged and are counted in \`skipped_count\`. The guest's stored wishlist (items, lists, share links) is deleted afterwards. Each new item emits \`wishlist.item.added\`. Customer or admin token only (not guest mode). ${OWNER} ${LIST_PARAM}`,
    responses: { 200: 'What was merged, and the whole target list afterwards' },
    requestExample: {
      guest_items: [
        { product_id: '7003', handle: 'wool-scarf', added_at: '2026-01-01T10:00:00.000Z', quantity: 2, note: 'Grey', priority: 'low' },
      ],
      guest_id: 'g_3f2a9c0d4b1e4f6a8c7d2e1f0a9b8c7d',
    },
    examples: { 200: { ok: true, data: { merged_count: 1, skipped_count: 0, items: [item], count: 1 } } },
    document: {
      body: Type.Union(
        [
          Type.Object({ guest_items: GuestItemsDoc, guest_id: Type.Optional(GuestIdField) }),
          Type.Object({ guest_items: Type.Optional(GuestItemsDoc), guest_id: GuestIdField }),
        ],
        { description: 'guest_items is required unless guest_id is given' },
      ),
    },
  },
  'GET /v1/wishlists/:customerId/lists': {
    operationId: 'listWishlists',
    summary: "List the owner's wishlists",
    description: `The default list first (it exists for every owner without being created; \`wishlistId\` \`default\`, named \`My Wishlist\` until renamed), then named lists by \`createdAt\`. With multi-wishlist inactive (plan below growth or the setting off) only the default list is returned; lists made while it was on are kept and come back when it is on again. ${OWNER}`,
    responses: { 200: 'The lists, default first' },
    examples: {
      200: { ok: true, data: { wishlists: [{ ...listRecord, wishlistId: 'default', name: 'My Wishlist', itemCount: 3 }, listRecord] } },
    },
  },
  'POST /v1/wishlists/:customerId/lists': {
    operationId: 'createWishlist',
    summary: 'Create a named list',
    description: `Needs multi-wishlist (growth plan: 403 PLAN_UPGRADE_REQUIRED; the setting: 403 FEATURE_DISABLED). At most ${LIST_LIMIT} lists per owner, the default list included (400 WISHLIST_LIMIT, checked before the name). The name is trimmed, 1..${LIST_NAME_MAX_CHARS} characters, and unique per owner after NFKC normalization, removal of format characters and case folding (409 LIST_NAME_TAKEN). ${OWNER}`,
    responses: { 201: 'The new list (itemCount 0)' },
    requestExample: { name: 'Gift ideas' },
    examples: { 201: { ok: true, data: { wishlist: listRecord } } },
  },
  'PUT /v1/wishlists/:customerId/lists/:listId': {
    operationId: 'renameWishlist',
    summary: 'Rename a list',
    description: `Renames a named list or the default list (\`listId\` \`default\`), with the rules of create (trimmed, 1..${LIST_NAME_MAX_CHARS} characters, 409 LIST_NAME_TAKEN; a list may be renamed to a variant of its own name). Needs multi-wishlist. ${OWNER}`,
    responses: { 200: 'Renamed' },
    requestExample: { name: 'Birthday' },
    examples: { 200: { ok: true, data: { updated: true } } },
  },
  'DELETE /v1/wishlists/:customerId/lists/:listId': {
    operationId: 'deleteWishlist',
    summary: 'Delete a named list and its items',
    description: `Deletes the list, its items (recorded as analytics removes, no webhooks) and its share links. The default list cannot be deleted (400 DEFAULT_LIST_PROTECTED). Needs multi-wishlist. ${OWNER}`,
    responses: { 200: 'Deleted' },
    examples: { 200: { ok: true, data: { deleted: true } } },
  },
  'POST /v1/wishlists/:customerId/items/move': {
    operationId: 'moveWishlistItem',
    summary: 'Move a product between lists',
    description: `Moves \`product_id\` from list \`from\` to list \`to\`, keeping \`addedAt\`, variant, handle, metadata, quantity, note, priority and \`purchasedAt\`; when the destination already holds the product the source item is just removed. Not in the source list: 400 ITEM_NOT_IN_LIST; \`from\` equal to \`to\`: 400 SAME_LIST; an unknown list: 404. Emits nothing. Needs multi-wishlist. ${OWNER}`,
    responses: { 200: 'Moved' },
    requestExample: { product_id: '7001', from: 'default', to: 'wl_2b9c1f0e8d7a6b5c' },
    examples: { 200: { ok: true, data: { moved: true } } },
  },
  'GET /v1/wishlists/:customerId/share': {
    operationId: 'getShareLink',
    summary: "Get (or create) the list's share link",
    description: `Returns the list's active read-only link, creating one when none is active (a write: it creates the owner, guests included). A new link lives for the shop's \`share_link_ttl_days\` (default 30) and emits \`wishlist.shared\`. Needs the starter plan or above, in every mode. ${OWNER} ${LIST_PARAM}`,
    responses: { 200: 'The active share link' },
    examples: {
      200: {
        ok: true,
        data: {
          token: 'q9K2xY7bT3mN8pL4vR6sW1zA5cE0fH2j',
          share_url: 'https://wishlist.example.com/v1/wishlists/shared/q9K2xY7bT3mN8pL4vR6sW1zA5cE0fH2j',
          expires_at: '2026-02-01T03:04:05.678Z',
        },
      },
    },
  },
  'DELETE /v1/wishlists/:customerId/share': {
    operationId: 'revokeShareLink',
    summary: "Revoke the list's share link",
    description: `Revokes the list's active link (its reads answer 404 from then on). \`revoked\` is false when there was none. ${OWNER} ${LIST_PARAM}`,
    responses: { 200: 'Whether a link was revoked' },
    examples: { 200: { ok: true, data: { revoked: true } } },
  },
  'GET /v1/wishlists/shared/:shareToken': {
    operationId: 'readSharedWishlist',
    summary: 'Read a shared wishlist',
    description:
      'No authentication: the token is the proof. The whole list as it is now (no paging), items with `productId`, `variantId`, `addedAt`, `quantity`, `note`, `priority` and `purchasedAt` only (never `handle` or `metadata`), plus the list `name`, `count`, `created_at` (when the link was made) and `expires_at`. Expired: 410 SHARE_EXPIRED; unknown or revoked (revoked wins over expired): 404. A link to a named list answers 404 while multi-wishlist is inactive; a shop that fell below starter answers 403 PLAN_UPGRADE_REQUIRED. Counted per client address.',
    responses: { 200: 'The shared list' },
    examples: {
      200: {
        ok: true,
        data: {
          name: 'My Wishlist',
          items: [
            {
              productId: '7001',
              variantId: '70011',
              addedAt: '2026-01-02T03:04:05.678Z',
              quantity: 1,
              note: 'Size M',
              priority: 'high',
              purchasedAt: null,
            },
          ],
          count: 1,
          created_at: '2026-01-03T08:00:00.000Z',
          expires_at: '2026-02-02T08:00:00.000Z',
        },
      },
    },
  },
  'POST /v1/wishlists/import': {
    operationId: 'importWishlistItems',
    summary: "Import items into customers' default lists",
    description: `Admin token, growth plan or above. 1..${IMPORT_MAX} items, validated as a whole (one bad item is 400 with its \`index\`, nothing written), then written in one transaction to each customer's default list. Items already there, repeated within the call (after GID normalization) or beyond the ${ITEM_LIMIT.toLocaleString('en-US')} limit are skipped: \`skipped\` = input items − imported. \`customers\` counts distinct customer ids in the input. \`dry_run: true\` returns the same figures and writes nothing. Records analytics adds; emits no webhooks. A second identical import imports 0. Items may carry \`quantity\` (1..${QUANTITY_MAX}), \`note\` (trimmed, at most ${NOTE_MAX_CHARS} characters) and \`priority\`; an item already stored keeps its own.`,
    document: { body: importBody(itemFieldsDoc) },
    responses: { 200: 'The import figures' },
    requestExample: {
      items: [
        { customer_id: '1001', product_id: '7001', handle: 'classic-leather-bag' },
        { customer_id: '1002', product_id: '7002', variant_id: '70021', added_at: '2025-12-24T18:00:00Z' },
      ],
      dry_run: false,
    },
    examples: { 200: { ok: true, data: { customers: 2, imported: 2, skipped: 0, dry_run: false } } },
  },
}

/**
 * The owner segment as the document states it: `me`, a customer id (digits or a GID) or a
 * guest id. The route schema only bounds its length: which of them a caller may use is
 * decided with its credentials (a malformed id is then 400, someone else's 403).
 */
const OwnerIdDoc = Type.String({
  pattern: `^(me|[0-9]{1,32}|gid://[A-Za-z]+/Customer/[0-9]{1,32}|${GUEST_ID_BODY})$`,
  maxLength: PLATFORM_ID_MAX_LENGTH,
  description: OWNER_ID,
})
const ownerParamsDoc: Record<string, TSchema> = {
  'DELETE /v1/wishlists/:customerId/items/:productId': Type.Object({
    customerId: OwnerIdDoc,
    productId: DeleteItemParams.properties.productId,
  }),
  'PATCH /v1/wishlists/:customerId/items/:productId': Type.Object({
    customerId: OwnerIdDoc,
    productId: DeleteItemParams.properties.productId,
  }),
  'PUT /v1/wishlists/:customerId/lists/:listId': Type.Object({ customerId: OwnerIdDoc, listId: ListParams.properties.listId }),
  'DELETE /v1/wishlists/:customerId/lists/:listId': Type.Object({ customerId: OwnerIdDoc, listId: ListParams.properties.listId }),
}
/** A list name as the service takes it: trimmed, then 1..100 characters. */
const ListNameBodyDoc = Type.Object({
  name: TrimmedText(
    1,
    LIST_NAME_MAX_CHARS,
    `1..${LIST_NAME_MAX_CHARS} characters (not only format characters such as U+200B)`,
    LIST_NAME_MAX_RAW_CHARS,
  ),
})
for (const key of ['POST /v1/wishlists/:customerId/lists', 'PUT /v1/wishlists/:customerId/lists/:listId']) {
  const doc = wishlistsOperations[key] as OperationDoc
  doc.document = { ...doc.document, body: ListNameBodyDoc }
}
for (const [key, doc] of Object.entries(wishlistsOperations)) {
  if (!key.includes(':customerId')) continue
  doc.document = { ...doc.document, params: ownerParamsDoc[key] ?? Type.Object({ customerId: OwnerIdDoc }) }
}
