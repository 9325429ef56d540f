import { Type } from 'typebox'
import type { OperationDocs } from '../../lib/http-schemas.js'
import { platformIdPattern } from '../../lib/platform-ids.js'
import { DEFAULT_PERIOD, PERIODS } from './analytics.periods.js'

export const PeriodQuery = Type.Object(
  {
    period: Type.Union(
      PERIODS.map((p) => Type.Literal(p)),
      { default: DEFAULT_PERIOD, description: 'Today (UTC) and the N − 1 days before it; `1y` = 365 days; `all` from the first event' },
    ),
  },
  { additionalProperties: true },
)

export const TopProductsQuery = Type.Object(
  { limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }) },
  { additionalProperties: true },
)

export const ProductParams = Type.Object({
  productId: Type.String({ pattern: platformIdPattern('Product'), description: 'Digits or a platform GID' }),
})

export const Overview = Type.Object({
  totalWishlistedItems: Type.Integer({ description: 'Adds − removes within the period (negative when more was removed than added)' }),
  activeShoppers: Type.Integer({ description: 'Distinct owners (customers and guests) with an add, remove or share in the period' }),
  wishlistToCartRate: Type.Number({ description: 'Percent of items added in the period that the same owner later cart-added; 2 decimals' }),
})

export const TopProduct = Type.Object({
  productId: Type.String(),
  wishlistCount: Type.Integer(),
  title: Type.Union([Type.String(), Type.Null()], { description: "The catalog's title of the product (from product.updated); null when unknown" }),
  handle: Type.Union([Type.String(), Type.Null()], { description: "The catalog's handle of the product; null when unknown" }),
})
export const TopProducts = Type.Object({ products: Type.Array(TopProduct) })
export const ProductStats = Type.Object({ wishlistCount: Type.Integer() })

export const DailyEntry = Type.Object({
  date: Type.String({ description: 'YYYY-MM-DD (UTC)' }),
  period: Type.String({ description: 'Same as date' }),
  items_added: Type.Integer(),
  items_removed: Type.Integer(),
  unique_shoppers: Type.Integer(),
  cumulative_total: Type.Integer({ description: 'All-time adds − removes at the end of the day' }),
})
export const Daily = Type.Object({ days: Type.Array(DailyEntry) })

const ADMIN = 'Admin token only, every plan (customer tokens and storefront calls get 403). Each answer includes every write acknowledged before the request.'
const PERIOD = '`period` (default `30d`): `7d`, `14d`, `30d`, `90d`, `1y` (365 days) or `all`; "the last N days" is today (UTC) and the N − 1 days before it; `all` starts on the UTC day of the shop\'s first wishlist event.'

/** OpenAPI metadata of the analytics routes (plugins/openapi.ts). */
export const analyticsOperations: OperationDocs = {
  'GET /v1/analytics/overview': {
    operationId: 'getAnalyticsOverview',
    summary: 'Analytics overview of a period',
    description: `\`totalWishlistedItems\` = adds − removes in the period (negative when more was removed); \`activeShoppers\` = distinct owners (customers and guests) with an add, remove or share in the period; \`wishlistToCartRate\` = 100 × adds in the period that the same owner cart-added at or after the add ÷ adds in the period, rounded half up to 2 decimals, 0 when nothing was added. ${PERIOD} ${ADMIN}`,
    responses: { 200: 'The overview' },
    examples: { 200: { ok: true, data: { totalWishlistedItems: 412, activeShoppers: 97, wishlistToCartRate: 18.25 } } },
  },
  'GET /v1/analytics/top-products': {
    operationId: 'getTopProducts',
    summary: 'Most wishlisted products',
    description: `\`limit\` 1..100 (default 10). \`wishlistCount\` = distinct owners holding the product now in any list. Ordered by \`wishlistCount\` descending, then \`productId\` ascending (byte order); products nobody holds are omitted. \`title\` and \`handle\` come from the catalog (\`product.updated\` events, Shopify's product webhooks), null while it does not know them. ${ADMIN}`,
    responses: { 200: 'The products' },
    examples: { 200: { ok: true, data: { products: [{ productId: '7001', wishlistCount: 31, title: 'Classic leather bag', handle: 'classic-leather-bag' }, { productId: '7003', wishlistCount: 12, title: null, handle: null }] } } },
  },
  'GET /v1/analytics/product/:productId': {
    operationId: 'getProductAnalytics',
    summary: "A product's wishlist count",
    description: `Distinct owners holding the product now in any list; 0 when nobody does (also for unknown products). \`productId\` is digits or a URL-encoded GID. ${ADMIN}`,
    responses: { 200: 'The count' },
    examples: { 200: { ok: true, data: { wishlistCount: 31 } } },
  },
  'GET /v1/analytics/daily': {
    operationId: 'getDailyAnalytics',
    summary: 'Daily breakdown of a period',
    description: `One entry per UTC day from the period's first day to today, oldest first, days without activity included as zeros; \`date\` = \`period\` = \`YYYY-MM-DD\`. \`unique_shoppers\`: distinct owners with a wishlist event that day. \`cumulative_total\`: all-time adds − removes at the end of the day. \`all\` on a shop without any activity returns \`days: []\`. ${PERIOD} ${ADMIN}`,
    responses: { 200: 'The days, oldest first' },
    examples: { 200: { ok: true, data: { days: [{ date: '2026-01-02', period: '2026-01-02', items_added: 14, items_removed: 3, unique_shoppers: 9, cumulative_total: 388 }] } } },
  },
}
