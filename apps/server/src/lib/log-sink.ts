import { pino } from 'pino'

/** Characters of log lines gathered before they are handed to the destination as one string (one write). */
const BATCH_CHARS = 16 * 1024

/**
 * Gathers lines in an array and hands sonic-boom one string per ~16 KiB. Given each line
 * itself, sonic-boom appends it to its pending string and measures that string's UTF-8
 * length on every write, which flattens the growing rope each time: about 5 µs per access
 * line on a GET page, more than everything else the line costs (CPU profile of the
 * floor with the access line; the A/B is in docs/performance.md, "Per-request concerns").
 */
export interface LineSink {
  write(line: string): boolean
  flush(): void
  flushSync(): void
}

function batched(out: ReturnType<typeof pino.destination>): LineSink {
  let lines: string[] = []
  let chars = 0
  const handOver = () => {
    if (lines.length === 0) return
    const chunk = lines.length === 1 ? (lines[0] as string) : lines.join('')
    lines = []
    chars = 0
    out.write(chunk)
  }
  return {
    write(line) {
      lines.push(line)
      chars += line.length
      if (chars >= BATCH_CHARS) handOver()
      return true
    },
    flush() {
      handOver()
      out.flush()
    },
    flushSync() {
      handOver()
      out.flushSync()
    },
  }
}

let stdout: LineSink | undefined

/**
 * The process's one log destination on standard output: lines gathered into ~16 KiB
 * strings, each written with one synchronous system call (pino's default destination writes
 * each line with its own), flushed at least every second and when the process exits.
 * Synchronous like pino's default destination: with asynchronous writes, a batch still in
 * libuv's thread pool when the process exits was lost (seen on Node 22: the first 164 lines
 * of a test's 1,000 never arrived), which no flush at exit can recover. As with any
 * synchronous logger, a reader of standard output that stops reading (a full pipe) holds
 * the process until it reads again.
 */
export function stdoutSink(): LineSink {
  if (stdout === undefined) {
    const sink = batched(pino.destination({ dest: 1, sync: true }))
    setInterval(() => sink.flush(), 1000).unref()
    process.once('exit', () => sink.flushSync())
    stdout = sink
  }
  return stdout
}
