/**
 * Kysely queries of the merchant's notification channels (migration 0030): one row per shop
 * and channel, its credential sealed by the caller (channels.service.ts). Every query filters
 * by shop_id.
 */
import type { Selectable } from 'kysely'
import type { NotificationChannelsTable } from '../../db/schema.js'
import type { Db } from '../../db/types.js'

export type ChannelRow = Selectable<NotificationChannelsTable>
export type ChannelName = NotificationChannelsTable['channel']

export const channelsRepo = {
  list(db: Db, shopId: string): Promise<ChannelRow[]> {
    return db.selectFrom('notification_channels').selectAll().where('shop_id', '=', shopId).orderBy('channel').execute()
  },

  get(db: Db, shopId: string, channel: ChannelName): Promise<ChannelRow | undefined> {
    return db
      .selectFrom('notification_channels')
      .selectAll()
      .where('shop_id', '=', shopId)
      .where('channel', '=', channel)
      .executeTakeFirst()
  },

  /** Writes the channel's credential (a new connection, or a key replaced): `connected_at` moves on. */
  async put(db: Db, row: ChannelRow): Promise<void> {
    const { shop_id: _shop, channel: _channel, ...rest } = row
    await db
      .insertInto('notification_channels')
      .values(row)
      .onConflict((oc) => oc.columns(['shop_id', 'channel']).doUpdateSet(rest))
      .execute()
  },

  /** Records a later check of the stored credential (the sender's 401, a re-check). */
  async recordCheck(db: Db, shopId: string, channel: ChannelName, check: Pick<ChannelRow, 'check_state' | 'check_error' | 'checked_at'>) {
    await db
      .updateTable('notification_channels')
      .set({ ...check, updated_at: check.checked_at })
      .where('shop_id', '=', shopId)
      .where('channel', '=', channel)
      .execute()
  },

  /** True when there was a connection to delete. */
  async remove(db: Db, shopId: string, channel: ChannelName): Promise<boolean> {
    const res = await db.deleteFrom('notification_channels').where('shop_id', '=', shopId).where('channel', '=', channel).executeTakeFirst()
    return Number(res.numDeletedRows) > 0
  },
}
