/**
 * The service as deployed: the compiled `startServer()` of dist/server.js (what `wishlist
 * serve` runs; config from the environment, migrations, logger, rate limiter, webhook
 * worker), on port 0, without a TypeScript loader; reports its address to the parent over
 * IPC. Plain JavaScript so it runs on bare `node`: bench/run.ts builds dist/ first.
 */
import { loadConfig } from '../../dist/config.js'
import { startServer } from '../../dist/server.js'

const server = await startServer(loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1' }))
process.send?.({ listening: server.address })
const stop = () => {
  void server.close().then(() => process.exit(0))
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
// The bench that started it has ended, however (its IPC channel closed): stop with it.
process.on('disconnect', stop)
