// A notification worker in its own process, for crash tests:
// `node --import tsx test/helpers/notification-worker-process.ts` with DATABASE_URL,
// KLAVIYO_BASE_URL, SHOPIFY_TOKEN_KEY (the key the test app sealed the channel with) and WORKER_LEASE_MS.
import { loadConfig } from '../../src/config.js'
import { openStorage } from '../../src/db/connect.js'
import { createTokenCipher } from '../../src/lib/token-cipher.js'
import { createNotificationWorker } from '../../src/modules/notifications/notification-worker.js'
import { optOutUrl } from '../../src/modules/notifications/opt-out.js'
import { TEST_JWT_SECRET } from './app.js'

const config = loadConfig({ ...process.env, JWT_SECRET: TEST_JWT_SECRET, PUBLIC_BASE_URL: 'http://wishlist.test' })
const storage = openStorage(config.database)
const cipher = createTokenCipher(config.notifications.secretsKey())
const worker = createNotificationWorker({
  db: storage.db,
  openKlaviyoKey: (shopId, sealed) => cipher.open(shopId, 'channel:klaviyo', sealed),
  klaviyoBaseUrl: config.notifications.klaviyoBaseUrl,
  optOutUrl: (shopId, owner) => optOutUrl(config, shopId, owner),
  pollIntervalMs: 20,
  retentionDays: 90,
  leaseMs: Number(process.env.WORKER_LEASE_MS ?? 1000),
  // As the tests' own workers (notification-delivery.test.ts): a send lease of seconds, left to expire when killed.
  eventWindows: [{ limit: 350, ms: 200 }],
  deletionWindows: [{ limit: 3, ms: 200 }],
  requestTimeoutMs: 2_000,
  clockSkewMs: 0,
  workerId: 'child',
})
worker.start()
process.stdout.write('worker started\n')
