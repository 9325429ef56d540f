/**
 * The ceiling: bare Fastify (no logger, no hooks, no database) answering every GET with a
 * precomputed JSON body read from BENCH_BODY_FILE, of the same size as the service's
 * answer. Whatever the service loses against this is the service's own cost.
 */
import { readFileSync } from 'node:fs'
import Fastify from 'fastify'

const body = readFileSync(process.env.BENCH_BODY_FILE ?? '', 'utf8')
const app = Fastify({ logger: false })
app.get('/*', (_request, reply) => {
  reply.header('content-type', 'application/json; charset=utf-8').send(body)
})
const address = await app.listen({ port: 0, host: '127.0.0.1' })
process.send?.({ listening: address })
// A clean exit on SIGTERM, so `--cpu-prof` (bench --cpu-prof DIR) writes its profile; and when
// the bench that started it has ended, however (its IPC channel closed).
const stop = () => {
  void app.close().then(() => process.exit(0))
}
process.on('SIGTERM', stop)
process.on('disconnect', stop)
