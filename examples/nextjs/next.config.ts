import { fileURLToPath } from 'node:url'
import type { NextConfig } from 'next'

/** The repository root: the workspace's dependencies (next, react, the SDK) are installed there. */
const root = fileURLToPath(new URL('../..', import.meta.url))

const nextConfig: NextConfig = {
  turbopack: { root },
  outputFileTracingRoot: root,
  poweredByHeader: false,
}

export default nextConfig
