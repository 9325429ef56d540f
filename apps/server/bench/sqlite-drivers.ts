/**
 * Node's built-in `node:sqlite` (`DatabaseSync`, what the service uses) against better-sqlite3
 * (what it used before), on the statements the service's hot paths run, in one process so
 * both see the same machine:
 *
 * - read:   a wishlist page: 20 items of one owner, newest first, through a prepared
 *           statement (GET page, guest GET, shared read on a cache miss);
 * - write:  an add and a remove, each its own transaction that writes the item, the owner's
 *           count and an analytics fact (what add+remove does per request);
 * - prepare: preparing and running a statement that was not prepared before (what Kysely
 *           does for every query that is not precompiled).
 *
 * Both drivers open a file database with the service's pragmas (WAL, synchronous NORMAL).
 * The rounds alternate A B A B … and the figure kept for each is its median round, so a
 * burst of noise on the shared machine hits both. better-sqlite3 is not a dependency of the
 * project; install it beside it for the comparison, then run on the Node under test:
 *
 *   npm install --no-save better-sqlite3@13
 *   node --import tsx bench/sqlite-drivers.ts [--rounds 7] [--ms 400]
 *
 * Prints operations per CPU second per driver and the ratio node:sqlite / better-sqlite3.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

interface Stmt {
  all(...params: unknown[]): unknown[]
  run(...params: unknown[]): unknown
}
interface Driver {
  name: string
  exec(sql: string): void
  prepare(sql: string): Stmt
  close(): void
}

const { values: args } = parseArgs({
  options: { rounds: { type: 'string', default: '7' }, ms: { type: 'string', default: '400' } },
})
const ROUNDS = Number(args.rounds)
const ROUND_MS = Number(args.ms)
const OWNERS = 2_000
const ITEMS_PER_OWNER = 20

const SCHEMA = `
  create table items (shop_id integer not null, owner text not null, product_id text not null,
    added_at integer not null, primary key (shop_id, owner, product_id));
  create index items_by_time on items (shop_id, owner, added_at desc);
  create table owner_counts (shop_id integer not null, owner text not null, n integer not null,
    primary key (shop_id, owner));
  create table facts (id integer primary key autoincrement, shop_id integer not null,
    kind text not null, product_id text not null, at integer not null);`

interface BetterSqliteDatabase {
  pragma(p: string): unknown
  exec(sql: string): unknown
  prepare(sql: string): Stmt
  close(): unknown
}
type BetterSqlite = new (file: string) => BetterSqliteDatabase

function open(
  kind: 'better-sqlite3' | 'node:sqlite',
  file: string,
  NodeSqlite: typeof import('node:sqlite'),
  BetterSqlite: BetterSqlite,
): Driver {
  const pragmas = ['journal_mode = WAL', 'synchronous = NORMAL', 'temp_store = MEMORY']
  if (kind === 'better-sqlite3') {
    const db = new BetterSqlite(file)
    for (const p of pragmas) db.pragma(p)
    return { name: kind, exec: (s) => void db.exec(s), prepare: (s) => db.prepare(s), close: () => db.close() }
  }
  const db = new NodeSqlite.DatabaseSync(file)
  for (const p of pragmas) db.exec(`pragma ${p}`)
  return {
    name: kind,
    exec: (s) => db.exec(s),
    prepare: (s) => {
      const st = db.prepare(s)
      return { all: (...p) => st.all(...(p as [])), run: (...p) => st.run(...(p as [])) }
    },
    close: () => db.close(),
  }
}

function seed(d: Driver): void {
  d.exec(SCHEMA)
  const ins = d.prepare('insert into items values (1, ?, ?, ?)')
  const cnt = d.prepare('insert into owner_counts values (1, ?, ?)')
  d.exec('begin')
  for (let o = 0; o < OWNERS; o++) {
    for (let i = 0; i < ITEMS_PER_OWNER; i++) ins.run(`c${o}`, `p${i}`, 1_700_000_000_000 + i)
    cnt.run(`c${o}`, ITEMS_PER_OWNER)
  }
  d.exec('commit')
}

type Workload = (d: Driver) => () => void

const workloads: Record<string, Workload> = {
  read(d) {
    const page = d.prepare('select product_id, added_at from items where shop_id = 1 and owner = ? order by added_at desc limit 20')
    let o = 0
    return () => {
      page.all(`c${o++ % OWNERS}`)
    }
  },
  write(d) {
    const add = d.prepare('insert into items values (1, ?, ?, ?)')
    const del = d.prepare('delete from items where shop_id = 1 and owner = ? and product_id = ?')
    const bump = d.prepare('update owner_counts set n = n + ? where shop_id = 1 and owner = ?')
    const fact = d.prepare('insert into facts (shop_id, kind, product_id, at) values (1, ?, ?, ?)')
    let o = 0
    return () => {
      const owner = `c${o++ % OWNERS}`
      d.exec('begin')
      add.run(owner, 'px', Date.now())
      bump.run(1, owner)
      fact.run('add', 'px', Date.now())
      d.exec('commit')
      d.exec('begin')
      del.run(owner, 'px')
      bump.run(-1, owner)
      fact.run('remove', 'px', Date.now())
      d.exec('commit')
    }
  },
  prepare(d) {
    let o = 0
    return () => {
      // A statement text never seen before: parse, plan and run.
      const n = o++
      d.prepare(`select count(*) as n from items where shop_id = 1 and owner = ? and added_at > ${n}`).all(`c${n % OWNERS}`)
    }
  },
}

/**
 * Operations per CPU second of `op` over about `ms` milliseconds of this process's CPU time:
 * CPU time, not wall time, so the rounds the shared machine takes the core away from us
 * (other processes' work) do not count against either driver.
 */
