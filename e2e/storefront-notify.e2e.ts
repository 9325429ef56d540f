/**
 * The widget's notification form in Chromium against the real server, in French and English
 * at 320 and 1280 px: the theme extension's "E-mail alerts" block rendered from its own Liquid
 * on a shop page served from another origin than the service (as a storefront is), the widget
 * with the shop's storefront key (a guest). Keyboard only: the shopper types the e-mail, ticks
 * the consent box and sends; the service stores the e-mail with source `shopper` and exactly
 * the consent sentence shown (read back from its database); "stop" withdraws it. Without the
 * tick nothing is sent: the box says why and has the focus. An e-mail the service refuses and
 * a lost connection are said in text and through the live regions. A merchant's own consent
 * text (the block's setting) is what is shown and stored. No sideways scroll at 320 px;
 * axe-core finds no serious or critical violation. Screenshots in e2e/screenshots/.
 */
import { resolve } from 'node:path'
import { describe, expect, test } from 'vitest'
import { EXTENSION_DIR, renderBlock, shopifyLiquid } from '../apps/server/test/helpers/shopify-liquid.js'
import { seriousViolations } from './helpers/axe.js'
import { env, page, SCREENSHOTS, shop, useShopBrowser } from './helpers/shop-browser.js'

const engine = shopifyLiquid({ root: EXTENSION_DIR })

/** What the shopper reads, per language (the catalogue's texts, written out as the shopper sees them). */
const TEXT = {
  fr: {
    heading: 'Alertes par e-mail pour votre liste d’envies',
    email: 'E-mail',
    consent:
      'Envoyez-moi un e-mail quand un article de ma liste d’envies est de nouveau en stock ou moins cher. Je peux arrêter à tout moment.',
    submit: 'Me prévenir',
    stop: 'Arrêter ces e-mails',
    saved: (email: string) => `C’est fait : la boutique écrira à ${email} au sujet de votre liste d’envies.`,
    stopped: 'C’est fait : la boutique ne vous écrira plus au sujet de votre liste d’envies.',
    tick: 'Cochez la case pour accepter ces e-mails.',
    badEmail: 'Saisissez une adresse e-mail valide, par exemple nom@exemple.fr.',
    offline: 'Votre e-mail n’a pas pu être enregistré. Pas de connexion : vérifiez-la et réessayez.',
  },
  en: {
    heading: 'E-mail alerts for your wishlist',
    email: 'E-mail',
    consent: 'E-mail me when an item of my wishlist is back in stock or cheaper. I can stop this at any time.',
    submit: 'Notify me',
    stop: 'Stop these e-mails',
    saved: (email: string) => `Done: the shop will e-mail ${email} about your wishlist.`,
    stopped: 'Done: the shop will no longer e-mail you about your wishlist.',
    tick: 'Tick the box to agree to these e-mails.',
    badEmail: 'Enter a valid e-mail address, such as name@example.com.',
    offline: 'Your e-mail could not be saved. No connection: check it and try again.',
  },
} as const
type Lang = keyof typeof TEXT
const CASES = (['fr', 'en'] as const).flatMap((lang) => ([320, 1280] as const).map((width) => ({ lang, width })))

let pageCount = 0

useShopBrowser()

/** The shop's page in `lang` at `width` with the "E-mail alerts" block (its `settings`) and the widget; waits for the form (`state`: what this browser gave). */
async function openShop(lang: Lang, width: number, settings: Record<string, unknown> = {}, state = 'none'): Promise<void> {
  const block = await renderBlock(engine, 'notify-form', { settings, scope: { request: { locale: { iso_code: lang } } } })
  const path = `/pages/alerts-${++pageCount}`
  shop.pages.set(
    path,
    `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Shop</title><style>*{box-sizing:border-box}body{font:16px/1.5 system-ui,sans-serif;margin:1rem;color:#1c2128;background:#fff}
input,button{font:inherit}input[type=email]{padding:.5rem;border:1px solid #6b6b6b;border-radius:4px;width:24rem}
button{padding:.5rem 1rem;border:1px solid #1c2128;background:#1c2128;color:#fff;border-radius:4px}</style></head>
<body><main><h1>Shop</h1><h2>${lang === 'fr' ? 'Ma liste' : 'My list'}</h2>${block}</main>
<script async src="${env.baseUrl}/widget.js" data-storefront-key="${env.storefrontKey}"></script></body></html>`,
  )
  await page.setViewportSize({ width, height: 900 })
  await page.goto(shop.origin + path)
  await page.evaluate(() => (window as unknown as { Wishlist: { ready: Promise<void> } }).Wishlist.ready)
  await expect.poll(() => host().getAttribute('data-notify-state')).toBe(state)
}
const host = () => page.locator('[data-wishlist-notify-form]')

