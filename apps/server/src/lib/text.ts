/**
 * Lengths in Unicode code points: what SPEC's "characters" means here, and what JSON
 * Schema's `maxLength` counts (an emoji is one character, not two UTF-16 units).
 */
export const codePointLength = (s: string): number => [...s].length
