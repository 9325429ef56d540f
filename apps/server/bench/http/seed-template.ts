/**
 * Seeds one benchmark template and exits: the child process of `seedApart` in dataset.ts.
 *
 *   node --import tsx bench/http/seed-template.ts <sqlite|postgres> <file|url> <analytics events> <customers>
 */
import { type BenchBackend, seedTemplateAt } from './dataset.js'

const [backend, target, events, customers] = process.argv.slice(2)
if ((backend !== 'sqlite' && backend !== 'postgres') || !target || !events || !customers) {
  process.stderr.write('usage: seed-template.ts <sqlite|postgres> <file|url> <analytics events> <customers>\n')
  process.exit(2)
}
await seedTemplateAt(backend as BenchBackend, target, { analyticsEvents: Number(events), customers: Number(customers) }, (s) =>
  process.stderr.write(`${s}\n`),
)
