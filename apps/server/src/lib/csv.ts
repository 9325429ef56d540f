/**
 * RFC 4180 CSV (null is an empty field). A field starting with `=`, `+`, `-`, `@`, tab or CR
 * gets a leading `'` (OWASP, CSV formula injection): a spreadsheet would run it as a formula.
 */
const NEEDS_QUOTES = /[",\r\n]/
const FORMULA_START = /^[=+\-@\t\r]/

export function csvField(value: string | null): string {
  if (value === null) return ''
  const text = FORMULA_START.test(value) ? `'${value}` : value
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** One record, CRLF-terminated. */
export function csvRecord(fields: readonly (string | null)[]): string {
  return `${fields.map(csvField).join(',')}\r\n`
}
