import { type TSchema, Type } from 'typebox'
import { type OperationDocs, Timestamp } from '../../lib/http-schemas.js'
import { NOTIFICATION_SIGNALS, type NotificationSignal } from './channel.js'
import { KLAVIYO_PRIVATE_KEY_PATTERN } from './klaviyo.js'

export const ConnectKlaviyo = Type.Object(
  {
    private_key: Type.String({
      pattern: KLAVIYO_PRIVATE_KEY_PATTERN,
      maxLength: 256,
      description:
        "A private API key of the merchant's Klaviyo account (`pk_…`) with the scopes `accounts:read`, `events:write`, `profiles:read` and `data-privacy:write`; never returned",
    }),
  },
  { additionalProperties: false },
)

const CheckState = Type.Union([Type.Literal('valid'), Type.Literal('invalid'), Type.Literal('unreachable')], {
  description: '`valid`: the channel took the credential; `invalid`: it refused it; `unreachable`: no answer came',
})

export const ChannelView = Type.Object({
  channel: Type.Literal('klaviyo', { description: 'The channel' }),
  connected: Type.Boolean({ description: 'Whether a credential is stored' }),
  keyLast4: Type.Union([Type.String(), Type.Null()], {
    description: "The stored key's last four characters (the key itself is never returned); null when not connected",
  }),
  connectedAt: Type.Union([Timestamp, Type.Null()], { description: 'When the key was stored; null when not connected' }),
  lastCheck: Type.Union(
    [
      Type.Object({
        state: CheckState,
        checkedAt: Timestamp,
        error: Type.Union([Type.String(), Type.Null()], { description: "The channel's answer when the check failed; else null" }),
      }),
      Type.Null(),
    ],
    { description: 'The last check of the stored key against the channel; null when not connected' },
  ),
})

const count = (description: string) => Type.Integer({ minimum: 0, description })
const bySignal = <T extends TSchema>(make: () => T, description: string) =>
  Type.Object(Object.fromEntries(NOTIFICATION_SIGNALS.map((s) => [s, make()])) as Record<NotificationSignal, T>, {
    additionalProperties: false,
    description,
  })

const DeliveryCounts = () =>
  Type.Object(
    {
      sent: count('Deliveries the channel took'),
      failed: count('Deliveries the channel refused for good (a bad key, a payload it refuses)'),
      pending: count('Deliveries waiting to be sent or retried'),
      skipped: count('Deliveries not sent and not failed: a Flow trigger no enabled workflow starts with, an owner who opted out since'),
    },
    { additionalProperties: false },
  )

const SuppressedCounts = () =>
  Type.Object(
    {
      cooldown: count('The owner had a notification of the same product and signal within `notification_cooldown_hours`'),
      daily_cap: count('The owner had `notifications_per_day` notifications within the last 24 hours'),
      opted_out: count('The owner had opted out'),
    },
    { additionalProperties: false },
  )

const FlowTriggerView = Type.Object(
  {
    signal: Type.Union(
      [
        Type.Literal('back_in_stock'),
        Type.Literal('price_drop'),
        Type.Literal('low_stock'),
        Type.Literal('reminder'),
        Type.Literal('item_added'),
      ],
      { description: 'The signal the trigger fires for' },
    ),
    handle: Type.String({ description: "The trigger's extension handle (`wishlist-flow-…`)" }),
    state: Type.Union([Type.Literal('enabled'), Type.Literal('disabled'), Type.Literal('unknown')], {
      description:
        '`enabled`: a workflow of the shop that starts with the trigger is on (notifications are fired); `disabled`: none is (notifications are skipped); `unknown`: Flow has not said yet (as `disabled`)',
    }),
    since: Type.Union([Timestamp, Type.Null()], { description: 'When Flow said so; null when it never did' }),
  },
  { additionalProperties: false },
)

export const ChannelReportView = Type.Object(
  {
    channel: Type.Union([Type.Literal('klaviyo'), Type.Literal('flow')], {
      description: '`klaviyo`; `flow` (Shopify Flow) only for a Shopify shop in Shopify app mode',
    }),
    connected: Type.Boolean({ description: 'Klaviyo: whether a key is stored; Flow: always true (it goes through the app itself)' }),
    keyLast4: ChannelView.properties.keyLast4,
    connectedAt: ChannelView.properties.connectedAt,
    lastCheck: ChannelView.properties.lastCheck,
    triggers: Type.Union([Type.Array(FlowTriggerView), Type.Null()], {
      description: "Flow: each trigger's state in the shop, one per signal; null for Klaviyo",
    }),
    deliveries: bySignal(DeliveryCounts, "Per signal: this channel's deliveries of the notifications made in the period, by state"),
  },
  { additionalProperties: false },
)

export const ChannelsReportView = Type.Object(
  {
    period: Type.String({ description: 'The period asked for' }),
    channels: Type.Array(ChannelReportView),
    suppressed: bySignal(
      SuppressedCounts,
      'Per signal: the notifications made in the period that were not handed to any channel, by reason',
    ),
  },
  { additionalProperties: false },
)

