/**
 * RFC 4180 CSV: a field containing a comma, a double quote, CR or LF is enclosed in
 * double quotes with inner quotes doubled; records end with CRLF. null is an empty field.
 */
const NEEDS_QUOTES = /[",\r\n]/

export function csvField(value: string | null): string {
  if (value === null) return ''
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value
}

/** One record, CRLF-terminated. */
export function csvRecord(fields: readonly (string | null)[]): string {
  return `${fields.map(csvField).join(',')}\r\n`
}
