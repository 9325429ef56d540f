/**
 * PostgreSQL text cannot hold U+0000 (SQLite can): a NUL anywhere in a request would be
 * stored on one backend and a 500 on the other. Requests carrying one are refused up front,
 * the same on both. Iterative, so a deeply nested body cannot overflow the stack.
 */
export function findNul(value: unknown, root: string): string | null {
  const stack: [unknown, string][] = [[value, root]]
  while (stack.length > 0) {
    const [v, path] = stack.pop() as [unknown, string]
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return path
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push([v[i], `${path}.${i}`])
    } else if (v !== null && typeof v === 'object') {
      for (const [k, inner] of Object.entries(v)) {
        if (k.includes('\u0000')) return path
        stack.push([inner, `${path}.${k}`])
      }
    }
  }
  return null
}
