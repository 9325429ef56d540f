/**
 * Analytics: the overview cards for a period (wishlist activity and what it sold), the daily
 * chart, the top products, and the products the wishlist sold (exportable as CSV).
 */
import type { Money, TopProducts } from 'wishlist-service-sdk'
import { useState } from 'react'
import { DailyChart } from '../chart.js'
import { type Column, LoadState, type Period, PeriodPicker, periodSpan, Table, useLoad, useSession } from '../ui.js'

const number = new Intl.NumberFormat()

/** An amount for display (the figures themselves stay the API's exact decimal strings). */
function formatMoney(m: Money): string {
  try {
    const digits = m.amount.split('.')[1]?.length ?? 0
    return new Intl.NumberFormat(undefined, {
      style: 'currency',
      currency: m.currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }).format(Number(m.amount))
  } catch {
    return `${m.amount} ${m.currency}`
  }
}
const moneyList = (list: Money[]): string => (list.length === 0 ? '—' : list.map(formatMoney).join(' · '))

/** A CSV cell (RFC 4180), with a leading `'` before a formula character (OWASP), as the server's export does. */
function csvCell(value: string | number): string {
  let text = String(value)
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/**
 * The sales table as CSV: one row per product and currency (a product without revenue: one
 * row, no currency); title and handle from the catalog, empty when it does not know them.
 */
export function salesCsv(products: TopProducts['products']): string {
  const rows: (string | number)[][] = [['product_id', 'title', 'handle', 'wishlisted_by', 'purchases', 'currency', 'revenue']]
  for (const p of products) {
    const product = [p.productId, p.title ?? '', p.handle ?? '']
    if (p.revenue.length === 0) rows.push([...product, p.wishlistCount, p.purchases, '', ''])
    for (const r of p.revenue) rows.push([...product, p.wishlistCount, p.purchases, r.currency, r.amount])
  }
  return rows.map((r) => r.map(csvCell).join(',')).join('\r\n') + '\r\n'
}

type ProductRow = TopProducts['products'][number]

/** The catalog's title when it knows the product (from product updates) with its id, the id alone otherwise; then the handle. */
const PRODUCT_COLUMNS: Column<ProductRow>[] = [
  {
    header: 'Product',
    cell: (p) =>
      p.title ? (
        <>
          {p.title} <span className="muted small mono">{p.productId}</span>
        </>
      ) : (
        <span className="mono">{p.productId}</span>
      ),
  },
  { header: 'Handle', cellClass: 'mono', cell: (p) => p.handle ?? '—' },
]

function downloadCsv(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }))
  const a = document.createElement('a')
  a.href = url
  a.download = name
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 0)
}

