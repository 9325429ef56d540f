/**
 * The review form, a chunk the first script loads when a shopper opens it
 * (`[data-wishlist-review-form]` with its `[data-wishlist-review-open]` button).
 * Rating as a radio group, title, body, name, and an e-mail for a shopper who is not logged
 * in (or whose page did not give `data-customer-email`). A logged-in shopper's review is
 * linked to them by the service (customer token, or the Shopify app proxy's signature); an
 * invitation (`data-invitation`) makes it a verified purchase. Field errors come from the
 * API's `details` and are tied to their fields (`aria-invalid`, `aria-describedby`).
 */
import { type ApiError, type Kit, type Mount, register } from './kit.js'

let forms = 0

const mountForm: Mount = (kit: Kit, host: HTMLElement) => {
  void kit.ready().then(() => build(kit, host))
}

const CSS =
  '.wl-form{display:grid;gap:.5em;max-width:36em}.wl-form-field{margin:0;display:grid;gap:.25em}.wl-form-rating{border:0;padding:0;margin:0}' +
  '.wl-form-star{position:relative;display:inline-block;min-width:44px;min-height:44px;text-align:center;font-size:1.6em;line-height:44px;color:var(--wishlist-star-color,#8a5a00);cursor:pointer}' +
  // The radio covers its star: a click anywhere on it chooses it; arrows move the choice.
  '.wl-form-star input{position:absolute;inset:0;width:100%;height:100%;margin:0;opacity:0;cursor:pointer}' +
  '.wl-form-star input:focus-visible+span{outline:2px solid #1a5fb4;outline-offset:2px}.wl-form-error,.wl-form-message{color:#b00020}' +
  '.wl-form [aria-invalid=true]{border-color:#b00020}.wl-form-submit{justify-self:start}'

