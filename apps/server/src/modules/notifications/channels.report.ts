/**
 * What the Channels page shows of a shop's notifications (docs/notifications.md, "Reporting"):
 * over a period (the analytics' periods), per signal, the notifications the frequency rules or
 * an opt-out suppressed, by reason, and per channel the deliveries of the others by state
 * (`sent`, `failed`, `pending`, `skipped`); and for a Shopify shop, each Flow trigger's state.
 *
 * Every count is of the notifications made in the period (`notifications.created_at`), so a
 * signal's suppressed and delivered figures are of the same notifications. One grouped query:
 * the notifications of the period through their (shop_id, signal, created_at) index, each
 * joined to its deliveries through (shop_id, notification_id); its cost follows the period's
 * notifications, which the daily cap per shopper bounds.
 */
import { sql } from 'kysely'
import type { Db } from '../../db/types.js'
import { type Period, periodStartMs } from '../analytics/analytics.service.js'
import { NOTIFICATION_SIGNALS, type NotificationSignal } from './channel.js'
import { type FlowTriggerStatus, flowTriggerStatus } from './flow.js'

/** The channels a notification is delivered through, in the order the page lists them. */
export const REPORTED_CHANNELS = ['klaviyo', 'flow'] as const
export type ReportedChannel = (typeof REPORTED_CHANNELS)[number]

export const SUPPRESSION_REASONS = ['cooldown', 'daily_cap', 'opted_out'] as const
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number]

export const DELIVERY_STATES = ['sent', 'failed', 'pending', 'skipped'] as const
export type DeliveryState = (typeof DELIVERY_STATES)[number]

export type DeliveryCounts = Record<DeliveryState, number>
export type SuppressedCounts = Record<SuppressionReason, number>

export interface ChannelsReport {
  period: Period
  /** The period's first instant (ms); null for `all`. */
  since: number | null
  /** Per channel, per signal: deliveries by state. */
  deliveries: Record<ReportedChannel, Record<NotificationSignal, DeliveryCounts>>
  /** Per signal: notifications suppressed, by reason. */
  suppressed: Record<NotificationSignal, SuppressedCounts>
  /** Each Flow trigger's state in the shop; null when the shop is not a Shopify shop. */
  flowTriggers: FlowTriggerStatus[] | null
}

const bySignal = <T>(make: () => T) => Object.fromEntries(NOTIFICATION_SIGNALS.map((s) => [s, make()])) as Record<NotificationSignal, T>
const zeroDeliveries = (): DeliveryCounts => ({ sent: 0, failed: 0, pending: 0, skipped: 0 })
const zeroSuppressed = (): SuppressedCounts => ({ cooldown: 0, daily_cap: 0, opted_out: 0 })

export async function channelsReport(
  db: Db,
  shopId: string,
  opts: { period: Period; now: number; flow: boolean },
): Promise<ChannelsReport> {
  const since = periodStartMs(opts.period, opts.now)
  let q = db
    .selectFrom('notifications as n')
    .leftJoin('notification_deliveries as d', (j) => j.onRef('d.shop_id', '=', 'n.shop_id').onRef('d.notification_id', '=', 'n.id'))
    .select(['n.signal', 'n.state', 'n.reason', 'd.channel', 'd.state as delivery', sql<number | string>`count(*)`.as('count')])
    .where('n.shop_id', '=', shopId)
    // Every signal named, so each is a range of the (shop_id, signal, created_at) index.
    .where('n.signal', 'in', [...NOTIFICATION_SIGNALS])
  if (since !== null) q = q.where('n.created_at', '>=', since)
  const rows = await q.groupBy(['n.signal', 'n.state', 'n.reason', 'd.channel', 'd.state']).execute()

  const deliveries = Object.fromEntries(REPORTED_CHANNELS.map((c) => [c, bySignal(zeroDeliveries)])) as ChannelsReport['deliveries']
  const suppressed = bySignal(zeroSuppressed)
  for (const r of rows) {
    const signal = r.signal as NotificationSignal
    const count = Number(r.count)
    if (r.state === 'suppressed') {
      const reason = r.reason as SuppressionReason | null
      if (reason !== null && reason in suppressed[signal]) suppressed[signal][reason] += count
      continue
    }
    const channel = r.channel as ReportedChannel | null
    const state = r.delivery as DeliveryState | null
    if (channel === null || state === null || !(channel in deliveries) || !(state in deliveries[channel][signal])) continue
    deliveries[channel][signal][state] += count
  }
  return {
    period: opts.period,
    since,
    deliveries,
    suppressed,
    flowTriggers: opts.flow ? await flowTriggerStatus(db, shopId) : null,
  }
}
