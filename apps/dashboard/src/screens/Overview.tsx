/** Analytics: the overview cards for a period, the daily chart and the top products. */
import type { AnalyticsPeriodQuery } from 'wishlist-service-sdk'
import { useId, useState } from 'react'
import { DailyChart } from '../chart.js'
import { LoadState, Table, useLoad, useSession } from '../ui.js'

type Period = NonNullable<AnalyticsPeriodQuery['period']>
/** `label` names the radio button; `span` completes "Figures for …" in running text. */
const PERIODS: { value: Period; label: string; span: string }[] = [
  { value: '7d', label: '7 days', span: 'the last 7 days' },
  { value: '14d', label: '14 days', span: 'the last 14 days' },
  { value: '30d', label: '30 days', span: 'the last 30 days' },
  { value: '90d', label: '90 days', span: 'the last 90 days' },
  { value: '1y', label: '1 year', span: 'the last year (365 days)' },
  { value: 'all', label: 'All time', span: 'all time' },
]

const number = new Intl.NumberFormat()

export function Overview() {
  const { session } = useSession()
  const [period, setPeriod] = useState<Period>('30d')
  const name = useId()
  const { client } = session
  const { data, loading, error } = useLoad(
    () => Promise.all([client.analytics.overview({ period }), client.analytics.daily({ period }), client.analytics.topProducts({ limit: 10 })]),
    [client, period],
  )
  const [overview, daily, top] = data ?? []
  const span = PERIODS.find((p) => p.value === period)?.span ?? period

  return (
    <>
      <fieldset className="segmented">
        <legend>Period</legend>
        {PERIODS.map((p) => (
          <label key={p.value}>
            <input type="radio" name={name} value={p.value} checked={period === p.value} onChange={() => setPeriod(p.value)} />
            <span>{p.label}</span>
          </label>
        ))}
      </fieldset>
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
              columns={[
                { header: 'Rank', cell: (_p, i) => i + 1 },
                { header: 'Product id', cellClass: 'mono', cell: (p) => p.productId },
                { header: 'Wishlisted by', numeric: true, cell: (p) => number.format(p.wishlistCount) },
              ]}
            />
          )}
        </section>
      )}
    </>
  )
}
