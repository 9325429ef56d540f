/**
 * The service as deployed: `startServer()` of src/server.ts (config from the environment,
 * migrations, logger, rate limiter, webhook worker), on port 0; reports its address to the parent over IPC.
 */
import { loadConfig } from '../../src/config.js'
import { startServer } from '../../src/server.js'

const server = await startServer(loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1' }))
process.send?.({ listening: server.address })
const stop = () => {
  void server.close().then(() => process.exit(0))
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
