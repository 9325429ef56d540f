import type { Kysely } from 'kysely'
import { codePointLength, comparisonKey } from '../../lib/text.js'
import type { Backend } from '../types.js'

/**
 * List names are compared by `comparisonKey` (lib/text.ts) instead of lower-casing, held in
 * `name_key`. Per owner, names that now collide keep their name on the default, then the
 * oldest list; later ones get the first free ` (2)`, ` (3)` … (cut to 100 characters); a
 * name of format characters only becomes `List (2)`. Nothing else changes.
 */
const DEFAULT_LIST_ID = 'default'
const DEFAULT_LIST_NAME = 'My Wishlist'
const MAX_NAME = 100
const BATCH = 5_000

interface ListRow {
  shop_id: string
  owner_type: string
  owner_id: string
  id: string
  name: string
  name_key: string
  created_at: number
}

type Db = Kysely<{ wishlist_lists: ListRow & { updated_at: number } }>

/** The name a list keeps or gets, and its key, given the keys taken before it. */
function uniqueName(name: string, taken: Set<string>): { name: string; key: string } {
  const key = comparisonKey(name)
  if (key !== '' && !taken.has(key)) return { name, key }
  const base = key === '' ? 'List' : name
  for (let n = 2; ; n++) {
    const suffix = ` (${n})`
    const candidate = [...base].slice(0, MAX_NAME - codePointLength(suffix)).join('') + suffix
    const candidateKey = comparisonKey(candidate)
    if (!taken.has(candidateKey)) return { name: candidate, key: candidateKey }
  }
}

/** One owner's lists with their new names and keys (only those that change). */
function rekeyOwner(rows: ListRow[]): { row: ListRow; name: string; key: string }[] {
  const ordered = [...rows].sort((a, b) =>
    a.id === DEFAULT_LIST_ID ? -1 : b.id === DEFAULT_LIST_ID ? 1 : a.created_at - b.created_at || (a.id < b.id ? -1 : 1),
  )
  // Without a row, the default list still holds its name.
  const taken = new Set<string>(rows.some((r) => r.id === DEFAULT_LIST_ID) ? [] : [comparisonKey(DEFAULT_LIST_NAME)])
  const changes: { row: ListRow; name: string; key: string }[] = []
  for (const row of ordered) {
    const next = uniqueName(row.name, taken)
    taken.add(next.key)
    if (next.key !== row.name_key || next.name !== row.name) changes.push({ row, ...next })
  }
  return changes
}

async function apply(db: Db, changes: { row: ListRow; name: string; key: string }[]): Promise<void> {
  const at = Date.now()
  const where = (row: ListRow) =>
    db
      .updateTable('wishlist_lists')
      .where('shop_id', '=', row.shop_id)
      .where('owner_type', '=', row.owner_type)
      .where('owner_id', '=', row.owner_id)
      .where('id', '=', row.id)
  // Through a key no name can have first, so that no update meets another row's old key.
  for (const { row } of changes)
    await where(row)
      .set({ name_key: `\u0001${row.id}` })
      .execute()
  for (const { row, name, key } of changes)
    await where(row)
      .set(name === row.name ? { name_key: key } : { name, name_key: key, updated_at: at })
      .execute()
}

export async function up(kysely: Kysely<unknown>, _backend: Backend): Promise<void> {
  const db = kysely as Db
  let after: ListRow | undefined
  let owner: ListRow[] = []
  const sameOwner = (a: ListRow, b: ListRow) => a.shop_id === b.shop_id && a.owner_type === b.owner_type && a.owner_id === b.owner_id
  for (;;) {
    const last = after
    const page = await db
      .selectFrom('wishlist_lists')
      .select(['shop_id', 'owner_type', 'owner_id', 'id', 'name', 'name_key', 'created_at'])
      .$if(last !== undefined, (q) =>
        q.where((eb) =>
          eb(
            eb.refTuple('shop_id', 'owner_type', 'owner_id', 'id'),
            '>',
            eb.tuple(last!.shop_id, last!.owner_type, last!.owner_id, last!.id),
          ),
        ),
      )
      .orderBy('shop_id')
      .orderBy('owner_type')
      .orderBy('owner_id')
      .orderBy('id')
      .limit(BATCH)
      .execute()
    for (const row of page) {
      if (owner.length > 0 && !sameOwner(owner[0] as ListRow, row)) {
        await apply(db, rekeyOwner(owner))
        owner = []
      }
      owner.push({ ...row, created_at: Number(row.created_at) })
    }
    if (page.length < BATCH) break
    after = page[page.length - 1]
  }
  if (owner.length > 0) await apply(db, rekeyOwner(owner))
}
