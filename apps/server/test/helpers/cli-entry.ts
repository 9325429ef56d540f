// Runs the CLI from source, for tests: `node --import tsx test/helpers/cli-entry.ts <args>`.
import { main } from '../../src/cli/main.js'

process.exitCode = await main(process.argv.slice(2))