const focused = () =>
  page.evaluate(() => {
    const el = document.activeElement
    return { tag: el?.tagName ?? '', name: el?.getAttribute('name') ?? '', text: el?.textContent?.trim() ?? '' }
  })
/** Tabs until the focused element matches (its name attribute or its text; at most `max` presses): the keyboard alone. */
async function tabTo(match: (f: { name: string; text: string }) => boolean, max = 20): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab')
    if (match(await focused())) return
  }
  throw new Error(`nothing focusable matched within ${max} Tab presses (last: ${JSON.stringify(await focused())})`)
}
/** What the page's live regions say now. */
const spoken = () => page.locator('[aria-live]').allTextContents()
const noHorizontalScroll = () => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)
const guestId = () => page.evaluate(() => localStorage.getItem('wishlist:guest-id'))
/** The service's stored contact of this browser's guest, from its database. */
async function storedContact() {
  const id = await guestId()
  if (id === null) return undefined
  return env.testApp.storage.db
    .selectFrom('notification_contacts')
    .select(['email', 'source', 'consent_text'])
    .where('owner_type', '=', 'guest')
    .where('owner_id', '=', id)
    .executeTakeFirst()
}
/** The requests the page sent to the contact route. */
function contactRequests(): string[] {
  const sent: string[] = []
  page.on('request', (r) => {
    if (r.url().endsWith('/v1/wishlists/me/contact')) sent.push(r.method())
  })
  return sent
}

