/** The item fields a shopper sets (docs/api.md, "Item fields"): quantity, note, priority. */
import type { ItemPriority } from '../../db/schema.js'
import { invalid } from '../../lib/errors.js'
import { codePointLength } from '../../lib/text.js'
import { NOTE_MAX_CHARS } from './wishlists.schemas.js'

export interface ItemFieldsInput {
  quantity?: number | undefined
  note?: string | null | undefined
  priority?: ItemPriority | undefined
}

/** What a write stores: only the fields given (`note: null` clears it). */
export interface ItemFieldsPatch {
  quantity?: number
  note?: string | null
  priority?: ItemPriority
}

/**
 * A note as stored: trimmed, null when nothing is left; longer than NOTE_MAX_CHARS code points
 * after trimming is 400 at `path` (with `index` for batch items). Undefined stays undefined.
 */
export function noteOf(raw: string | null | undefined, path: string, index?: number): string | null | undefined {
  if (raw === undefined || raw === null) return raw
  const note = raw.trim()
  if (codePointLength(note) > NOTE_MAX_CHARS) {
    throw invalid([
      { path, message: `must be at most ${NOTE_MAX_CHARS} characters after trimming`, ...(index === undefined ? {} : { index }) },
    ])
  }
  return note === '' ? null : note
}

/** The given fields, checked (schema-checked already but for the note's trimmed length). */
export function itemFieldsOf(input: ItemFieldsInput, path: string, index?: number): ItemFieldsPatch {
  const out: ItemFieldsPatch = {}
  if (input.quantity !== undefined) out.quantity = input.quantity
  const note = noteOf(input.note, `${path}.note`, index)
  if (note !== undefined) out.note = note
  if (input.priority !== undefined) out.priority = input.priority
  return out
}
