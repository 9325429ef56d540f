import { pino } from 'pino'

let stdout: ReturnType<typeof pino.destination> | undefined

/**
 * The process's one log destination on standard output: sonic-boom gathering lines until
 * 4 KiB are waiting (pino's default writes each line with its own system call), flushed at
 * least every second, and by pino when the process exits.
 */
export function stdoutSink(): ReturnType<typeof pino.destination> {
  if (stdout === undefined) {
    const out = pino.destination({ dest: 1, minLength: 4096, sync: false })
    setInterval(() => out.flush(), 1000).unref()
    stdout = out
  }
  return stdout
}
