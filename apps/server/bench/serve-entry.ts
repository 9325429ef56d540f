// Runs the CLI from source for the benches: `node --import tsx bench/serve-entry.ts serve`.
import { main } from '../src/cli/main.js'

// Started with an IPC channel (bench/csv-export.ts): when the bench has ended, however (the
// channel closed), the server shuts down as on SIGTERM.
process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'))

process.exitCode = await main(process.argv.slice(2))
