/**
 * The V8 flags the service runs with (bin/wishlist.js's shebang; tests and the bench too).
 * `--max-semi-space-size=16` caps the young generation at Node 20's size: Node 24's larger
 * one put the server 75–100 MB higher for no measured gain (fan-out flood peak 324–348 MB
 * against 269 MB with the cap; bench --quick CPU within noise).
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=16'] as const
