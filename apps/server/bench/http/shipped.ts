/**
 * The service's own modules as they ship: compiled, from dist/ (bench/run.ts builds it
 * before any run). A floor that prices the service's concerns, or holds the service itself,
 * loads them from there rather than from src/ through tsx, whose esbuild transform names
 * every function it creates (`__name`, an Object.defineProperty per closure made per
 * request): that cost exists only under the loader and was charged to the service's GET page
 * (CPU profile of `--floor-concerns`: 3% of its samples).
 */
const dist = new URL('../../dist/', import.meta.url)

export async function shipped<T>(path: string): Promise<T> {
  return (await import(new URL(path, dist).href)) as T
}
