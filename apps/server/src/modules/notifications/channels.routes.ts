import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { type Static, Type } from 'typebox'
import { notFound } from '../../lib/errors.js'
import { errors, Ok } from '../../lib/http-schemas.js'
import { isoMillis } from '../../lib/time.js'
import type { ChannelState, ChannelsService } from './channels.service.js'
import { PeriodQuery } from '../analytics/analytics.schemas.js'
import type { ChannelsReport } from './channels.report.js'
import { ChannelReportView, ChannelsReportView, ChannelView, ConnectKlaviyo } from './channels.schemas.js'

const channelView = (c: ChannelState) => ({
  channel: c.channel,
  connected: c.connected,
  keyLast4: c.keyLast4,
  connectedAt: c.connectedAt === null ? null : isoMillis(c.connectedAt),
  lastCheck: c.lastCheck === null ? null : { ...c.lastCheck, checkedAt: isoMillis(c.lastCheck.checkedAt) },
})

type ChannelReport = Static<typeof ChannelReportView>
const iso = (ms: number | null) => (ms === null ? null : isoMillis(ms))

/** The list: Klaviyo, then Flow for a Shopify shop, each with its deliveries per signal; suppressions per signal. */
function reportView(klaviyo: ChannelState, report: ChannelsReport): Static<typeof ChannelsReportView> {
  const channels: ChannelReport[] = [{ ...channelView(klaviyo), triggers: null, deliveries: report.deliveries.klaviyo }]
  if (report.flowTriggers !== null)
    channels.push({
      channel: 'flow',
      connected: true,
      keyLast4: null,
      connectedAt: null,
      lastCheck: null,
      triggers: report.flowTriggers.map((t) => ({ signal: t.signal, handle: t.handle, state: t.state, since: iso(t.since) })),
      deliveries: report.deliveries.flow,
    })
  return { period: report.period, channels, suppressed: report.suppressed }
}

/** docs/notifications.md, "Connecting Klaviyo" and "Reporting": the merchant's notification channels, admin tokens only. */
export const channelsRoutes: FastifyPluginAsyncTypebox<{ channels: ChannelsService }> = async (app, { channels }) => {
  const config = { access: ['admin' as const] }
  const tags = ['admin']

  app.get(
    '/v1/admin/channels',
    { config, schema: { tags, querystring: PeriodQuery, response: { 200: Ok(ChannelsReportView), ...errors(400, 401, 403, 429) } } },
    async (request) => {
      const { shop } = request.ctx
      const [list, report] = await Promise.all([channels.list(shop.id), channels.report(shop, request.query.period)])
      const klaviyo = list.find((c) => c.channel === 'klaviyo') as ChannelState
      return { ok: true as const, data: reportView(klaviyo, report) }
    },
  )

  app.put(
    '/v1/admin/channels/klaviyo',
    { config, schema: { tags, body: ConnectKlaviyo, response: { 200: Ok(ChannelView), ...errors(400, 401, 403, 429, 503) } } },
    async (request) => ({
      ok: true as const,
      data: channelView(await channels.connectKlaviyo(request.ctx.shop.id, request.body.private_key)),
    }),
  )

  app.delete(
    '/v1/admin/channels/klaviyo',
    { config, schema: { tags, response: { 200: Ok(Type.Object({ deleted: Type.Literal(true) })), ...errors(401, 403, 404, 429) } } },
    async (request) => {
      if (!(await channels.disconnect(request.ctx.shop.id, 'klaviyo'))) throw notFound('Klaviyo connection')
      return { ok: true as const, data: { deleted: true as const } }
    },
  )
}
