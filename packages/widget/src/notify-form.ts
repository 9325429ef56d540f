/**
 * The notification form, a chunk the first script loads when the page has a
 * `[data-wishlist-notify-form]` element: the shopper gives the e-mail the shop may use to tell
 * them about their wishlist (back in stock, price drop, …), with their explicit consent. An
 * e-mail field, an unticked checkbox whose label is the consent text (`notify.consent`, in the
 * page's language or the merchant's `data-strings`), and a submit button: the request carries
 * `consent: true` and, as `consent_text`, exactly the label the shopper saw, which the service
 * stores with the e-mail. Without the tick nothing is sent: the box says why and takes the
 * focus. The result is said in text and through the page's live regions; a given e-mail
 * (remembered in this browser) can be withdrawn with the "stop" button.
 */
import { type ApiError, type Kit, type Mount, register } from './kit.js'
import { enNotify } from './strings.generated.js'

/** This browser's note of the e-mail it gave (the service has the contact; this only shows the "stop" button). */
const KEY = 'wishlist:notify-email'
const PATH = '/v1/wishlists/me/contact'
let forms = 0

const CSS =
  '.wl-notify{display:grid;gap:.5em;max-width:36em}.wl-notify p{margin:0;overflow-wrap:anywhere}.wl-notify-field{display:grid;gap:.25em}' +
  '.wl-notify,.wl-notify-field{grid-template-columns:minmax(0,1fr)}' +
  '.wl-notify input[type=email]{max-width:100%;box-sizing:border-box;min-height:44px}' +
  '.wl-notify-consent{display:grid;grid-template-columns:auto 1fr;gap:.25em .5em;align-items:start}' +
  '.wl-notify-consent input{width:24px;height:24px;margin:0}.wl-notify-consent .wl-notify-error{grid-column:2}' +
  '.wl-notify-error{color:#b00020;display:block}.wl-notify-error:empty,.wl-notify-status:empty{display:none}' +
  '.wl-notify [aria-invalid=true]{border-color:#b00020;outline-color:#b00020}.wl-notify-actions{display:flex;flex-wrap:wrap;gap:.5em}' +
  '.wl-notify button{min-height:44px}'

const remembered = (): string | null => {
  try {
    return localStorage.getItem(KEY)
  } catch {
    return null
  }
}
const remember = (email: string | null) => {
  try {
    if (email === null) localStorage.removeItem(KEY)
    else localStorage.setItem(KEY, email)
  } catch {
    /* storage blocked: the "stop" button shows for this page only */
  }
}

const mountNotify: Mount = (kit: Kit, host: HTMLElement) => {
  kit.english(enNotify)
  void kit.ready().then(() => build(kit, host))
}