function build(kit: Kit, host: HTMLElement): void {
  if (!document.getElementById('wl-form-css')) {
    const style = document.createElement('style')
    style.id = 'wl-form-css'
    style.textContent = CSS
    document.head.append(style)
  }
  const t = (key: string, vars?: Record<string, string | number>) => kit.t(key, vars, host)
  const doc = document
  const n = ++forms
  const id = (name: string) => `wl-form-${n}-${name}`
  const node = <K extends keyof HTMLElementTagNameMap>(tag: K, props: Record<string, string> = {}, text?: string) => {
    const e = doc.createElement(tag)
    for (const [k, v] of Object.entries(props)) e.setAttribute(k, v)
    if (text !== undefined) e.textContent = text
    return e
  }
  const opener = host.querySelector<HTMLElement>('[data-wishlist-review-open]')
  const productId = host.getAttribute('data-product-id') ?? host.getAttribute('data-reviews-product-id') ?? ''
  const invitation = host.getAttribute('data-invitation')
  const knownEmail = host.getAttribute('data-customer-email')
  const askEmail = !(kit.customer() && knownEmail)

  const form = node('form', { class: 'wl-form', novalidate: '', 'aria-labelledby': id('heading') })
  const heading = node('h3', { id: id('heading'), class: 'wl-form-heading' }, t('form.heading'))
  const message = node('p', { id: id('message'), class: 'wl-form-message', role: 'alert' })
  form.append(heading, message)

  // Rating: a native radio group (arrow keys move the choice), stars drawn filled up to the choice.
  const rating = node('fieldset', { class: 'wl-form-rating', 'aria-describedby': id('rating-error') })
  rating.append(node('legend', {}, t('form.rating')))
  const radios: HTMLInputElement[] = []
  const glyphs: HTMLElement[] = []
  for (let v = 1; v <= 5; v++) {
    const label = node('label', { class: 'wl-form-star' })
    const radio = node('input', { type: 'radio', name: 'rating', value: String(v) })
    const glyph = node('span', { 'aria-hidden': 'true' }, '☆')
    label.append(radio, glyph, node('span', { class: 'wl-vh' }, t('form.star', { count: v })))
    radios.push(radio)
    glyphs.push(glyph)
    rating.append(label)
  }
  const ratingError = node('span', { id: id('rating-error'), class: 'wl-form-error' })
  rating.append(ratingError)
  const paintStars = () => {
    const chosen = Number(radios.find((r) => r.checked)?.value ?? 0)
    glyphs.forEach((g, i) => (g.textContent = i < chosen ? '★' : '☆'))
  }
  rating.addEventListener('change', paintStars)
  form.append(rating)

  const fields: Record<string, { input: HTMLInputElement | HTMLTextAreaElement; error: HTMLElement }> = {}
  const field = (name: string, label: string, input: HTMLInputElement | HTMLTextAreaElement, required: boolean) => {
    const wrap = node('p', { class: `wl-form-field wl-form-${name}` })
    input.id = id(name)
    input.name = name
    if (required) input.setAttribute('aria-required', 'true')
    const error = node('span', { id: id(`${name}-error`), class: 'wl-form-error' })
    input.setAttribute('aria-describedby', error.id)
    wrap.append(node('label', { for: input.id }, label), input, error)
    form.append(wrap)
    fields[name] = { input, error }
  }
  field('title', t('form.title'), node('input', { type: 'text', maxlength: '150' }), false)
  field('body', t('form.body'), node('textarea', { rows: '5', maxlength: '5000' }), true)
  field('name', t('form.name'), node('input', { type: 'text', maxlength: '100', autocomplete: 'name' }), true)
  if (askEmail) field('email', t('form.email'), node('input', { type: 'email', maxlength: '254', autocomplete: 'email' }), true)
  const submit = node('button', { type: 'submit', class: 'wl-form-submit' }, t('form.submit'))
  form.append(submit)

  const clear = () => {
    message.textContent = ''
    ratingError.textContent = ''
    rating.removeAttribute('aria-invalid')
    for (const f of Object.values(fields)) {
      f.error.textContent = ''
      f.input.removeAttribute('aria-invalid')
    }
  }
  /** Marks a field (API paths `body.customerName` …) and returns what to focus. */
  const mark = (path: string, text: string): HTMLElement | undefined => {
    const name = { rating: 'rating', title: 'title', body: 'body', customerName: 'name', customerEmail: 'email' }[
      path.replace(/^body\./, '').split('.')[0] ?? ''
    ]
    if (name === 'rating') {
      ratingError.textContent = text
      rating.setAttribute('aria-invalid', 'true')
      return radios[0]
    }
    const f = name ? fields[name] : undefined
    if (!f) return undefined
    f.error.textContent = text
    f.input.setAttribute('aria-invalid', 'true')
    return f.input
  }
  /** Marks the fields; a problem that names no field of the form (e.g. a stale invitation) says the review failed. */
  const fail = (problems: Array<[string, string]>) => {
    const target = problems.map(([path, text]) => mark(path, text)).find((x) => x)
    message.textContent = t(target ? 'form.fix' : 'form.failed')
    target?.focus()
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault()
    clear()
    const value = (name: string) => fields[name]?.input.value.trim() ?? ''
    const chosen = Number(radios.find((r) => r.checked)?.value ?? 0)
    const missing: Array<[string, string]> = []
    if (!chosen) missing.push(['rating', t('form.required')])
    if (!value('body')) missing.push(['body', t('form.required')])
    if (!value('name')) missing.push(['customerName', t('form.required')])
    if (askEmail && !value('email')) missing.push(['customerEmail', t('form.required')])
    if (missing.length) return fail(missing)
    submit.disabled = true
    submit.textContent = t('form.sending')
    const body = {
      productId,
      rating: chosen,
      body: value('body'),
      customerName: value('name'),
      customerEmail: askEmail ? value('email') : knownEmail,
      ...(value('title') ? { title: value('title') } : {}),
      ...(invitation ? { invitation } : {}),
    }
    kit.api<{ status?: string }>('POST', '/api/v1/reviews', body).then(
      (review) => {
        const done = node('div', { class: 'wl-form-done', role: 'status', tabindex: '-1' })
        done.append(node('p', { class: 'wl-form-thanks' }, t('form.thanks')))
        if (review.status !== 'approved') done.append(node('p', { class: 'wl-form-pending' }, t('form.pending')))
        form.replaceWith(done)
        done.focus()
        host.setAttribute('data-review-state', review.status === 'approved' ? 'approved' : 'pending')
      },
      (err: ApiError) => {
        submit.disabled = false
        submit.textContent = t('form.submit')
        if (err.code === 'VALIDATION_ERROR' && err.details?.length) {
          return fail(
            err.details.map((d): [string, string] => [
              d.path ?? '',
              t(/required/.test(d.message ?? '') ? 'form.required' : 'form.invalid'),
            ]),
          )
        }
        message.textContent = t(err.code === 'DUPLICATE_REVIEW' ? 'form.duplicate' : 'form.failed')
      },
    )
  })

  if (opener) {
    opener.setAttribute('aria-expanded', 'true')
    opener.hidden = true
    opener.after(form)
  } else host.append(form)
  radios[0]?.focus()
}

register('review-form', mountForm)
