/**
 * The V8 flags the service process runs with: the `wishlist` bin's shebang passes them
 * (bin/wishlist.js), and tests and the bench start the service with the same ones.
 *
 * `--max-semi-space-size=16` caps V8's young generation at Node 20's size. Node 24 lets it
 * grow to 64 MB semi-spaces (a plain allocation loop: 134 MB of new space on Node 24, 34 MB on
 * Node 20), which put the server about 75–100 MB higher for no measured gain: the full-size
 * fan-out flood peaked at 324–348 MB against 269 MB with the cap, and bench --quick measured
 * the GET page at 49/57 against 61/58 µs of CPU and add+remove at 126/131 against 122/121 µs
 * (with / without, alternating), peak RSS 195–201 against 276 MB.
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=16'] as const