function timed(op: () => void, ms: number): number {
  let n = 0
  const cpuMs = () => {
    const { user, system } = process.cpuUsage()
    return (user + system) / 1000
  }
  const start = cpuMs()
  let now = start
  while (now - start < ms) {
    for (let i = 0; i < 50; i++) op()
    n += 50
    now = cpuMs()
  }
  return (n * 1000) / (now - start)
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0

async function main(): Promise<void> {
  const NodeSqlite = await import('node:sqlite')
  // Not a dependency (see the top): a variable specifier keeps TypeScript from resolving it.
  const betterSqlite3 = 'better-sqlite3'
  const BetterSqlite = ((await import(betterSqlite3)) as { default: BetterSqlite }).default
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-drivers-'))
  const drivers = (['better-sqlite3', 'node:sqlite'] as const).map((k) => {
    const d = open(k, join(dir, `${k.replace(':', '-')}.db`), NodeSqlite, BetterSqlite)
    seed(d)
    return d
  })
  console.log(`node ${process.version}, ${ROUNDS} rounds of ${ROUND_MS} ms per driver and workload (median round)`)
  const rows: string[] = []
  try {
    for (const [name, make] of Object.entries(workloads)) {
      const ops = drivers.map(make)
      const samples: number[][] = drivers.map(() => [])
      for (const op of ops) timed(op, 100) // warm-up
      for (let r = 0; r < ROUNDS; r++) {
        // Alternate which driver goes first, so neither always runs on the warmer machine.
        const order = r % 2 === 0 ? [0, 1] : [1, 0]
        for (const i of order) samples[i]!.push(timed(ops[i]!, ROUND_MS))
      }
      const [b, n] = samples.map(median) as [number, number]
      rows.push(`| ${name} | ${Math.round(b).toLocaleString('en')} | ${Math.round(n).toLocaleString('en')} | ${(n / b).toFixed(2)} |`)
    }
  } finally {
    for (const d of drivers) d.close()
    rmSync(dir, { recursive: true, force: true })
  }
  console.log('| workload | better-sqlite3 ops per CPU s | node:sqlite ops per CPU s | node:sqlite / better-sqlite3 |')
  console.log('|---|---:|---:|---:|')
  for (const r of rows) console.log(r)
}

await main()
