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
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
    sort: Type.Union([Type.Literal('wishlists'), Type.Literal('revenue')], {
      default: 'wishlists',
      description:
        "`wishlists` (default): by wishlistCount; `revenue`: by wishlist-influenced revenue in the shop's most frequent currency",
    }),
  },
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

export const Money = Type.Object({
  currency: Type.String({ description: 'ISO 4217 code' }),
  amount: Type.String({ description: 'Decimal string with the currency\'s minor-unit digits ("20.00" EUR, "1500" JPY)' }),
})
const Revenue = Type.Array(Money, {
  description: 'Wishlist-influenced revenue per currency (never summed across currencies), by currency code',
})
const Purchases = Type.Integer({ description: 'Wishlist-influenced order lines of the product' })
export const TopProduct = Type.Object({
  productId: Type.String(),
  wishlistCount: Type.Integer(),
  purchases: Purchases,
  revenue: Revenue,
  title: Type.Union([Type.String(), Type.Null()], {
    description: "The catalog's title of the product (from product.updated); null when unknown",
  }),
  handle: Type.Union([Type.String(), Type.Null()], { description: "The catalog's handle of the product; null when unknown" }),
})
export const TopProducts = Type.Object({ products: Type.Array(TopProduct) })
export const ProductStats = Type.Object({ wishlistCount: Type.Integer(), purchases: Purchases, revenue: Revenue })

export const Conversions = Type.Object({
  period: Type.String({ description: 'The period asked for' }),
  ordersInfluenced: Type.Integer({ description: 'Orders of the period with at least one wishlist-influenced line' }),
  linesInfluenced: Type.Integer({ description: 'Wishlist-influenced order lines of the period' }),
  revenueInfluenced: Revenue,
  wishlistToPurchaseRate: Type.Number({ description: 'Percent of items added in the period that the same owner later bought; 2 decimals' }),
  medianDaysToPurchase: Type.Union([Type.Number(), Type.Null()], {
    description: 'Median days from add to purchase of those items, 1 decimal; null when none',
  }),
  signalsInfluenced: Type.Object(
    { back_in_stock: Type.Integer(), price_dropped: Type.Integer(), low_stock: Type.Integer() },
    { description: 'Influenced lines of the period that such a signal named the customer for, within the window before the order' },
  ),
  channelsInfluenced: Type.Object(
    { klaviyo: Type.Integer(), flow: Type.Integer() },
    {
      description:
        'Influenced lines of the period whose product a notification to the customer was sent about through the channel (Klaviyo, Shopify Flow) within the window before the order',
    },
  ),
})

export const DailyEntry = Type.Object({
  date: Type.String({ description: 'YYYY-MM-DD (UTC)' }),
  period: Type.String({ description: 'Same as date' }),
  items_added: Type.Integer(),
  items_removed: Type.Integer(),
  unique_shoppers: Type.Integer(),
  cumulative_total: Type.Integer({ description: 'All-time adds − removes at the end of the day' }),
  orders_influenced: Type.Integer({ description: 'Orders of the day with a wishlist-influenced line' }),
})
export const Daily = Type.Object({ days: Type.Array(DailyEntry) })

const ADMIN =
  'Admin token only, every plan (customer tokens and storefront calls get 403). Each answer includes every write acknowledged before the request.'
const PERIOD =
  '`period` (default `30d`): `7d`, `14d`, `30d`, `90d`, `1y` (365 days) or `all`; "the last N days" is today (UTC) and the N − 1 days before it; `all` starts on the UTC day of the shop\'s first wishlist event.'

