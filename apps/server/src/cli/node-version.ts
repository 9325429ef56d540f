/**
 * The Node.js versions the service runs on: package.json's `engines` (^22.19.0 || >=24.11.0).
 * bin/wishlist.js checks it before it imports the CLI, which on an older Node fails with a
 * stack trace (node:sqlite's `DatabaseSync` missing on Node 20). This module imports nothing,
 * so that it loads on any Node.
 */
export const SUPPORTED_NODE_RANGE = '^22.19.0 || >=24.11.0'

/** Whether `version` (`process.version`, `v24.11.0`, or without the `v`) is in the supported range. */
export function isSupportedNode(version: string): boolean {
  const [major = 0, minor = 0] = version
    .replace(/^v/, '')
    .split('.')
    .map((part) => Number.parseInt(part, 10))
  if (major === 22) return minor >= 19
  if (major === 24) return minor >= 11
  return major > 24
}

/** What the command says on an unsupported Node (then exits 1), or undefined. */
export function nodeVersionProblem(version: string): string | undefined {
  return isSupportedNode(version) ? undefined : `wishlist needs Node.js 22.19+ or 24.11+ (found ${version})`
}
