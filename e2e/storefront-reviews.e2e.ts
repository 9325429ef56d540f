/**
 * The widget's reviews in Chromium against the real server, in French and English at a
 * phone's and a laptop's width: a Helpful vote keeps the focus while it is sent, names its
 * review, and says why the service refused it (its real limit of 5 guest votes per address and
 * review); a reviews read that fails says so in place with a way to try again; the review form
 * can be cancelled, says what to fix in each field, and a review the shop approves at once
 * shows in the page's list and summary, read again past the browser's cache. The shop's page
 * is served from another origin than the service (as a storefront is), without request
 * interception where the browser's HTTP cache matters. Keyboard only; axe-core; screenshots in
 * e2e/screenshots/.
 */
import { resolve } from 'node:path'
import type { Page } from 'playwright-core'
import { describe, expect, test } from 'vitest'
import { seriousViolations } from './helpers/axe.js'
import { env, page, SCREENSHOTS, shop, useShopBrowser } from './helpers/shop-browser.js'

/** What the shopper reads, per language (the catalogue's texts, written out as the shopper sees them). */
const TEXT = {
  fr: {
    helpful: (name: string, title?: string) => `Utile, avis de ${name}${title ? ` : ${title}` : ''}`,
    limited: 'Votre vote n’a pas été compté : cet avis a reçu trop de votes depuis votre connexion. Veuillez réessayer plus tard.',
    failed: 'Les avis n’ont pas pu être chargés.',
    retry: 'Réessayer',
    open: 'Écrire un avis',
    form: 'Écrire un avis',
    cancel: 'Annuler',
    submit: 'Envoyer l’avis',
    ratingGroup: 'Note',
    star4: '4 étoiles',
    fix: 'Veuillez corriger les champs indiqués ci-dessous.',
    rating: 'Choisissez une note de 1 à 5 étoiles.',
    body: (max: string) => `Rédigez votre avis (de 1 à ${max} caractères).`,
    name: (max: string) => `Indiquez votre nom (de 1 à ${max} caractères).`,
    email: 'Saisissez une adresse e-mail valide, par exemple nom@exemple.fr.',
    thanks: 'Merci pour votre avis !',
    count: (n: number) => `${n} avis`,
  },
  en: {
    helpful: (name: string, title?: string) => `Helpful, review by ${name}${title ? `: ${title}` : ''}`,
    limited: 'Your vote was not counted: this review has had too many votes from your connection. Please try again later.',
    failed: 'The reviews could not be loaded.',
    retry: 'Try again',
    open: 'Write a review',
    form: 'Write a review',
    cancel: 'Cancel',
    submit: 'Submit review',
    ratingGroup: 'Rating',
    star4: '4 stars',
    fix: 'Please correct the fields marked below.',
    rating: 'Choose a rating from 1 to 5 stars.',
    body: (max: string) => `Write your review (1 to ${max} characters).`,
    name: (max: string) => `Enter your name (1 to ${max} characters).`,
    email: 'Enter a valid e-mail address, such as name@example.com.',
    thanks: 'Thank you for your review!',
    count: (n: number) => `${n} review${n === 1 ? '' : 's'}`,
  },
} as const
type Lang = keyof typeof TEXT
const CASES = (['fr', 'en'] as const).flatMap((lang) => ([375, 1280] as const).map((width) => ({ lang, width })))

let products = 5_100_000

useShopBrowser()

const sf = () => ({ 'x-storefront-key': env.storefrontKey })
async function review(productId: string, body: Record<string, unknown>): Promise<number> {
  const res = await env.testApp.call('POST', '/api/v1/reviews', { headers: sf(), body: { productId, rating: 5, ...body } })
  expect(res.status).toBe(201)
  expect(res.body.status).toBe('approved')
  return res.body.id as number
}

/** The shop's page in `lang` at `width`: the widget script, and `body`. */
async function openShop(body: string, lang: Lang, width: number): Promise<void> {
  const path = `/products/${++products}`
  shop.pages.set(
    path,
    `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Shop</title><style>body{font-family:system-ui,sans-serif;margin:1rem;color:#1c2128;background:#fff}[data-reviews-product-id]{display:block;min-height:12rem}</style></head>
<body><main><h1>Shop</h1><h2>${lang === 'fr' ? 'Avis' : 'Reviews'}</h2>${body}</main>
<script async src="${env.baseUrl}/widget.js" data-storefront-key="${env.storefrontKey}"></script></body></html>`,
  )
  await page.setViewportSize({ width, height: 900 })
  await page.goto(shop.origin + path)
  await page.evaluate(() => (window as unknown as { Wishlist: { ready: Promise<void> } }).Wishlist.ready)
}

