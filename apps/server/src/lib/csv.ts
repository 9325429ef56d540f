/**
 * RFC 4180 CSV: a field containing a comma, a double quote, CR or LF is enclosed in
 * double quotes with inner quotes doubled; records end with CRLF. null is an empty field.
 *
 * A field that starts with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`
 * (OWASP's rule against CSV formula injection): a spreadsheet would otherwise run a handle
 * or list name such as `=HYPERLINK(…)` as a formula when the merchant opens the export.
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
