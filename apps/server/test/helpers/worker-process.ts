// A webhook worker in its own process, for crash tests:
// `node --import tsx test/helpers/worker-process.ts` with DATABASE_URL and WORKER_LEASE_MS.
import { loadConfig } from '../../src/config.js'
import { openStorage } from '../../src/db/connect.js'
import { createWebhookWorker } from '../../src/modules/webhooks/webhook-worker.js'
import { TEST_JWT_SECRET } from './app.js'

const config = loadConfig({
  ...process.env,
  JWT_SECRET: TEST_JWT_SECRET,
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '20',
})
const storage = openStorage(config.database)
const worker = createWebhookWorker({
  storage,
  webhooks: config.webhooks,
  leaseMs: Number(process.env.WORKER_LEASE_MS ?? 1000),
  workerId: 'child',
})
worker.start()
process.stdout.write('worker started\n')
