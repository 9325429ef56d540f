/**
 * The SQLite storage as db/connect.ts opens it: group commit (db/group-commit.ts) and
 * LIMIT/OFFSET written so statements are planned once
 * (db/sqlite-dialect.ts). A real file, and a second connection to it (as another process
 * would have) to see what is committed.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { type Kysely, sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openStorage, type Storage } from '../../src/db/connect.js'
import { precompiled } from '../../src/db/precompiled.js'
import { sqliteResultCode } from '../../src/db/sqlite-file.js'

let dir: string
let storage: Storage
let other: DatabaseSync
// The tables here are not in the service's schema.
let db: Kysely<{ t: { id: number; note: string | null } }>

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wishlist-sqlite-'))
  storage = openStorage({ kind: 'sqlite', file: join(dir, 'w.db') })
  db = storage.db as unknown as typeof db
  await sql`create table t (id integer primary key, note text)`.execute(db)
  other = new DatabaseSync(join(dir, 'w.db'))
})

afterEach(async () => {
  other.close()
  await storage.destroy()
  rmSync(dir, { recursive: true, force: true })
})

const committedIds = () =>
  other
    .prepare('select id from t order by id')
    .all()
    .map((r) => r.id)
/** Commits in the WAL so far: frames whose header carries the database size after a commit. */
function commits(): number {
  const wal = readFileSync(join(dir, 'w.db-wal'))
  const pageSize = wal.readUInt32BE(8)
  const [salt1, salt2] = [wal.readUInt32BE(16), wal.readUInt32BE(20)]
  let n = 0
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (wal.readUInt32BE(at + 8) !== salt1 || wal.readUInt32BE(at + 12) !== salt2) break
    if (wal.readUInt32BE(at + 4) !== 0) n++
  }
  return n
}
const insert = (id: number) => db.transaction().execute((trx) => trx.insertInto('t').values({ id, note: null }).execute())

