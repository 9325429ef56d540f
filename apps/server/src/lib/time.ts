/** Time is stored as integer epoch milliseconds and formatted only at the edge. */
export const now = (): number => Date.now()

/** `2026-01-02T03:04:05.678Z` */
export const isoMillis = (ms: number): string => new Date(ms).toISOString()

/** `2026-01-02T03:04:05Z` (seconds precision, used by the reviews interface). */
export const isoSeconds = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`

export const DAY_MS = 86_400_000

/** `hh:mm:60` (a leap second) in an RFC 3339 date-time, which Date.parse cannot read. */
const LEAP_SECOND = /^(\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}):60(?:\.\d+)?(.*)$/

/**
 * Epoch milliseconds of an RFC 3339 date-time (as the schemas' `date-time` format admits
 * it). A leap second (second 60, e.g. `2016-12-31T23:59:60Z`) is read as the last
 * millisecond of its minute.
 */
export function parseDateTime(raw: string): number {
  const leap = LEAP_SECOND.exec(raw)
  return leap === null ? Date.parse(raw) : Date.parse(`${leap[1]}:59.999${leap[2]}`)
}
