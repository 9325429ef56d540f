/**
 * The review form, a chunk the first script loads when a shopper opens it
 * (`[data-wishlist-review-form]` with its `[data-wishlist-review-open]` button).
 * Rating as a radio group, title, body, name, and an e-mail for a shopper who is not logged
 * in (or whose page did not give `data-customer-email`). A logged-in shopper's review is
 * linked to them by the service (customer token, or the Shopify app proxy's signature); an
 * invitation (`data-invitation`) makes it a verified purchase. Field errors say what to fix
 * (from the form's own checks and the API's `details`), are tied to their fields
 * (`aria-invalid`, `aria-describedby`) and take the focus to the first. Cancel closes the
 * form (what was typed goes with it) and gives the focus back to its opener. A review the
 * shop approves at once appears in the page's reviews of the product, read again past the
 * browser's cache.
 */
import { type ApiError, type Kit, type Mount, register } from './kit.js'
import { enForm } from './strings.generated.js'

let forms = 0

/** The API's limits (characters after trimming), as the fields' `maxlength` and the error texts give them. */
const LIMITS = { title: 150, body: 5000, name: 100, email: 254 }

const mountForm: Mount = (kit: Kit, host: HTMLElement) => {
  kit.english(enForm)
  void kit.ready().then(() => build(kit, host))
}

const CSS =
  '.wl-form{display:grid;gap:.5em;max-width:36em}.wl-form-field{margin:0;display:grid;gap:.25em}.wl-form-rating{border:0;padding:0;margin:0}' +
  '.wl-form-star{position:relative;display:inline-block;min-width:44px;min-height:44px;text-align:center;font-size:1.6em;line-height:44px;color:var(--wishlist-star-color,#8a5a00);cursor:pointer}' +
  // The radio covers its star: a click anywhere on it chooses it; arrows move the choice.
  '.wl-form-star input{position:absolute;inset:0;width:100%;height:100%;margin:0;opacity:0;cursor:pointer}' +
  '.wl-form-star input:focus-visible+span{outline:2px solid #1a5fb4;outline-offset:2px}.wl-form-error,.wl-form-message{color:#b00020}' +
  '.wl-form [aria-invalid=true]{border-color:#b00020}.wl-form-actions{display:flex;flex-wrap:wrap;gap:.5em;margin:0}.wl-form-error{display:block}.wl-form-error:empty{display:none}'

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
  let sending = false

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
    // Required on every radio: the group's required state, as assistive technology reads it.
    const radio = node('input', { type: 'radio', name: 'rating', value: String(v), required: '' })
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
  field('title', t('form.title'), node('input', { type: 'text', maxlength: String(LIMITS.title) }), false)
  field('body', t('form.body'), node('textarea', { rows: '5', maxlength: String(LIMITS.body) }), true)
  field('name', t('form.name'), node('input', { type: 'text', maxlength: String(LIMITS.name), autocomplete: 'name' }), true)
  if (askEmail)
    field('email', t('form.email'), node('input', { type: 'email', maxlength: String(LIMITS.email), autocomplete: 'email' }), true)
  const actions = node('p', { class: 'wl-form-actions' })
  const submit = node('button', { type: 'submit', class: 'wl-form-submit' }, t('form.submit'))
  actions.append(submit)
  form.append(actions)
  /** Closes the form: the opener comes back, with the focus, and opens a new form. */
  const cancel = () => {
    if (!opener || sending) return
    form.remove()
    opener.hidden = false
    opener.setAttribute('aria-expanded', 'false')
    opener.addEventListener('click', () => build(kit, host), { once: true })
    opener.focus()
  }
  if (opener) {
    const cancelButton = node('button', { type: 'button', class: 'wl-form-cancel' }, t('form.cancel'))
    cancelButton.addEventListener('click', cancel)
    actions.append(cancelButton)
  }

  const clear = () => {
    message.textContent = ''
    ratingError.textContent = ''
    rating.removeAttribute('aria-invalid')
    for (const f of Object.values(fields)) {
      f.error.textContent = ''
      f.input.removeAttribute('aria-invalid')
    }
  }
  /** What to fix in each field, from the API's limits. */
  const fix = {
    rating: () => t('form.error.rating'),
    title: () => t('form.error.title', { max: LIMITS.title }),
    body: () => t('form.error.body', { max: LIMITS.body }),
    name: () => t('form.error.name', { max: LIMITS.name }),
    email: () => t('form.error.email'),
  }
  /** Marks a field (API paths `body.customerName` …) and returns what to focus. */
  const mark = (path: string): HTMLElement | undefined => {
    const name = { rating: 'rating', title: 'title', body: 'body', customerName: 'name', customerEmail: 'email' }[
      path.replace(/^\/?body[./]/, '').split(/[./]/)[0] ?? ''
    ]
    if (name === 'rating') {
      ratingError.textContent = fix.rating()
      rating.setAttribute('aria-invalid', 'true')
      return radios.find((r) => r.checked) ?? radios[0]
    }
    const f = name ? fields[name] : undefined
    if (!name || !f) return undefined
    f.error.textContent = fix[name as keyof typeof fix]()
    f.input.setAttribute('aria-invalid', 'true')
    return f.input
  }
  /** Marks the fields and focuses the first, in the form's order; a problem that names no field of the form (e.g. a stale invitation) says the review failed. */
  const fail = (paths: string[]) => {
    const marked = paths.map(mark).filter((x): x is HTMLElement => !!x)
    const order = [...form.querySelectorAll('input,textarea')]
    const target = marked.sort((a, b) => order.indexOf(a) - order.indexOf(b))[0]
    message.textContent = t(target ? 'form.fix' : 'form.failed')
    ;(target ?? message).focus()
  }
  message.tabIndex = -1

  form.addEventListener('submit', (event) => {
    event.preventDefault()
    // While it is sent the button keeps the focus (aria-disabled, not disabled) and a second submit is ignored.
    if (sending) return
    clear()
    const value = (name: string) => fields[name]?.input.value.trim() ?? ''
    const chosen = Number(radios.find((r) => r.checked)?.value ?? 0)
    const missing: string[] = []
    if (!chosen) missing.push('rating')
    if (!value('body')) missing.push('body')
    if (!value('name')) missing.push('customerName')
    if (askEmail && !value('email')) missing.push('customerEmail')
    if (missing.length) return fail(missing)
    sending = true
    submit.setAttribute('aria-disabled', 'true')
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
        // Published at once: the page's reviews of the product show it, and its summary counts it.
        if (review.status === 'approved') void kit.reviews(productId)
      },
      (err: ApiError) => {
        sending = false
        submit.removeAttribute('aria-disabled')
        submit.textContent = t('form.submit')
        if (err.code === 'VALIDATION_ERROR' && err.details?.length) return fail(err.details.map((d) => d.path ?? ''))
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