const ADMIN = 'Admin token, every plan.'
const connected = {
  channel: 'klaviyo',
  connected: true,
  keyLast4: '9f3c',
  connectedAt: '2026-01-02T03:04:05.678Z',
  lastCheck: { state: 'valid', checkedAt: '2026-01-02T03:04:05.678Z', error: null },
}

const zeros = { sent: 0, failed: 0, pending: 0, skipped: 0 }
const noSuppression = { cooldown: 0, daily_cap: 0, opted_out: 0 }
const reportExample = {
  period: '30d',
  channels: [
    {
      ...connected,
      triggers: null,
      deliveries: {
        back_in_stock: { sent: 412, failed: 2, pending: 15, skipped: 0 },
        price_drop: { sent: 96, failed: 0, pending: 0, skipped: 0 },
        low_stock: zeros,
        reminder: { sent: 40, failed: 0, pending: 3, skipped: 0 },
        item_added: zeros,
      },
    },
    {
      channel: 'flow',
      connected: true,
      keyLast4: null,
      connectedAt: null,
      lastCheck: null,
      triggers: [
        { signal: 'back_in_stock', handle: 'wishlist-flow-back-in-stock', state: 'enabled', since: '2026-01-02T03:04:05.678Z' },
        { signal: 'price_drop', handle: 'wishlist-flow-price-drop', state: 'disabled', since: '2026-01-02T03:04:05.678Z' },
        { signal: 'low_stock', handle: 'wishlist-flow-low-stock', state: 'unknown', since: null },
        { signal: 'reminder', handle: 'wishlist-flow-reminder', state: 'unknown', since: null },
        { signal: 'item_added', handle: 'wishlist-flow-item-added', state: 'unknown', since: null },
      ],
      deliveries: {
        back_in_stock: { sent: 410, failed: 0, pending: 17, skipped: 0 },
        price_drop: { sent: 0, failed: 0, pending: 0, skipped: 96 },
        low_stock: zeros,
        reminder: { sent: 0, failed: 0, pending: 0, skipped: 43 },
        item_added: zeros,
      },
    },
  ],
  suppressed: {
    back_in_stock: { cooldown: 31, daily_cap: 4, opted_out: 2 },
    price_drop: { cooldown: 8, daily_cap: 0, opted_out: 1 },
    low_stock: noSuppression,
    reminder: noSuppression,
    item_added: noSuppression,
  },
}

/** OpenAPI metadata of the notification channel routes (plugins/openapi.ts). */
export const channelsOperations: OperationDocs = {
  'GET /v1/admin/channels': {
    operationId: 'listNotificationChannels',
    summary: 'List notification channels',
    description: `Each channel of the shop: Klaviyo, connected or not (the last four characters of its stored key, never the key; when it was connected; the last check of the key against Klaviyo), and for a Shopify shop in Shopify app mode Shopify Flow, with each trigger's state (\`enabled\`, \`disabled\`, \`unknown\`) as Flow last said it. Over \`period\` (default \`30d\`: \`7d\`, \`14d\`, \`30d\`, \`90d\`, \`1y\` = 365 days, or \`all\`; "the last N days" is today (UTC) and the N − 1 days before it), of the notifications made in it: per channel and signal the deliveries by state (\`sent\`, \`failed\`, \`pending\`, \`skipped\`), and per signal the notifications suppressed by reason (\`cooldown\`, \`daily_cap\`, \`opted_out\`). ${ADMIN}`,
    responses: { 200: 'The channels and their counts' },
    examples: { 200: { ok: true, data: reportExample } },
  },
  'PUT /v1/admin/channels/klaviyo': {
    operationId: 'connectKlaviyo',
    summary: 'Connect Klaviyo',
    description: `Checks \`private_key\` with Klaviyo (an authenticated read of the key's account), then stores it encrypted (AES-256-GCM), replacing the shop's previous key. Klaviyo refuses the key (unknown, revoked, or without \`accounts:read\`): 400 CHANNEL_KEY_REJECTED, nothing stored. Klaviyo cannot be reached, or the server has no key to encrypt it with (PostgreSQL without \`SHOPIFY_TOKEN_KEY\`): 503 UNAVAILABLE, nothing stored. The key is never returned, only its last four characters. ${ADMIN}`,
    responses: { 200: 'Connected: the channel as stored' },
    requestExample: { private_key: 'pk_0123456789abcdef0123456789abcd9f3c' },
    examples: { 200: { ok: true, data: connected } },
  },
  'DELETE /v1/admin/channels/klaviyo': {
    operationId: 'disconnectKlaviyo',
    summary: 'Disconnect Klaviyo',
    description: `Deletes the stored key; nothing is sent to Klaviyo afterwards. Not connected: 404. ${ADMIN}`,
    responses: { 200: 'Disconnected' },
    examples: { 200: { ok: true, data: { deleted: true } } },
  },
}
