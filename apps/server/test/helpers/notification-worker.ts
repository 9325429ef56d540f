/** A notification worker for the tests, on a test app's database and channels. */
import {
  createNotificationWorker,
  type NotificationWorker,
  type NotificationWorkerOptions,
} from '../../src/modules/notifications/notification-worker.js'
import { optOutUrl } from '../../src/modules/notifications/opt-out.js'
import type { TestApp } from './app.js'

/**
 * A worker on `t`'s database with its Klaviyo keys, Klaviyo's base URL, its platform's Flow
 * channel (when one is configured) and opt-out links, polling every 20 ms; `opts` override.
 * It is pushed onto `workers`, for the caller's afterEach to stop.
 */
export function testNotificationWorker(
  t: TestApp,
  workers: NotificationWorker[],
  opts: Partial<NotificationWorkerOptions> = {},
): NotificationWorker {
  const w = createNotificationWorker({
    db: t.storage.db,
    openKlaviyoKey: t.app.services.channels.openKlaviyoKey,
    klaviyoBaseUrl: t.config.notifications.klaviyoBaseUrl,
    flow: t.app.platforms.map((p) => p.notificationChannel?.()).find((c) => c !== undefined),
    optOutUrl: (shopId, owner) => optOutUrl(t.config, shopId, owner),
    pollIntervalMs: 20,
    retentionDays: 90,
    ...opts,
  })
  workers.push(w)
  return w
}