export function Overview() {
  const { session } = useSession()
  const [period, setPeriod] = useState<Period>('30d')
  const { client } = session
  const { data, loading, error } = useLoad(
    () =>
      Promise.all([
        client.analytics.overview({ period }),
        client.analytics.daily({ period }),
        client.analytics.topProducts({ limit: 10 }),
        client.analytics.conversions({ period }),
        client.analytics.topProducts({ limit: 100, sort: 'revenue' }),
      ]),
    [client, period],
  )
  const [overview, daily, top, conversions, sales] = data ?? []
  const span = periodSpan(period)

  return (
    <>
      <PeriodPicker period={period} onChange={setPeriod} />
      <LoadState loading={loading && !data} error={error} />
      <p className="visually-hidden" role="status">
        {loading ? '' : data ? `Showing figures for ${span}.` : ''}
      </p>
      {overview && (
        <ul className="cards" aria-label={`Figures for ${span}`} aria-busy={loading}>
          <li className="card stat">
            <span className="stat-label">Wishlisted items</span>
            <span className="stat-value" data-testid="stat-total">
              {number.format(overview.totalWishlistedItems)}
            </span>
            <span className="muted small">adds minus removes</span>
          </li>
          <li className="card stat">
            <span className="stat-label">Active shoppers</span>
            <span className="stat-value" data-testid="stat-shoppers">
              {number.format(overview.activeShoppers)}
            </span>
            <span className="muted small">customers and guests</span>
          </li>
          <li className="card stat">
            <span className="stat-label">Wishlist to cart</span>
            <span className="stat-value" data-testid="stat-rate">
              {overview.wishlistToCartRate.toFixed(2)} %
            </span>
            <span className="muted small">of items added, later put in the cart</span>
          </li>
        </ul>
      )}
      {conversions && (
        <ul className="cards" aria-label={`What the wishlist sold, ${span}`} aria-busy={loading}>
          <li className="card stat">
            <span className="stat-label">Revenue influenced</span>
            <span className="stat-value" data-testid="stat-revenue">
              {moneyList(conversions.revenueInfluenced)}
            </span>
            <span className="muted small">order lines of products the buyer had wishlisted</span>
          </li>
          <li className="card stat">
            <span className="stat-label">Orders influenced</span>
            <span className="stat-value" data-testid="stat-orders">
              {number.format(conversions.ordersInfluenced)}
            </span>
            <span className="muted small">{number.format(conversions.linesInfluenced)} order lines</span>
          </li>
          <li className="card stat">
            <span className="stat-label">Wish to purchase</span>
            <span className="stat-value" data-testid="stat-purchase-rate">
              {conversions.wishlistToPurchaseRate.toFixed(2)} %
            </span>
            <span className="muted small">of items added, later bought</span>
          </li>
          <li className="card stat">
            <span className="stat-label">Median days to purchase</span>
            <span className="stat-value" data-testid="stat-median-days">
              {conversions.medianDaysToPurchase === null ? '—' : conversions.medianDaysToPurchase.toFixed(1)}
            </span>
            <span className="muted small">from add to purchase</span>
          </li>
        </ul>
      )}
      {daily && (
        <section className="card" aria-labelledby="daily-heading">
          <h2 id="daily-heading">Daily activity</h2>
          <DailyChart days={daily.days} />
        </section>
      )}
      {top && (
        <section className="card" aria-labelledby="top-heading">
          <h2 id="top-heading">Top products</h2>
          <p className="muted small">Shoppers who hold the product in any list now.</p>
          {top.products.length === 0 ? (
            <p>No product is on a wishlist yet.</p>
          ) : (
            <Table
              testId="top-products"
              rows={top.products}
              rowKey={(p) => p.productId}
              label="Top products"
              columns={[
                { header: 'Rank', cell: (_p, i) => i + 1 },
                ...PRODUCT_COLUMNS,
                { header: 'Wishlisted by', numeric: true, cell: (p) => number.format(p.wishlistCount) },
              ]}
            />
          )}
        </section>
      )}
      {sales && (
        <section className="card" aria-labelledby="sales-heading">
          <h2 id="sales-heading">Sold from wishlists</h2>
          <p className="muted small">
            Order lines of products the buyer had wishlisted (all time), ranked by revenue in the shop's most frequent currency.
          </p>
          {sales.products.length === 0 ? (
            <p>No wishlisted product has been bought yet.</p>
          ) : (
            <>
              <p>
                <button type="button" data-testid="sales-csv" onClick={() => downloadCsv('wishlist-sales.csv', salesCsv(sales.products))}>
                  Export as CSV
                </button>
              </p>
              <Table
                testId="sales-products"
                rows={sales.products}
                rowKey={(p) => p.productId}
                label="Sold from wishlists"
                columns={[
                  ...PRODUCT_COLUMNS,
                  { header: 'Wishlisted by', numeric: true, cell: (p) => number.format(p.wishlistCount) },
                  { header: 'Purchases', numeric: true, cell: (p) => number.format(p.purchases) },
                  { header: 'Revenue', numeric: true, cell: (p) => moneyList(p.revenue) },
                ]}
              />
            </>
          )}
        </section>
      )}
    </>
  )
}