const focused = () =>
  page.evaluate(() => {
    const el = document.activeElement
    const text = el?.getAttribute('aria-label') ?? el?.textContent?.trim() ?? ''
    return { tag: el?.tagName ?? '', text, name: el?.getAttribute('name') ?? '' }
  })
/** Tabs until the focused element's label or text matches (at most `max` presses): the keyboard alone. */
async function tabTo(match: RegExp, max = 40): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab')
    if (match.test((await focused()).text)) return
  }
  throw new Error(`nothing focusable matching ${match} within ${max} Tab presses (last: ${(await focused()).text})`)
}
/** What the page's live regions say now. */
const spoken = () => page.locator('[aria-live]').allTextContents()
const noHorizontalScroll = () => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)
const exact = (s: string) => new RegExp(`^${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`)

describe.each(CASES)('reviews in $lang at $width px', ({ lang, width }) => {
  const text = TEXT[lang]

  test('Helpful: names its review, keeps the focus while sent, and says why the 6th vote from one address was refused', async () => {
    const productId = String(products + 1)
    const marie = await review(productId, {
      customerEmail: 'marie@example.com',
      customerName: 'Marie',
      title: 'Super bonnet',
      body: 'Chaud.',
    })
    await review(productId, { customerEmail: 'paul@example.com', customerName: 'Paul', body: 'Un peu grand.' })
    // Five guests from this address already voted for Marie's review (the browser shares 127.0.0.1).
    for (let i = 0; i < 5; i++) {
      const vote = await env.testApp.call('PUT', `/api/v1/reviews/${marie}/helpful`, {
        headers: { ...sf(), 'x-guest-id': `g_prior_${lang}_${width}_${i}` },
      })
      expect(vote.status).toBe(200)
    }
    await openShop(`<div data-reviews-product-id="${productId}" data-reviews-product-name="Bonnet"></div>`, lang, width)
    const host = page.locator(`[data-reviews-product-id="${productId}"]`)
    await expect.poll(() => host.getAttribute('data-reviews-state')).toBe('ready')

    // Every button has a name of its own, its visible text first.
    const forMarie = page.getByRole('button', { name: text.helpful('Marie', 'Super bonnet'), exact: true })
    const forPaul = page.getByRole('button', { name: text.helpful('Paul'), exact: true })
    expect(await forMarie.count()).toBe(1)
    expect(await forPaul.count()).toBe(1)

    // The vote is held on its way: the button keeps the focus, pressed at once, and ignores a second press.
    let release = () => {}
    const held = new Promise<void>((r) => (release = r))
    const sent: string[] = []
    await page.route('**/api/v1/reviews/*/helpful', async (route) => {
      sent.push(route.request().method())
      await held
      await route.continue()
    })
    await tabTo(exact(text.helpful('Marie', 'Super bonnet')))
    const answered = page.waitForResponse((r) => r.url().endsWith(`/api/v1/reviews/${marie}/helpful`))
    await page.keyboard.press('Enter')
    await expect.poll(() => sent.length).toBe(1)
    expect(await forMarie.getAttribute('aria-disabled')).toBe('true')
    expect(await forMarie.getAttribute('aria-pressed')).toBe('true')
    expect(await forMarie.evaluate((b) => b === document.activeElement && !(b as HTMLButtonElement).disabled)).toBe(true)
    await page.keyboard.press('Enter')
    expect(await forMarie.evaluate((b) => b === document.activeElement)).toBe(true)
    release()

    // The service's real limit: the 6th guest vote from one address for one review.
    expect((await answered).status()).toBe(429)
    await expect.poll(() => forMarie.getAttribute('aria-pressed')).toBe('false')
    expect(sent).toEqual(['PUT'])
    expect(await forMarie.getAttribute('aria-disabled')).toBeNull()
    const reason = host.locator('.wl-review', { hasText: 'Marie' }).locator('.wl-helpful-error')
    expect(await reason.textContent()).toBe(text.limited)
    expect(await reason.isVisible()).toBe(true)
    await expect.poll(spoken).toContain(text.limited)
    expect(await forMarie.evaluate((b) => b === document.activeElement)).toBe(true)
    // Nothing was counted: five votes, as before.
    const stored = await env.testApp.call('GET', `/api/v1/reviews/${marie}`, { headers: sf() })
    expect(stored.body.helpfulCount).toBe(5)

    expect(await seriousViolations(page), `reviews with a refused vote, ${lang} ${width} px`).toEqual([])
    if (lang === 'fr') await host.screenshot({ path: resolve(SCREENSHOTS, `reviews-helpful-refused-fr-${width}.png`) })
    if (width === 375) {
      await page.setViewportSize({ width: 320, height: 900 })
      expect(await noHorizontalScroll(), 'no horizontal scroll at 320 px').toBe(true)
    }
  })

  test('a reviews read that fails says so in place, in the live region, and can be tried again', async () => {
    const productId = String(products + 1)
    await review(productId, { customerEmail: 'ana@example.com', customerName: 'Ana', body: 'Parfait.' })
    await page.route('**/api/v1/products/*/reviews**', (route) => route.abort('connectionfailed'))
    await openShop(`<div data-reviews-product-id="${productId}" data-reviews-product-name="Sac"></div>`, lang, width)
    const host = page.locator(`[data-reviews-product-id="${productId}"]`)
    await expect.poll(() => host.getAttribute('data-reviews-state')).toBe('error')
    const message = host.locator('.wl-reviews-failed')
    expect(await message.isVisible()).toBe(true)
    expect(await message.textContent()).toMatch(new RegExp(`^${text.failed} \\S`))
    await expect.poll(async () => (await spoken()).some((s) => s.startsWith(text.failed))).toBe(true)
    expect(await seriousViolations(page), `failed reviews, ${lang} ${width} px`).toEqual([])
    if (lang === 'fr') await host.screenshot({ path: resolve(SCREENSHOTS, `reviews-load-failed-fr-${width}.png`) })
    if (width === 375) {
      await page.setViewportSize({ width: 320, height: 900 })
      expect(await noHorizontalScroll(), 'no horizontal scroll at 320 px').toBe(true)
    }

    // The connection is back: the retry button reads the reviews; the focus stays in the block.
    await page.unroute('**/api/v1/products/*/reviews**')
    await tabTo(exact(text.retry))
    await page.keyboard.press('Enter')
    await expect.poll(() => host.getAttribute('data-reviews-state')).toBe('ready')
    expect(await host.locator('.wl-review-body').allTextContents()).toEqual(['Parfait.'])
    expect(await host.evaluate((h) => h.contains(document.activeElement))).toBe(true)
  })

  test('the review form: cancel, required rating, what to fix per field, and an approved review shows at once', async () => {
    const productId = String(products + 1)
    await review(productId, { customerEmail: 'first@example.com', customerName: 'Léa', rating: 4, body: 'Bien.' })
    await openShop(
      `<div data-reviews-product-id="${productId}" data-reviews-product-name="Écharpe"></div>
       <div data-wishlist-review-form data-product-id="${productId}"></div>`,
      lang,
      width,
    )
    const host = page.locator(`[data-reviews-product-id="${productId}"]`)
    await expect.poll(() => host.getAttribute('data-reviews-state')).toBe('ready')
    expect(await host.locator('.wl-summary').textContent()).toContain(text.count(1))

    // The browser keeps the public reads 5 minutes: a review published meanwhile is not in its copy.
    await review(productId, { customerEmail: 'second@example.com', customerName: 'Noé', body: 'Douce.' })
    const cached = await page.evaluate(
      async ([url, key]) =>
        (await (await fetch(url, { headers: { accept: 'application/json', 'x-storefront-key': key } })).json()).reviewCount,
      [`${env.baseUrl}/api/v1/products/${productId}/reviews/summary`, env.storefrontKey] as const,
    )
    expect(cached).toBe(1)

    // Open, then cancel: the form goes, the focus is back on its opener.
    await tabTo(exact(text.open))
    await page.keyboard.press('Enter')
    const form = page.getByRole('form', { name: text.form })
    await form.waitFor()
    expect(await focused()).toMatchObject({ name: 'rating' })
    const group = form.getByRole('group', { name: text.ratingGroup })
    expect(await group.count()).toBe(1)
    for (const radio of await group.getByRole('radio').all())
      expect(await radio.evaluate((r) => (r as HTMLInputElement).required)).toBe(true)
    await tabTo(exact(text.cancel))
    await page.keyboard.press('Enter')
    expect(await form.count()).toBe(0)
    expect(await focused()).toMatchObject({ tag: 'BUTTON', text: text.open })
    expect(await page.getByRole('button', { name: text.open }).getAttribute('aria-expanded')).toBe('false')

    // Open again; send it empty: each field says what to fix, the focus on the first (the rating).
    await page.keyboard.press('Enter')
    await form.waitFor()
    await tabTo(exact(text.submit))
    await page.keyboard.press('Enter')
    await expect.poll(() => form.getByRole('alert').textContent()).toBe(text.fix)
    expect(await focused()).toMatchObject({ name: 'rating' })
    const max = (n: number) => new Intl.NumberFormat(lang).format(n)
    const described = async (locator: ReturnType<Page['locator']>) =>
      page.locator(`#${await locator.getAttribute('aria-describedby')}`).textContent()
    expect(await group.getAttribute('aria-invalid')).toBe('true')
    expect(await described(group)).toBe(text.rating)
    expect(await form.locator('.wl-form-error').first().isVisible()).toBe(true)
    expect(await described(form.locator('textarea[name=body]'))).toBe(text.body(max(5000)))
    expect(await described(form.locator('input[name=name]'))).toBe(text.name(max(100)))
    expect(await described(form.locator('input[name=email]'))).toBe(text.email)
    expect(await seriousViolations(page), `form with errors, ${lang} ${width} px`).toEqual([])
    if (lang === 'fr') await form.screenshot({ path: resolve(SCREENSHOTS, `review-form-errors-fr-${width}.png`) })
    if (width === 375) {
      await page.setViewportSize({ width: 320, height: 900 })
      expect(await noHorizontalScroll(), 'no horizontal scroll at 320 px').toBe(true)
      await page.setViewportSize({ width, height: 900 })
    }

    // A malformed address passes the form's own check; the service's details name the field.
    await page.keyboard.press('Space')
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight')
    expect(await form.getByRole('radio', { name: text.star4, exact: true }).isChecked()).toBe(true)
    await page.keyboard.press('Tab')
    await page.keyboard.type('Au clavier')
    await page.keyboard.press('Tab')
    await page.keyboard.type('Écrit sans souris.')
    await page.keyboard.press('Tab')
    await page.keyboard.type('Kim')
    await page.keyboard.press('Tab')
    await page.keyboard.type('kim@nowhere')
    const refused = page.waitForResponse((r) => r.url().endsWith('/api/v1/reviews') && r.request().method() === 'POST')
    await page.keyboard.press('Enter')
    expect((await refused).status()).toBe(400)
    await expect.poll(() => form.locator('input[name=email]').getAttribute('aria-invalid')).toBe('true')
    expect(await described(form.locator('input[name=email]'))).toBe(text.email)
    expect(await focused()).toMatchObject({ name: 'email' })
    await page.keyboard.press('ControlOrMeta+A')
    await page.keyboard.type(`kim-${lang}-${width}@example.com`)
    await page.keyboard.press('Enter')
    await page.getByRole('status').filter({ hasText: text.thanks }).waitFor()

    // Approved at once: the list and the summary on this page show it, without a reload.
    await expect.poll(() => host.locator('.wl-summary').textContent()).toContain(text.count(3))
    expect(await host.locator('.wl-review-body').allTextContents()).toContain('Écrit sans souris.')
    expect(await host.locator('.wl-review-body').allTextContents()).toContain('Douce.')
    expect(await page.evaluate(() => performance.getEntriesByType('navigation').length)).toBe(1)
    expect(await seriousViolations(page), `after the submission, ${lang} ${width} px`).toEqual([])
    if (lang === 'fr') await page.locator('main').screenshot({ path: resolve(SCREENSHOTS, `review-form-approved-fr-${width}.png`) })
  })
})
