import { parse } from 'csv-parse/sync'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { csvField, csvRecord } from '../../src/lib/csv.js'

describe('RFC 4180 records', () => {
  it('quotes only fields with a comma, quote, CR or LF, doubling quotes', () => {
    expect(csvField('plain')).toBe('plain')
    expect(csvField('a,b')).toBe('"a,b"')
    expect(csvField('say "hi"')).toBe('"say ""hi"""')
    expect(csvField('two\r\nlines')).toBe('"two\r\nlines"')
    expect(csvField(null)).toBe('')
    expect(csvRecord(['a', null, 'b'])).toBe('a,,b\r\n')
  })

  it('round-trips any text through a standard CSV parser', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'é', ',', '"', '\r', '\n', ' ', '🙂') })
    fc.assert(
      fc.property(fc.array(fc.array(text, { minLength: 2, maxLength: 5 }), { minLength: 1, maxLength: 5 }), (records) => {
        const width = records[0]!.length
        const rows = records.map((r) => r.slice(0, width).concat(Array(Math.max(0, width - r.length)).fill('x')))
        const out = rows.map((r) => csvRecord(r)).join('')
        expect(parse(out, { relax_column_count: false })).toEqual(rows)
      }),
    )
  })
})