function build(kit: Kit, host: HTMLElement): void {
  if (!document.getElementById('wl-notify-css')) {
    const style = document.createElement('style')
    style.id = 'wl-notify-css'
    style.textContent = CSS
    document.head.append(style)
  }
  const t = (key: string, vars?: Record<string, string | number>) => kit.t(key, vars, host)
  const n = ++forms
  const id = (name: string) => `wl-notify-${n}-${name}`
  const node = <K extends keyof HTMLElementTagNameMap>(tag: K, props: Record<string, string> = {}, text?: string) => {
    const e = document.createElement(tag)
    for (const [k, v] of Object.entries(props)) e.setAttribute(k, v)
    if (text !== undefined) e.textContent = text
    return e
  }
  let sending = false

  const form = node('form', { class: 'wl-notify', novalidate: '', 'aria-labelledby': id('heading') })
  // The heading's level fits the page's outline (`data-heading-level`, 2 to 6; 3 by default).
  const level = /^[2-6]$/.test(host.getAttribute('data-heading-level') ?? '') ? host.getAttribute('data-heading-level') : '3'
  const heading = node(`h${level}` as 'h3', { id: id('heading'), class: 'wl-notify-heading' }, t('notify.heading'))

  const emailWrap = node('p', { class: 'wl-notify-field' })
  const email = node('input', {
    type: 'email',
    id: id('email'),
    name: 'email',
    autocomplete: 'email',
    maxlength: '254',
    'aria-required': 'true',
    'aria-describedby': id('email-error'),
  })
  email.value = host.getAttribute('data-customer-email') ?? remembered() ?? ''
  const emailError = node('span', { id: id('email-error'), class: 'wl-notify-error' })
  emailWrap.append(node('label', { for: email.id }, t('notify.email')), email, emailError)

  // Unticked: the shopper ticks it themselves. Its label is the consent text sent with the e-mail.
  const consentWrap = node('p', { class: 'wl-notify-consent' })
  const consent = node('input', {
    type: 'checkbox',
    id: id('consent'),
    name: 'consent',
    // Required (the form is `novalidate`: the widget says what is missing).
    required: '',
    'aria-describedby': id('consent-error'),
  })
  const consentLabel = node('label', { for: consent.id, class: 'wl-notify-consent-text' }, t('notify.consent'))
  const consentError = node('span', { id: id('consent-error'), class: 'wl-notify-error' })
  consentWrap.append(consent, consentLabel, consentError)

  const actions = node('p', { class: 'wl-notify-actions' })
  const submit = node('button', { type: 'submit', class: 'wl-notify-submit' }, t('notify.submit'))
  const stop = node('button', { type: 'button', class: 'wl-notify-stop' }, t('notify.stop'))
  actions.append(submit, stop)
  const status = node('p', { class: 'wl-notify-status', tabindex: '-1' })
  form.append(heading, emailWrap, consentWrap, actions, status)

  /** What the shopper has given, as this browser knows it: the "stop" button shows while there is one. */
  const given = (value: string | null) => {
    remember(value)
    stop.hidden = value === null
    host.setAttribute('data-notify-state', value === null ? 'none' : 'given')
  }
  given(remembered())

  const clear = () => {
    for (const [input, error] of [
      [email, emailError],
      [consent, consentError],
    ] as const) {
      input.removeAttribute('aria-invalid')
      error.textContent = ''
    }
  }
  /** Marks a field with what to fix, says it at once and takes the focus to it. */
  const refuse = (input: HTMLInputElement, error: HTMLElement, text: string) => {
    input.setAttribute('aria-invalid', 'true')
    error.textContent = text
    status.textContent = ''
    kit.alert(text)
    input.focus()
  }
  /** A result: in the form's text, and through the page's polite (done) or assertive (failed) live region. */
  const say = (text: string, failed: boolean) => {
    status.textContent = text
    status.style.color = failed ? '#b00020' : ''
    ;(failed ? kit.alert : kit.announce)(text)
  }
  const busy = (button: HTMLButtonElement, on: boolean, label: string) => {
    sending = on
    // The button keeps the focus while it is sent (aria-disabled, not disabled); a second press is ignored.
    if (on) button.setAttribute('aria-disabled', 'true')
    else button.removeAttribute('aria-disabled')
    button.textContent = label
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault()
    if (sending) return
    clear()
    const address = email.value.trim()
    if (!address) return refuse(email, emailError, t('notify.error.email'))
    if (!consent.checked) return refuse(consent, consentError, t('notify.error.consent'))
    busy(submit, true, t('notify.sending'))
    // Exactly the sentence shown beside the box (the merchant's override, or the page's language).
    const body = { email: address, consent: true, consent_text: consentLabel.textContent ?? '' }
    kit.api<{ email: string }>('PUT', PATH, body).then(
      (contact) => {
        busy(submit, false, t('notify.submit'))
        consent.checked = false
        given(contact.email)
        say(t('notify.saved', { email: contact.email }), false)
      },
      (err: ApiError) => {
        busy(submit, false, t('notify.submit'))
        if (err.status === 400 && err.details?.some((d) => /email/.test(d.path ?? '')))
          return refuse(email, emailError, t('notify.error.email'))
        say(`${t('notify.failed')} ${kit.why(err, host)}`, true)
      },
    )
  })

  stop.addEventListener('click', () => {
    if (sending) return
    clear()
    busy(stop, true, t('notify.sending'))
    kit.api('DELETE', PATH).then(
      () => done(),
      (err: ApiError) => {
        busy(stop, false, t('notify.stop'))
        // Gone already (withdrawn elsewhere, or erased): the same result for the shopper.
        if (err.status === 404) return done()
        say(`${t('notify.stopFailed')} ${kit.why(err, host)}`, true)
      },
    )
  })
  /** Withdrawn: the "stop" button goes, the focus goes to the result. */
  const done = () => {
    busy(stop, false, t('notify.stop'))
    given(null)
    say(t('notify.stopped'), false)
    status.focus()
  }

  host.append(form)
}

register('notify-form', mountNotify)
