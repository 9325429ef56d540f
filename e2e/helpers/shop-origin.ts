/**
 * A shop's own origin for browser tests: a local HTTP server answering the pages a test puts in
 * `pages` (path → HTML, never cached), 404 otherwise. The widget and the API then come from
 * another origin, the service's, as on a real storefront.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ShopOrigin {
  /** `http://127.0.0.1:<port>` */
  origin: string
  pages: Map<string, string>
  close(): Promise<void>
}

export async function startShopOrigin(): Promise<ShopOrigin> {
  const pages = new Map<string, string>()
  const server = createServer((req, res) => {
    const html = pages.get(req.url ?? '')
    res.writeHead(html ? 200 : 404, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
    res.end(html ?? 'not found')
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    pages,
    close: () => new Promise<void>((done) => server.close(() => done())),
  }
}
