import type { Kysely } from 'kysely'
import type { Database } from './schema.js'

export type Db = Kysely<Database>
export type Backend = 'sqlite' | 'postgres'
