/**
 * The service's own review page, `PUBLIC_BASE_URL/reviews/new?invitation=…`: where a review
 * invitation's link points for a shop that is not on Shopify. A form with no script, in the
 * shopper's language, that submits as the reviews API would; friendly pages for every
 * invitation that cannot be used, never an error body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'

let t: TestApp
let shop: TestShop
let seq = 0

beforeAll(async () => {
  t = await createTestApp()
  shop = await t.createShop('free', { reviews_auto_approve: true })
})
afterAll(() => t.close())

/** An order of `productId`; the invitation's reviewUrl. */
async function invitation(
  productId: string,
  email: string | null = `buyer${++seq}@example.com`,
  of: TestShop = shop,
  locale?: string,
): Promise<{ token: string; reviewUrl: string }> {
  const token = await of.adminToken()
  const order = await t.call('POST', '/v1/events', {
    token,
    body: {
      events: [
        {
          type: 'order.created',
          order_id: `70${++seq}`,
          customer_id: '901',
          ...(email === null ? {} : { email }),
          ...(locale === undefined ? {} : { locale }),
          line_items: [{ product_id: productId }],
        },
      ],
    },
  })
  expect(order.status).toBe(200)
  const listed = await t.call('GET', `/v1/admin/review-invitations?order_id=70${seq}`, { token })
  const inv = listed.body.data.invitations[0] as { token: string; reviewUrl: string }
  return inv
}

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await t.inject({ method: 'GET', url, headers })
  expect(res.statusCode).toBe(200)
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
  expect(res.headers['cache-control']).toBe('private, no-store')
  expect(res.headers['content-security-policy']).toContain("default-src 'none'")
  return res.body
}

/** The form posted as a browser posts it: the page it answers with, or the one its redirect (303, review taken) names. */
async function post(form: Record<string, string>, query = '', headers: Record<string, string> = {}) {
  const res = await submit(form, query, headers)
  if (res.statusCode === 303) return get(String(res.headers.location), headers)
  expect(res.statusCode, res.body).toBe(200)
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
  return res.body
}

const submit = (form: Record<string, string>, query = '', headers: Record<string, string> = {}) =>
  t.inject({
    method: 'POST',
    url: `/reviews/new${query}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(form).toString(),
  })

describe('GET /reviews/new', () => {
  it('is where reviewUrl points for a shop that is not on Shopify, and shows an accessible form', async () => {
    const { token, reviewUrl } = await invitation('5501')
    expect(reviewUrl).toBe(`http://wishlist.test/reviews/new?invitation=${token}`)
    const html = await get(`/reviews/new?invitation=${token}`)
    expect(html).toMatch(/^<!doctype html>\n<html lang="en">/)
    expect(html).toContain('<title>Write a review</title>')
    expect(html).toContain('<form class="wl-review__form" method="post" action="/reviews/new?locale=en" novalidate>')
    expect(html).toContain('<fieldset class="wl-review__rating">')
    expect(html.match(/<input type="radio" name="rating"/g)).toHaveLength(5)
    expect(html).toContain('<label for="wl-review-body">Your review')
    // The order gave the e-mail: not asked again.
    expect(html).not.toContain('name="email"')
  })

  it("speaks the shopper's language (locale, else Accept-Language)", async () => {
    const { token } = await invitation('5502')
    expect(await get(`/reviews/new?invitation=${token}&locale=de`)).toContain('<html lang="de">')
    const fromHeader = await get(`/reviews/new?invitation=${token}`, { 'accept-language': 'sv;q=1, ja;q=0.8, en;q=0.5' })
    expect(fromHeader).toContain('<html lang="ja">')
    expect(fromHeader).toContain('<title>レビューを書く</title>')
    expect(await get(`/reviews/new?invitation=${token}`, { 'accept-language': 'pt-PT, pt-BR;q=0.9' })).toContain('<html lang="pt-BR">')
  })

  it('says so, kindly, for an unknown, expired or used link and for no link at all', async () => {
    expect(await get('/reviews/new')).toContain('<h1>This review link is not valid</h1>')
    expect(await get('/reviews/new?invitation=%3Cscript%3E')).toContain('<h1>This review link is not valid</h1>')
    expect(await get(`/reviews/new?invitation=${'z'.repeat(32)}`)).toContain('<h1>This review link is not valid</h1>')
    const { token } = await invitation('5503')
    await t.storage.db
      .updateTable('review_invitations')
      .set({ expires_at: Date.now() - 1 })
      .where('token', '=', token)
      .execute()
    expect(await get(`/reviews/new?invitation=${token}&locale=es`)).toContain('<h1>Este enlace de reseña ha caducado</h1>')
  })
})

