import type { Browser, Page } from 'playwright-core'

/**
 * A page in a new 1280 × 900 context of `browser`: a control that never appears fails its test
 * in seconds (10 s) rather than at the test timeout, and script errors and console errors (a
 * CSP violation is one) are pushed onto `errors`, except console errors matching
 * `expectedConsoleErrors` (the failed requests a test provokes on purpose).
 */
export async function watchedPage(browser: Browser, errors: string[], expectedConsoleErrors: readonly RegExp[] = []): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  const page = await context.newPage()
  page.setDefaultTimeout(10_000)
  page.on('pageerror', (err) => errors.push(err.message))
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !expectedConsoleErrors.some((re) => re.test(msg.text()))) errors.push(msg.text())
  })
  return page
}