function conversionsDoc(operationId: string, prefix = '') {
  return {
    operationId,
    summary: 'What the wishlist sold: conversions of a period',
    description: `${prefix}An order line is wishlist-influenced when its customer held the product in a list at the order's time, or had held it within the shop's \`attribution_window_days\` (default 30) before it; signal-influenced when a back-in-stock, price-drop or low-stock signal of the product came within that window while the customer held it (whether or not a webhook took it). \`ordersInfluenced\`/\`linesInfluenced\`: orders (with at least one such line) and lines of the period. \`revenueInfluenced\`: unit price × quantity of those lines, per currency, exactly (integers of minor units at any size, hence a decimal string), written with its minor-unit digits (\`"20.00"\` EUR, \`"1500"\` JPY), never summed across currencies; lines without a price count but add nothing. \`wishlistToPurchaseRate\` = 100 × items added in the period that the same owner later bought (an influenced line) ÷ items added in the period, rounded half up to 2 decimals, 0 when nothing was added. \`medianDaysToPurchase\`: the median of the days from those items' \`addedAt\` to their first purchase, counted in tenths of a day, 1 decimal, null when none. \`signalsInfluenced\`: influenced lines of the period per signal. \`channelsInfluenced\`: influenced lines of the period per notification channel, those whose customer had been sent a notification of the product through it (delivered: Klaviyo took the event, Flow fired the trigger) within the window before the order; a line counts once per channel, under each channel that sent one. Answered from daily rollups: the cost follows the number of days, not of orders. ${PERIOD} ${ADMIN}`,
    responses: { 200: 'The conversions' },
    examples: {
      200: {
        ok: true,
        data: {
          period: '30d',
          ordersInfluenced: 12,
          linesInfluenced: 15,
          revenueInfluenced: [
            { currency: 'EUR', amount: '1289.50' },
            { currency: 'JPY', amount: '15000' },
          ],
          wishlistToPurchaseRate: 6.25,
          medianDaysToPurchase: 4.5,
          signalsInfluenced: { back_in_stock: 3, price_dropped: 2, low_stock: 0 },
          channelsInfluenced: { klaviyo: 4, flow: 1 },
        },
      },
    },
  }
}

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
    description: `\`limit\` 1..100 (default 10). \`wishlistCount\` = distinct owners holding the product now in any list; \`purchases\` = its wishlist-influenced order lines and \`revenue\` their amounts per currency (all time). \`sort=wishlists\` (default): by \`wishlistCount\` descending, then \`productId\` ascending (byte order); products nobody holds are omitted. \`sort=revenue\`: by influenced revenue in the shop's most frequent currency (the one of most influenced lines with a price), descending, then \`productId\`; products without revenue in it are omitted. \`title\` and \`handle\` come from the catalog (\`product.updated\` events, Shopify's product webhooks), null while it does not know them. ${ADMIN}`,
    responses: { 200: 'The products' },
    examples: {
      200: {
        ok: true,
        data: {
          products: [
            {
              productId: '7001',
              wishlistCount: 31,
              purchases: 4,
              revenue: [{ currency: 'EUR', amount: '356.00' }],
              title: 'Classic leather bag',
              handle: 'classic-leather-bag',
            },
            { productId: '7003', wishlistCount: 12, purchases: 0, revenue: [], title: null, handle: null },
          ],
        },
      },
    },
  },
  'GET /v1/analytics/product/:productId': {
    operationId: 'getProductAnalytics',
    summary: "A product's wishlist count, purchases and revenue",
    description: `\`wishlistCount\`: distinct owners holding the product now in any list; 0 when nobody does (also for unknown products). \`purchases\`: its wishlist-influenced order lines, all time; \`revenue\`: their amounts per currency (decimal strings with the currency's minor-unit digits, by currency code). \`productId\` is digits or a URL-encoded GID. ${ADMIN}`,
    responses: { 200: 'The figures' },
    examples: {
      200: {
        ok: true,
        data: {
          wishlistCount: 31,
          purchases: 4,
          revenue: [
            { currency: 'EUR', amount: '356.00' },
            { currency: 'USD', amount: '99.00' },
          ],
        },
      },
    },
  },
  'GET /v1/analytics/daily': {
    operationId: 'getDailyAnalytics',
    summary: 'Daily breakdown of a period',
    description: `One entry per UTC day from the period's first day to today, oldest first, days without activity included as zeros; \`date\` = \`period\` = \`YYYY-MM-DD\`. \`unique_shoppers\`: distinct owners with a wishlist event that day. \`cumulative_total\`: all-time adds − removes at the end of the day. \`orders_influenced\`: orders of the day with a wishlist-influenced line. \`all\` on a shop without any activity returns \`days: []\`. ${PERIOD} ${ADMIN}`,
    responses: { 200: 'The days, oldest first' },
    examples: {
      200: {
        ok: true,
        data: {
          days: [
            {
              date: '2026-01-02',
              period: '2026-01-02',
              items_added: 14,
              items_removed: 3,
              unique_shoppers: 9,
              cumulative_total: 388,
              orders_influenced: 2,
            },
          ],
        },
      },
    },
  },
  'GET /v1/admin/analytics/conversions': conversionsDoc('getConversions'),
  'GET /v1/analytics/conversions': conversionsDoc('getConversionsAlias', 'The same answer at the path of the other analytics reads. '),
}