describe('POST /reviews/new', () => {
  it('shows every field problem at once and keeps what was typed, then takes the review: verified, published', async () => {
    const { token } = await invitation('5504', null)
    const form = await get(`/reviews/new?invitation=${token}`)
    expect(form).toContain('name="email" type="email"')

    const wrong = await post({ invitation: token, body: '', name: 'Ann <b>', email: 'nope' })
    // The summary comes first, is focused with no script, names the problem in the tab's title and links each problem to its field.
    expect(wrong).toContain('<title>Error: Write a review</title>')
    expect(wrong).toContain('<div class="wl-review__summary" role="alert" tabindex="-1" autofocus id="wl-review-errors">')
    expect(wrong).toContain('<li><a href="#wl-review-body">Write your review (up to 5,000 characters).</a></li>')
    expect(wrong).toContain('<li><a href="#wl-review-rating-5">Choose a rating from 1 to 5 stars.</a></li>')
    expect(wrong).toContain('id="wl-review-rating-5"')
    expect(wrong.indexOf('wl-review__summary')).toBeLessThan(wrong.indexOf('<form'))
    expect(wrong).toContain('Choose a rating from 1 to 5 stars.')
    expect(wrong).toContain('Write your review (up to 5,000 characters).')
    expect(wrong).toContain('Enter a valid e-mail address.')
    expect(wrong).toContain('aria-invalid="true"')
    expect(wrong).toContain('value="Ann &#60;b&#62;"')
    expect(await t.storage.db.selectFrom('reviews').selectAll().where('product_id', '=', '5504').execute()).toHaveLength(0)

    const done = await post(
      { invitation: token, rating: '5', body: 'Lovely.', name: 'Ann', email: 'ann@example.com', title: 'Great' },
      '?locale=fr',
    )
    expect(done).toContain('<h1>Merci pour votre avis !</h1>')
    expect(done).toContain('Il est maintenant visible sur la page du produit.')
    const published = await t.call('GET', '/api/v1/products/5504/reviews', { headers: { 'x-storefront-key': shop.storefrontKey } })
    expect(published.body.data).toEqual([
      expect.objectContaining({ customerName: 'Ann', rating: 5, title: 'Great', verifiedPurchase: true }),
    ])

    // The same link again: used, said plainly, nothing written.
    expect(await post({ invitation: token, rating: '4', body: 'Again', name: 'Ann', email: 'ann@example.com' })).toContain(
      '<h1>This review link has already been used</h1>',
    )
    expect(await get(`/reviews/new?invitation=${token}`)).toContain('<h1>This review link has already been used</h1>')
  })

  it('does not throw on an unknown link posted, and answers a duplicate with the form', async () => {
    expect(await post({ invitation: 'y'.repeat(32), rating: '5', body: 'x', name: 'x' })).toContain('This review link is not valid')
    const first = await invitation('5505', 'same@example.com')
    const second = await invitation('5505', 'same@example.com')
    expect(await post({ invitation: first.token, rating: '5', body: 'One', name: 'Sam' })).toContain('Thank you for your review!')
    // The customer (901) already reviewed the product: the second invitation's review is a duplicate.
    const dup = await post({ invitation: second.token, rating: '4', body: 'Two', name: 'Sam' })
    expect(dup).toContain('A review of this product was already received from you.')
  })
})

