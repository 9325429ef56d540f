/**
 * Precompiled statements (db/precompiled.ts): compiled once from named parameters, one level
 * of fields included, and refused when a parameter the builder reads is not bound.
 */
import { type Kysely, sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openStorage, type Storage } from '../../src/db/connect.js'
import { precompiled, precompiledSql } from '../../src/db/precompiled.js'
import type { Db } from '../../src/db/types.js'

let storage: Storage
// The table here is not in the service's schema.
let db: Kysely<{ t: { id: number; kind: string; name: string } }>
const own = (d: Db) => d as unknown as typeof db

beforeEach(async () => {
  storage = openStorage({ kind: 'sqlite', file: ':memory:' })
  db = storage.db as unknown as typeof db
  await sql`create table t (id integer primary key, kind text, name text)`.execute(db)
})

afterEach(() => storage.destroy())

describe('precompiled statements', () => {
  it('fill their named parameters and their fields into one statement text', async () => {
    const insert = precompiled((d, p: { id: number; owner: { type: string; id: string } }) =>
      own(d).insertInto('t').values({ id: p.id, kind: p.owner.type, name: p.owner.id }),
    )
    const byKind = precompiled((d, p: { kind: string; limit: number }) =>
      own(d).selectFrom('t').select(['id', 'name']).where('kind', '=', p.kind).orderBy('id').limit(p.limit),
    )
    await insert(storage.db, { id: 1, owner: { type: 'guest', id: 'g1' } })
    await insert(storage.db, { id: 2, owner: { type: 'customer', id: 'c1' } })
    await insert(storage.db, { id: 3, owner: { type: 'customer', id: 'c2' } })
    expect(await byKind(storage.db, { kind: 'customer', limit: 1 })).toEqual([{ id: 2, name: 'c1' }])
    expect(await byKind(storage.db, { limit: 5, kind: 'customer' })).toEqual([
      { id: 2, name: 'c1' },
      { id: 3, name: 'c2' },
    ])
    expect([...precompiledSql].filter((text) => text.includes('"t"'))).toHaveLength(2)
  })

  it('refuse a parameter that is read but not bound, or inlined into the SQL', async () => {
    const unbound = precompiled((d, p: { kind: string; limit: number }) =>
      own(d)
        .selectFrom('t')
        .select('id')
        .where('kind', '=', p.kind)
        .limit(p.limit + 1),
    )
    await expect(unbound(storage.db, { kind: 'guest', limit: 1 })).rejects.toThrow('precompiled query: limit is not a bound parameter')
    const unboundField = precompiled((d, p: { owner: { type: string; id: string } }) =>
      own(d).selectFrom('t').select('id').where('kind', '=', p.owner.type).where('name', '=', `${p.owner.id}%`),
    )
    await expect(unboundField(storage.db, { owner: { type: 'guest', id: 'g1' } })).rejects.toThrow(
      'precompiled query: owner.id is not a bound parameter',
    )
    const inlined = precompiled((d, p: { kind: string }) =>
      own(d)
        .selectFrom('t')
        .select('id')
        .where(sql<boolean>`kind = ${sql.lit(`${p.kind}`)}`),
    )
    await expect(inlined(storage.db, { kind: 'guest' })).rejects.toThrow('precompiled query: a parameter was inlined into the SQL')
  })
})
