/**
 * The merchant's notification channels (docs/notifications.md, "Connecting Klaviyo"): a
 * Klaviyo private key is checked against Klaviyo before it is kept, kept sealed
 * (AES-256-GCM, lib/token-cipher.ts, associated data: the shop and `channel:klaviyo`), and never
 * shown again: the admin API answers its last four characters only.
 */
import type { NotificationsConfig } from '../../config.js'
import { ConfigError } from '../../config.js'
import type { Db } from '../../db/types.js'
import { AppError } from '../../lib/errors.js'
import { now } from '../../lib/time.js'
import { createTokenCipher, type TokenCipher } from '../../lib/token-cipher.js'
import type { NotificationChannel } from './channel.js'
import { type ChannelName, type ChannelRow, channelsRepo } from './channels.repo.js'
import { checkKey, createKlaviyoChannel } from './klaviyo.js'
import type { Period } from '../analytics/analytics.service.js'
import { type ChannelsReport, channelsReport } from './channels.report.js'

/** The channels a merchant connects here, with a credential the service keeps. */
export const STORED_CHANNELS: readonly ChannelName[] = ['klaviyo']

export interface ChannelState {
  channel: ChannelName
  connected: boolean
  /** The credential's last four characters; null when not connected. */
  keyLast4: string | null
  connectedAt: number | null
  /** The last check of the credential against the channel; null when not connected. */
  lastCheck: { state: ChannelRow['check_state']; checkedAt: number; error: string | null } | null
}

export interface ChannelsService {
  /** Every channel of STORED_CHANNELS, connected or not. */
  list(shopId: string): Promise<ChannelState[]>
  /** Checks the key with Klaviyo, then keeps it sealed; 400 CHANNEL_KEY_REJECTED, 503 UNAVAILABLE. */
  connectKlaviyo(shopId: string, privateKey: string): Promise<ChannelState>
  /** The Channels page's counts over a period, and Flow's triggers for a Shopify shop (channels.report.ts). */
  report(shop: { id: string; domain: string }, period: Period): Promise<ChannelsReport>
  /** False when the channel was not connected. */
  disconnect(shopId: string, channel: ChannelName): Promise<boolean>
  /** The shop's Klaviyo channel ready to send, or undefined when not connected; throws when the stored key does not open. */
  klaviyo(shopId: string): Promise<NotificationChannel | undefined>
  /** A Klaviyo key as stored (sealed) opened, for the notification worker; throws when it does not open. */
  openKlaviyoKey(shopId: string, sealed: string): string
}

const FIELD = (channel: ChannelName) => `channel:${channel}` as const

const stateOf = (channel: ChannelName, row: ChannelRow | undefined): ChannelState =>
  row === undefined
    ? { channel, connected: false, keyLast4: null, connectedAt: null, lastCheck: null }
    : {
        channel,
        connected: true,
        keyLast4: row.secret_last4,
        connectedAt: row.connected_at,
        lastCheck: { state: row.check_state, checkedAt: row.checked_at, error: row.check_error },
      }

export function createChannelsService(deps: {
  db: Db
  config: NotificationsConfig
  /** Whether a shop has Shopify Flow (a Shopify shop in Shopify app mode); none by default. */
  flowShop?: (domain: string) => boolean
  now?: () => number
}): ChannelsService {
  const { db, config } = deps
  const flowShop = deps.flowShop ?? (() => false)
  const clock = deps.now ?? now
  const klaviyoOptions = { baseUrl: config.klaviyoBaseUrl }
  let cipher: TokenCipher | undefined
  /** The cipher of the channels' credentials; 503 naming the setting when the key is not configured. */
  const sealer = (): TokenCipher => {
    if (cipher) return cipher
    try {
      cipher = createTokenCipher(config.secretsKey())
      return cipher
    } catch (err) {
      if (err instanceof ConfigError) throw new AppError('UNAVAILABLE', err.message)
      throw err
    }
  }

  return {
    async list(shopId) {
      const rows = new Map((await channelsRepo.list(db, shopId)).map((r) => [r.channel, r]))
      return STORED_CHANNELS.map((channel) => stateOf(channel, rows.get(channel)))
    },

    async connectKlaviyo(shopId, privateKey) {
      // The key must be storable before Klaviyo is asked about it.
      const seal = sealer()
      const check = await checkKey(privateKey, klaviyoOptions)
      if (check.state === 'invalid')
        throw new AppError('CHANNEL_KEY_REJECTED', `Klaviyo refused the private key (${check.reason}); nothing was stored`)
      if (check.state === 'unreachable')
        throw new AppError('UNAVAILABLE', `Klaviyo cannot be reached to check the private key (${check.reason}); nothing was stored`)
      const at = now()
      const row: ChannelRow = {
        shop_id: shopId,
        channel: 'klaviyo',
        secret: seal.seal(shopId, FIELD('klaviyo'), privateKey),
        secret_last4: privateKey.slice(-4),
        connected_at: at,
        checked_at: at,
        check_state: 'valid',
        check_error: null,
        updated_at: at,
      }
      await channelsRepo.put(db, row)
      return stateOf('klaviyo', row)
    },

    report: (shop, period) => channelsReport(db, shop.id, { period, now: clock(), flow: flowShop(shop.domain) }),

    disconnect: (shopId, channel) => channelsRepo.remove(db, shopId, channel),

    openKlaviyoKey: (shopId, sealed) => sealer().open(shopId, FIELD('klaviyo'), sealed),

    async klaviyo(shopId) {
      const row = await channelsRepo.get(db, shopId, 'klaviyo')
      if (row === undefined) return undefined
      return createKlaviyoChannel(sealer().open(shopId, FIELD('klaviyo'), row.secret), klaviyoOptions)
    },
  }
}
