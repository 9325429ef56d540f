/** Time is stored as integer epoch milliseconds and formatted only at the edge. */
export const now = (): number => Date.now()

/** `2026-01-02T03:04:05.678Z` */
export const isoMillis = (ms: number): string => new Date(ms).toISOString()

/** `2026-01-02T03:04:05Z` (seconds precision, used by the reviews interface). */
export const isoSeconds = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`

export const DAY_MS = 86_400_000
