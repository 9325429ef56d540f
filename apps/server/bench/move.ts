/**
 * `npm run bench -- --move`: `wishlist move` on the bench's dataset (1,000,000 analytics
 * events, 10,000 customers × 10 items and the rest of bench/http/dataset.ts), SQLite →
 * PostgreSQL and back, through the same function the command runs (db/transfer.ts): the
 * copy, the read-back and the checksums included. Prints rows per second each way (target
 * ≥ 20,000) and writes them to bench/results/move.json.
 *
 *   npm run bench -- --move                                  # the 1M-event dataset
 *   npm run bench -- --move --analytics-events 10000 --customers 1000
 *
 * The run copy of the SQLite template loses the bench's own `bench_dataset` table (the
 * credentials of the HTTP scenarios), which is not the service's: a move refuses tables it
 * does not know. PostgreSQL: a scratch database on --pg-url, dropped afterwards.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { openPlainSqlite } from '../src/db/sqlite-file.js'
import { moveDatabase, type MoveReport } from '../src/db/transfer.js'
import { dbUrl, pgAdmin, prepareRunDatabase } from './http/dataset.js'

export interface MoveBenchOptions {
  analyticsEvents: number
  customers: number
  pgUrl: string
  dataDir: string
  out: string
  log: (line: string) => void
}

interface Direction {
  direction: string
  rows: number
  seconds: number
  rows_per_s: number
  tables: number
}

const figure = (direction: string, report: MoveReport): Direction => {
  const rows = Object.values(report.tables).reduce((n, t) => n + t.rows, 0)
  return {
    direction,
    rows,
    seconds: report.seconds,
    rows_per_s: Math.round(rows / report.seconds),
    tables: Object.keys(report.tables).length,
  }
}

export async function runMoveBench(opts: MoveBenchOptions): Promise<Direction[]> {
  const { run } = await prepareRunDatabase(
    'sqlite',
    { analyticsEvents: opts.analyticsEvents, customers: opts.customers },
    { dataDir: opts.dataDir, pgUrl: opts.pgUrl, reseed: false, log: opts.log },
  )
  const sourceFile = run.url.slice('sqlite:'.length)
  const db = openPlainSqlite(sourceFile)
  db.exec('drop table bench_dataset')
  db.close()
  const pgName = `bench_move_${process.pid}_${randomBytes(3).toString('hex')}`
  await pgAdmin(opts.pgUrl, (c) => c.query(`create database ${pgName}`))
  const backFile = join(opts.dataDir, `${pgName}-back.db`)
  const pg = { kind: 'postgres' as const, url: dbUrl(opts.pgUrl, pgName) }
  try {
    const results: Direction[] = []
    for (const [direction, source, target] of [
      ['sqlite → postgres', { kind: 'sqlite' as const, file: sourceFile }, pg],
      ['postgres → sqlite', pg, { kind: 'sqlite' as const, file: backFile }],
    ] as const) {
      opts.log(`move: ${direction}…`)
      const report = await moveDatabase({ source, target })
      if (report.differences.length) throw new Error(`move ${direction} differs: ${report.differences.join('; ')}`)
      const f = figure(direction, report)
      opts.log(`move: ${direction}: ${f.rows.toLocaleString('en')} rows in ${f.seconds} s, ${f.rows_per_s.toLocaleString('en')} rows/s`)
      results.push(f)
    }
    mkdirSync(dirname(opts.out), { recursive: true })
    writeFileSync(
      opts.out,
      `${JSON.stringify({ date: new Date().toISOString(), analytics_events: opts.analyticsEvents, customers: opts.customers, results }, null, 2)}\n`,
    )
    process.stdout.write(
      `\n| direction | rows | seconds | rows/s |\n|---|---:|---:|---:|\n${results.map((r) => `| ${r.direction} | ${r.rows.toLocaleString('en')} | ${r.seconds} | ${r.rows_per_s.toLocaleString('en')} |`).join('\n')}\n\nwritten to ${opts.out}\n`,
    )
    return results
  } finally {
    await run.drop()
    for (const f of [backFile, `${backFile}-wal`, `${backFile}-shm`, `${backFile}.lock`, `${sourceFile}.lock`]) rmSync(f, { force: true })
    await pgAdmin(opts.pgUrl, (c) => c.query(`drop database if exists ${pgName} with (force)`))
  }
}
