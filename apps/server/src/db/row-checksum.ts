/**
 * Values in one canonical form, whichever backend they were read from, and the checksum of a
 * table's rows built on it. The same row reads differently through the two drivers (a
 * boolean as `true` or `1`, a timestamp as a Date or milliseconds, JSON as an object or
 * text, bytes as a Buffer or a Uint8Array, a numeric as a string or a number); the column's
 * kind (db/introspection.ts) says which form it takes.
 */
import { createHash, type Hash } from 'node:crypto'
import type { ValueKind } from './introspection.js'
import type { Backend } from './types.js'

function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
}

const asBytes = (v: unknown): Buffer =>
  v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : Buffer.from(String(v), 'utf8')

const isTrue = (v: unknown): boolean => v === true || v === 1 || v === 1n || v === '1' || v === 't' || v === 'true'

const millis = (v: unknown): number =>
  v instanceof Date ? v.getTime() : typeof v === 'string' && !/^-?\d+$/.test(v) ? Date.parse(v) : Number(v)

/**
 * How one side hands over a column: its kind, and for JSON whether the driver has parsed it
 * already (PostgreSQL's json/jsonb: a JavaScript string there is a JSON string, not JSON text).
 */
export interface ColumnForm {
  name: string
  kind: ValueKind
  parsedJson: boolean
}

const parseJson = (v: unknown, parsed: boolean): unknown => (parsed || typeof v !== 'string' ? v : JSON.parse(v))

/** The canonical text of one non-null value of a column of `kind`. */
export function canonicalValue(kind: ValueKind, v: unknown, parsedJson = false): string {
  switch (kind) {
    case 'integer':
      return typeof v === 'boolean' ? (v ? '1' : '0') : String(v)
    case 'real':
    case 'numeric':
      return String(Number(v))
    case 'boolean':
      return isTrue(v) ? '1' : '0'
    case 'timestamp':
      return String(millis(v))
    case 'json':
      try {
        return canonicalJson(parseJson(v, parsedJson))
      } catch {
        return `!${String(v)}` // not JSON at all: compared as it is
      }
    case 'bytes':
      return asBytes(v).toString('hex')
    case 'text':
      return typeof v === 'string' ? v : v instanceof Uint8Array ? asBytes(v).toString('utf8') : String(v)
  }
}

/**
 * A value as the target backend's driver takes it for a column of `kind`. JSON goes as a
 * document where the target column parses it (`to.parsedJson`: PostgreSQL's json/jsonb,
 * written through a JSON batch), else as JSON text.
 */
export function valueFor(
  backend: Backend,
  kind: ValueKind,
  v: unknown,
  from: { parsedJson: boolean },
  to: { parsedJson: boolean },
): unknown {
  if (v === null || v === undefined) return null
  switch (kind) {
    case 'integer':
      return typeof v === 'boolean' ? (v ? 1 : 0) : v
    case 'real':
    case 'numeric':
      return backend === 'sqlite' && typeof v === 'string' ? Number(v) : v
    case 'boolean':
      return backend === 'postgres' ? isTrue(v) : isTrue(v) ? 1 : 0
    case 'timestamp':
      return backend === 'postgres' ? new Date(millis(v)) : millis(v)
    case 'json':
      if (to.parsedJson) return parseJson(v, from.parsedJson)
      return from.parsedJson || typeof v !== 'string' ? JSON.stringify(v) : v
    case 'bytes':
      return asBytes(v)
    case 'text':
      return typeof v === 'string' ? v : canonicalValue('text', v)
  }
}

/** Kinds whose values every driver already hands over in the target's form. */
export const passesAsIs = (kind: ValueKind): boolean => kind === 'integer' || kind === 'text'

/**
 * The running checksum of a table: SHA-256 over every row in the canonical order, each value
 * written as its length and canonical text (null apart), so no two different rows or row
 * sequences write the same bytes.
 */
export class TableChecksum {
  private readonly hash: Hash = createHash('sha256')
  rows = 0
  constructor(private readonly columns: readonly ColumnForm[]) {}

  add(rows: readonly Record<string, unknown>[]): void {
    let chunk = ''
    for (const row of rows) {
      for (const c of this.columns) {
        const v = row[c.name]
        if (v === null || v === undefined) chunk += '-|'
        else {
          const text = canonicalValue(c.kind, v, c.parsedJson)
          chunk += `${text.length}:${text}|`
        }
      }
      chunk += '\n'
    }
    this.rows += rows.length
    this.hash.update(chunk)
  }

  digest(): string {
    return this.hash.digest('hex')
  }
}
