/**
 * A maintenance command (backup, restore, move) declined to act. The message is one line
 * naming the problem and the way out; nothing was written to either database.
 */
export class RefusalError extends Error {}
