import { Type } from 'typebox'
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

export const TopProduct = Type.Object({ productId: Type.String(), wishlistCount: Type.Integer() })
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