describe.each(CASES)('the notification form in $lang at $width px', ({ lang, width }) => {
  const text = TEXT[lang]

  test('keyboard only: e-mail, tick, send: stored with the consent text shown; stop withdraws it', async () => {
    await openShop(lang, width)
    const form = page.getByRole('form', { name: text.heading })
    expect(await form.count()).toBe(1)
    const box = page.getByRole('checkbox', { name: text.consent, exact: true })
    expect(await box.isChecked()).toBe(false)
    expect(await page.getByRole('textbox', { name: text.email, exact: true }).getAttribute('autocomplete')).toBe('email')
    // Nothing given yet: no "stop" button.
    expect(await page.getByRole('button', { name: text.stop }).count()).toBe(0)

    const address = `Ana.${lang}.${width}@Example.com`
    await tabTo((f) => f.name === 'email')
    await page.keyboard.type(address)
    await page.keyboard.press('Tab')
    expect((await focused()).name).toBe('consent')
    await page.keyboard.press('Space')
    expect(await box.isChecked()).toBe(true)
    await page.keyboard.press('Tab')
    expect((await focused()).text).toBe(text.submit)
    const answered = page.waitForResponse((r) => r.url().endsWith('/v1/wishlists/me/contact') && r.request().method() === 'PUT')
    await page.keyboard.press('Enter')
    expect((await answered).status()).toBe(200)

    const stored = address.toLowerCase()
    await expect.poll(() => host().getAttribute('data-notify-state')).toBe('given')
    const status = host().locator('.wl-notify-status')
    expect(await status.textContent()).toBe(text.saved(stored))
    await expect.poll(spoken).toContain(text.saved(stored))
    expect(await storedContact()).toEqual({ email: stored, source: 'shopper', consent_text: text.consent })
    // The box is unticked again: another e-mail needs a new tick.
    expect(await box.isChecked()).toBe(false)

    expect(await seriousViolations(page), `notify form after sending, ${lang} ${width} px`).toEqual([])
    expect(await noHorizontalScroll(), `no horizontal scroll at ${width} px`).toBe(true)
    if (lang === 'fr') await host().screenshot({ path: resolve(SCREENSHOTS, `notify-form-saved-fr-${width}.png`) })

    // A later page of this browser offers to stop them; "stop" withdraws the e-mail.
    await openShop(lang, width, {}, 'given')
    expect(await page.getByRole('textbox', { name: text.email, exact: true }).inputValue()).toBe(stored)
    await tabTo((f) => f.text === text.stop)
    await page.keyboard.press('Enter')
    await expect.poll(() => host().getAttribute('data-notify-state')).toBe('none')
    expect(await host().locator('.wl-notify-status').textContent()).toBe(text.stopped)
    await expect.poll(spoken).toContain(text.stopped)
    expect(await page.evaluate(() => document.activeElement?.className)).toBe('wl-notify-status')
    expect(await storedContact()).toBeUndefined()
    expect(await page.getByRole('button', { name: text.stop }).count()).toBe(0)
  })

  test('without the tick nothing is sent: the box says why and has the focus', async () => {
    await openShop(lang, width)
    const sent = contactRequests()
    await tabTo((f) => f.name === 'email')
    await page.keyboard.type('ben@example.com')
    // Past the box without ticking it, to the button.
    await tabTo((f) => f.text === text.submit)
    await page.keyboard.press('Enter')
    const box = page.getByRole('checkbox', { name: text.consent, exact: true })
    await expect.poll(() => box.getAttribute('aria-invalid')).toBe('true')
    expect((await focused()).name).toBe('consent')
    const error = host().locator('.wl-notify-consent .wl-notify-error')
    expect(await error.textContent()).toBe(text.tick)
    expect(await error.isVisible()).toBe(true)
    await expect.poll(spoken).toContain(text.tick)
    // The error is the box's description, read with it.
    expect(await box.evaluate((b) => document.getElementById(b.getAttribute('aria-describedby') ?? '')?.textContent)).toBe(text.tick)
    expect(sent).toEqual([])
    expect(await storedContact()).toBeUndefined()

    expect(await seriousViolations(page), `notify form refused locally, ${lang} ${width} px`).toEqual([])
    expect(await noHorizontalScroll(), `no horizontal scroll at ${width} px`).toBe(true)
    if (lang === 'fr') await host().screenshot({ path: resolve(SCREENSHOTS, `notify-form-no-tick-fr-${width}.png`) })
  })

  test('an e-mail the service refuses, and a lost connection, are said in text and aloud', async () => {
    await openShop(lang, width)
    const emailField = page.getByRole('textbox', { name: text.email, exact: true })
    await tabTo((f) => f.name === 'email')
    await page.keyboard.type('ana-at-example')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Space')
    await page.keyboard.press('Tab')
    const refused = page.waitForResponse((r) => r.url().endsWith('/v1/wishlists/me/contact'))
    await page.keyboard.press('Enter')
    // The service's own check: 400 VALIDATION_ERROR on the e-mail.
    expect((await refused).status()).toBe(400)
    await expect.poll(() => emailField.getAttribute('aria-invalid')).toBe('true')
    expect((await focused()).name).toBe('email')
    expect(await host().locator('.wl-notify-field .wl-notify-error').textContent()).toBe(text.badEmail)
    await expect.poll(spoken).toContain(text.badEmail)
    expect(await storedContact()).toBeUndefined()
    expect(await host().getAttribute('data-notify-state')).toBe('none')
    expect(await seriousViolations(page), `notify form refused by the service, ${lang} ${width} px`).toEqual([])
    if (lang === 'fr') await host().screenshot({ path: resolve(SCREENSHOTS, `notify-form-refused-fr-${width}.png`) })

    // A good e-mail, but no connection: the reason, in the page's language.
    await page.route('**/v1/wishlists/me/contact', (route) => route.abort('connectionfailed'))
    // The focus is still on the e-mail field the service refused.
    await page.keyboard.press('Control+A')
    await page.keyboard.type('ana@example.com')
    await tabTo((f) => f.text === text.submit)
    await page.keyboard.press('Enter')
    const status = host().locator('.wl-notify-status')
    await expect.poll(() => status.textContent()).toBe(text.offline)
    await expect.poll(spoken).toContain(text.offline)
    expect(await emailField.getAttribute('aria-invalid')).toBeNull()
    expect(await storedContact()).toBeUndefined()
    expect(await noHorizontalScroll(), `no horizontal scroll at ${width} px`).toBe(true)
  })
})

test("the merchant's own consent text (the block's setting) is shown and stored as the shopper saw it", async () => {
  const consent = 'Write to me about "my" wishlist <only>, at most once a week.'
  await openShop('en', 320, { consent_label: consent, submit_label: 'Keep me posted' })
  const box = page.getByRole('checkbox', { name: consent, exact: true })
  await tabTo((f) => f.name === 'email')
  await page.keyboard.type('cleo@example.com')
  await page.keyboard.press('Tab')
  await page.keyboard.press('Space')
  expect(await box.isChecked()).toBe(true)
  await tabTo((f) => f.text === 'Keep me posted')
  await page.keyboard.press('Enter')
  await expect.poll(() => host().getAttribute('data-notify-state')).toBe('given')
  expect(await storedContact()).toEqual({ email: 'cleo@example.com', source: 'shopper', consent_text: consent })
})
