/**
 * A REAL server for the SDK tests: the app from apps/server, built in-process on a fresh
 * in-memory SQLite database, listening on 127.0.0.1 on a free port.
 */
import { createTestApp, type TestApp, type TestShop } from '../../../../apps/server/test/helpers/app.js'

export interface RunningServer {
  baseUrl: string
  testApp: TestApp
  createShop: TestApp['createShop']
  close(): Promise<void>
}

/** `worker`: also run the webhook worker, which delivers the events the calls cause. */
export async function startServer(env: Record<string, string> = {}, opts: { worker?: boolean } = {}): Promise<RunningServer> {
  const testApp = await createTestApp({ env, ...(opts.worker ? { worker: true } : {}) })
  await testApp.app.listen({ host: '127.0.0.1', port: 0 })
  const address = testApp.app.server.address()
  if (address === null || typeof address === 'string') throw new Error('server has no TCP address')
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    testApp,
    createShop: (...args) => testApp.createShop(...args),
    close: () => testApp.close(),
  }
}

export type { TestShop }