describe('group commit on SQLite', () => {
  it('commits the transactions begun in one turn together, and answers each only once committed', async () => {
    const before = commits()
    const seenAtAnswer: number[][] = []
    const all = [1, 2, 3, 4, 5].map((id) => insert(id).then(() => void seenAtAnswer.push(committedIds() as number[])))
    // Begun, not committed: another connection sees nothing yet.
    await Promise.resolve()
    expect(committedIds()).toEqual([])
    await Promise.all(all)
    expect(commits() - before).toBe(1)
    // Every caller was answered after the one commit: each saw all five rows committed.
    expect(seenAtAnswer).toEqual(Array(5).fill([1, 2, 3, 4, 5]))

    // Transactions awaited one after another each get a commit of their own.
    const mid = commits()
    await insert(6)
    await insert(7)
    expect(commits() - mid).toBe(2)
  })

  it("holds a turn's database work until the turn's check phase, then runs it together", async () => {
    other.exec('PRAGMA busy_timeout = 0')
    const write = insert(1)
    for (let i = 0; i < 50; i++) await Promise.resolve()
    // Not begun yet, however many microtasks ran: another connection can still take the write lock.
    other.exec('begin immediate')
    other.exec('rollback')
    await write
    expect(committedIds()).toEqual([1])
  })

  it('rolls back a failing transaction alone; the others of its batch commit', async () => {
    const failing = db.transaction().execute(async (trx) => {
      await trx.insertInto('t').values({ id: 2, note: 'half written' }).execute()
      throw new Error('refused after a write')
    })
    const results = await Promise.allSettled([insert(1), failing, insert(3)])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ message: 'refused after a write' })
    expect(committedIds()).toEqual([1, 3])
  })

  it('answers a read made during an open batch only after that batch has committed', async () => {
    const write = insert(1)
    let committedAtAnswer: unknown[] = []
    // Same turn: the read runs inside the open batch and sees its row…
    const read = db
      .selectFrom('t')
      .select('id')
      .execute()
      .then((rows) => {
        committedAtAnswer = committedIds()
        return rows
      })
    expect(await read).toEqual([{ id: 1 }])
    // …and is answered only once that row is committed.
    expect(committedAtAnswer).toEqual([1])
    await write
  })

  it('fails every transaction of a batch whose COMMIT fails, and writes none of them', async () => {
    // A deferred foreign key is checked at COMMIT: one orphan makes the whole COMMIT fail.
    await sql`create table parent (id integer primary key)`.execute(db)
    await sql`create table child (id integer primary key, parent_id integer references parent (id) deferrable initially deferred)`.execute(
      db,
    )
    const orphan = db.transaction().execute((trx) => sql`insert into child (id, parent_id) values (1, 99)`.execute(trx))
    const results = await Promise.allSettled([insert(1), orphan, insert(2)])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected'])
    expect(sqliteResultCode((results[0] as PromiseRejectedResult).reason)).toBe('SQLITE_CONSTRAINT_FOREIGNKEY')
    expect(committedIds()).toEqual([])
    expect(other.prepare('select count(*) as n from child').get()?.n).toBe(0)
    // The connection is usable again.
    await insert(3)
    expect(committedIds()).toEqual([3])
  })

  it("waits for another connection's write lock without blocking the event loop", async () => {
    other.exec('begin immediate')
    other.exec('insert into t (id) values (100)')
    let ticks = 0
    let ticked!: () => void
    const fiveTicks = new Promise<void>((resolve) => (ticked = resolve))
    const timer = setInterval(() => {
      if (++ticks === 5) ticked()
    }, 5)
    const write = insert(1)
    await fiveTicks
    // Still waiting for the lock, and timers kept firing meanwhile.
    expect(ticks).toBeGreaterThanOrEqual(5)
    expect(committedIds()).toEqual([100]) // the holder's own view
    other.exec('commit')
    await write
    clearInterval(timer)
    expect(committedIds()).toEqual([1, 100])
  })

  it('gives a transaction its own savepoints (Kysely controlled transactions)', async () => {
    const trx = await db.startTransaction().execute()
    await trx.insertInto('t').values({ id: 1, note: null }).execute()
    const sp = await trx.savepoint('inner').execute()
    await sp.insertInto('t').values({ id: 2, note: null }).execute()
    await sp.rollbackToSavepoint('inner').execute()
    await trx.commit().execute()
    expect(committedIds()).toEqual([1])
  })

  it("runs a transaction's precompiled statements in it, and refuses them once it has ended", async () => {
    // After a transaction's first statement, its precompiled ones run on its connection directly.
    const insertNote = precompiled((d, p: { id: number; note: string }) =>
      (d as unknown as typeof db).insertInto('t').values({ id: p.id, note: p.note }),
    )
    type AppDb = Parameters<typeof insertNote>[0]
    const notes = () => other.prepare('select id, note from t order by id').all()
    let ended: AppDb | undefined
    await db.transaction().execute(async (trx) => {
      ended = trx as unknown as AppDb
      for (const id of [1, 2, 3]) await insertNote(ended, { id, note: `n${id}` })
    })
    const failing = db.transaction().execute(async (trx) => {
      await insertNote(trx as unknown as AppDb, { id: 4, note: 'rolled back' })
      await insertNote(trx as unknown as AppDb, { id: 5, note: 'rolled back' })
      throw new Error('refused after two writes')
    })
    await expect(failing).rejects.toThrow('refused after two writes')
    // A transaction used after its end is refused, even while another one holds the connection.
    await db.transaction().execute(async (trx) => {
      await insertNote(trx as unknown as AppDb, { id: 6, note: 'open' })
      await expect(insertNote(ended as AppDb, { id: 7, note: 'late' })).rejects.toThrow(/already committed/)
    })
    expect(notes()).toEqual([
      { id: 1, note: 'n1' },
      { id: 2, note: 'n2' },
      { id: 3, note: 'n3' },
      { id: 6, note: 'open' },
    ])
  })
})

describe('SQLite WAL checkpoints', () => {
  it('checkpoints every 500 pages or so, so the WAL file (and each checkpoint) stays small', async () => {
    // 40 rows of 100 KB, about 25 pages each: 1,000 pages, twice the checkpoint size.
    for (let id = 1; id <= 40; id++)
      await insert(id).then(() =>
        db
          .updateTable('t')
          .set({ note: 'x'.repeat(100_000) })
          .where('id', '=', id)
          .execute(),
      )
    expect(committedIds()).toHaveLength(40)
    const wal = readFileSync(join(dir, 'w.db-wal'))
    const frames = (wal.length - 32) / (24 + wal.readUInt32BE(8))
    // SQLite's default (1,000 pages) would have let it hold every page written here.
    expect(frames).toBeGreaterThan(400)
    expect(frames).toBeLessThan(600)
  })
})

describe('SQLite LIMIT', () => {
  it('writes LIMIT and OFFSET values as +? (planned once) with the same rows as a plain limit', async () => {
    for (let i = 1; i <= 10; i++) await insert(i)
    const query = db.selectFrom('t').select('id').orderBy('id').limit(3).offset(4)
    expect(query.compile().sql).toMatch(/limit \+\? offset \+\?$/)
    expect((await query.execute()).map((r) => r.id)).toEqual([5, 6, 7])
  })
})
