/**
 * The daily chart as inline SVG (no chart library, no CDN): adds above and removes below
 * the zero line as bars against the left axis, the cumulative total as a line against the right
 * axis (its own scale, drawn from the same function as the line). Both axes put their zero on
 * the same line, so a total below zero reads as below the bars' zero. Day labels count back from
 * the last day, so the latest day is always labelled.
 * The same figures are available as a table for screen readers and keyboard users.
 */
import type { DailyStats } from 'wishlist-service-sdk'
import { useId } from 'react'
import { Table } from './ui.js'

type Day = DailyStats['days'][number]

const W = 720
const H = 260
const PAD = { top: 20, right: 76, bottom: 36, left: 56 }

function niceMax(n: number): number {
  if (n <= 0) return 1
  const p = 10 ** Math.floor(Math.log10(n))
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= n) return m * p
  return 10 * p
}

export function DailyChart({ days }: { days: Day[] }) {
  const titleId = useId()
  const descId = useId()
  if (days.length === 0) return <p>No activity in this period.</p>

  const plotW = W - PAD.left - PAD.right
  const plotH = H - PAD.top - PAD.bottom
  const maxBar = niceMax(Math.max(...days.map((d) => Math.max(d.items_added, d.items_removed))))
  const totals = days.map((d) => d.cumulative_total)
  // The total's scale is symmetric around the shared zero line.
  const maxTotal = niceMax(Math.max(1, ...totals.map((v) => Math.abs(v))))
  const negative = totals.some((v) => v < 0)
  // Bars: adds up from the middle line, removes down from it.
  const mid = PAD.top + plotH / 2
  const barScale = plotH / 2 / maxBar
  const step = plotW / days.length
  const barW = Math.max(1, step * 0.38)
  const x = (i: number) => PAD.left + i * step
  const yTotal = (v: number) => mid - (v / maxTotal) * (plotH / 2)
  const line = days
    .map((d, i) => `${i === 0 ? 'M' : 'L'}${(x(i) + step / 2).toFixed(1)},${yTotal(d.cumulative_total).toFixed(1)}`)
    .join(' ')
  const labelEvery = Math.max(1, Math.ceil(days.length / 6))
  const labelled = (i: number) => (days.length - 1 - i) % labelEvery === 0
  const totalTicks = negative ? [-maxTotal, 0, maxTotal] : [0, maxTotal / 2, maxTotal]
  const right = W - PAD.right
  const sum = (k: 'items_added' | 'items_removed') => days.reduce((a, d) => a + d[k], 0)
  const last = days[days.length - 1]
  const summary = `${days.length} days from ${days[0]?.date} to ${last?.date}: ${sum('items_added')} items added, ${sum('items_removed')} removed; cumulative total ${last?.cumulative_total ?? 0} at the end.`

  return (
    <figure className="chart">
      <ul className="legend" aria-hidden="true">
        <li>
          <span className="swatch added" /> Added
        </li>
        <li>
          <span className="swatch removed" /> Removed
        </li>
        <li>
          <span className="swatch total" /> Cumulative total (right axis)
        </li>
      </ul>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-labelledby={`${titleId} ${descId}`}
        data-testid="daily-chart"
        preserveAspectRatio="xMidYMid meet"
      >
        <title id={titleId}>Daily adds, removes and cumulative total</title>
        <desc id={descId}>{summary}</desc>
        <line className="axis" x1={PAD.left} x2={right} y1={mid} y2={mid} data-testid="zero-line" data-y={mid} />
        <line className="axis" x1={PAD.left} x2={PAD.left} y1={PAD.top} y2={PAD.top + plotH} />
        <line className="axis total" x1={right} x2={right} y1={PAD.top} y2={PAD.top + plotH} data-testid="total-axis" />
        <text className="tick" x={PAD.left - 6} y={PAD.top + 4} textAnchor="end">
          {maxBar}
        </text>
        <text className="tick" x={PAD.left - 6} y={mid + 4} textAnchor="end">
          0
        </text>
        <text className="tick" x={PAD.left - 6} y={PAD.top + plotH + 4} textAnchor="end">
          −{maxBar}
        </text>
        {totalTicks.map((v) => (
          <g key={v} className="total-tick" data-value={v} data-y={yTotal(v).toFixed(1)}>
            <line className="axis total" x1={right} x2={right + 4} y1={yTotal(v)} y2={yTotal(v)} />
            <text className="tick total" x={right + 7} y={yTotal(v) + 4}>
              {v < 0 ? `−${-v}` : v}
            </text>
          </g>
        ))}
        {days.map((d, i) => (
          <g key={d.date}>
            <rect
              className="bar added"
              x={x(i) + step / 2 - barW}
              y={mid - d.items_added * barScale}
              width={barW}
              height={d.items_added * barScale}
            >
              <title>{`${d.date}: ${d.items_added} added`}</title>
            </rect>
            <rect className="bar removed" x={x(i) + step / 2} y={mid} width={barW} height={d.items_removed * barScale}>
              <title>{`${d.date}: ${d.items_removed} removed`}</title>
            </rect>
            {labelled(i) && (
              <text className="tick day" x={x(i) + step / 2} y={H - 8} textAnchor="middle">
                {d.date.slice(5)}
              </text>
            )}
          </g>
        ))}
        <path className="line total" d={line} fill="none" data-testid="total-line" />
      </svg>
      <details>
        <summary>Show the figures as a table</summary>
        <Table
          rows={days}
          rowKey={(d) => d.date}
          label="Daily figures"
          columns={[
            { header: 'Date', cell: (d) => d.date },
            { header: 'Added', numeric: true, cell: (d) => d.items_added },
            { header: 'Removed', numeric: true, cell: (d) => d.items_removed },
            { header: 'Shoppers', numeric: true, cell: (d) => d.unique_shoppers },
            { header: 'Cumulative total', numeric: true, cell: (d) => d.cumulative_total },
          ]}
        />
      </details>
    </figure>
  )
}
