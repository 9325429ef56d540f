// Runs the CLI from source for the benches: `node --import tsx bench/serve-entry.ts serve`.
import { main } from '../src/cli/main.js'

process.exitCode = await main(process.argv.slice(2))