describe('after a post (Post/Redirect/Get), and in the language of the order', () => {
  it('sends the browser to the thank-you page once the review is taken (303), so a reload posts nothing again', async () => {
    const { token } = await invitation('5701')
    const res = await submit({ invitation: token, rating: '4', body: 'Solid.', name: 'Kim' }, '?locale=fr')
    expect(res.statusCode).toBe(303)
    expect(res.body).toBe('')
    expect(res.headers.location).toBe(`/reviews/new?invitation=${token}&locale=fr&done=1`)
    for (let reload = 0; reload < 2; reload++) {
      const thanks = await get(String(res.headers.location))
      expect(thanks).toContain('<title>Merci pour votre avis !</title>')
      expect(thanks).toContain('<p role="status">Il est maintenant visible sur la page du produit.</p>')
    }
    expect(await t.storage.db.selectFrom('reviews').selectAll().where('product_id', '=', '5701').execute()).toHaveLength(1)
    // Without `done` the used link says it was used; `done` on a link never used shows the form, not a thank-you.
    expect(await get(`/reviews/new?invitation=${token}&locale=fr`)).toContain('<h1>Ce lien d’avis a déjà été utilisé</h1>')
    const fresh = await invitation('5702')
    expect(await get(`/reviews/new?invitation=${fresh.token}&done=1`)).toContain('<form class="wl-review__form"')
  })

  it('a refused form says "Error:" first in the title, and every problem in the language of the page', async () => {
    const { token } = await invitation('5703', null)
    const wrong = await submit({ invitation: token, rating: '9', body: ' ', name: '', email: 'x' }, '?locale=fr')
    expect(wrong.statusCode).toBe(200)
    expect(wrong.body).toContain('<title>Erreur : Écrire un avis</title>')
    expect(wrong.body).toContain('<h2>Veuillez corriger les points suivants :</h2>')
    for (const text of [
      'Choisissez une note de 1 à 5 étoiles.',
      'Rédigez votre avis (5 000 caractères au maximum).',
      'Indiquez votre nom (100 caractères au maximum).',
      'Saisissez une adresse e-mail valide.',
    ])
      expect(wrong.body).toContain(text)
  })

  it("carries the order's language in reviewUrl (`locale`), and the page speaks it", async () => {
    const { token, reviewUrl } = await invitation('5704', 'lang@example.com', shop, 'nl')
    expect(reviewUrl).toBe(`http://wishlist.test/reviews/new?invitation=${token}&locale=nl`)
    const html = await get(reviewUrl.replace('http://wishlist.test', ''), { 'accept-language': 'en' })
    expect(html).toContain('<html lang="nl">')
    expect(html).toContain('action="/reviews/new?locale=nl"')
    // An order that names no language: no locale, the browser's language decides.
    const plain = await invitation('5705')
    expect(plain.reviewUrl).toBe(`http://wishlist.test/reviews/new?invitation=${plain.token}`)
    // A malformed one is refused by the intake like any bad field.
    const bad = await t.call('POST', '/v1/events', {
      token: await shop.adminToken(),
      body: { events: [{ type: 'order.created', order_id: '7799', locale: 'fr_FR!', line_items: [{ product_id: '5706' }] }] },
    })
    expect(bad.status).toBe(400)
    expect(JSON.stringify(bad.body.error.details)).toContain('locale')
  })
})

describe("the shop's own texts (storefront_strings)", () => {
  it("shows the invitation's shop's texts in their language, escaped, and the shipped ones elsewhere", async () => {
    const own = await t.createShop('free')
    const token = await own.adminToken()
    const texts = {
      fr: { reviewHeadingNoTitle: 'Votre avis <compte> & {title}', submit: 'Publier', invitationUsedTitle: 'Déjà reçu, merci !' },
    }
    expect((await t.call('PATCH', '/v1/admin/settings', { token, body: { storefront_strings: texts } })).status).toBe(200)
    const { token: invited } = await invitation('5601', 'fr@example.com', own)

    const fr = await get(`/reviews/new?invitation=${invited}&locale=fr`)
    expect(fr).toContain('<title>Votre avis &#60;compte&#62; &#38; {title}</title>')
    expect(fr).toContain('<h1>Votre avis &#60;compte&#62; &#38; {title}</h1>')
    expect(fr).toContain('wl-review__submit">Publier</button>')
    expect(fr).toContain('Merci pour votre commande.')
    // English, and another shop's page in French, keep the shipped texts.
    expect(await get(`/reviews/new?invitation=${invited}`)).toContain('<h1>Write a review</h1>')
    expect(await get(`/reviews/new?invitation=${(await invitation('5602')).token}&locale=fr`)).toContain('<h1>Écrire un avis</h1>')

    // After the review, the used link's page is the shop's too.
    expect(await post({ invitation: invited, rating: '5', body: 'Très bien', name: 'Zoé' }, '?locale=fr')).toContain(
      '<h1>Merci pour votre avis !</h1>',
    )
    expect(await get(`/reviews/new?invitation=${invited}&locale=fr`)).toContain('<h1>Déjà reçu, merci !</h1>')

    // Cleared: the shipped texts again.
    expect(
      (await t.call('PATCH', '/v1/admin/settings', { token, body: { storefront_strings: null } })).body.data.storefront_strings,
    ).toBeNull()
    expect(await get(`/reviews/new?invitation=${invited}&locale=fr`)).toContain('<h1>Ce lien d’avis a déjà été utilisé</h1>')
  })
})
