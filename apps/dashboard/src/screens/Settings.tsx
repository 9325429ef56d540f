/**
 * Shop settings (saved as they change), the pages' texts, the plan (read-only) and the
 * storefront key. Inside Shopify admin the switches, the lifetime, the currency and the texts
 * are edited first and saved together from the admin's contextual save bar (Save, or Discard).
 */
import { CURRENCY_CODES, type SettingsPatch, type Shop } from 'wishlist-service-sdk'
import { type FormEvent, useId, useState } from 'react'
import { useSaveBar } from '../app-bridge.js'
import { PLAN_HREF } from './SetupGuide.js'
import { Announcer, CopyField, LoadState, useAction, useConfirm, useFocusRescue, useLoad, useSession } from '../ui.js'

/** The save bar of this screen inside Shopify admin. */
const SAVE_BAR_ID = 'settings-save-bar'

type Toggle = 'multi_wishlist_enabled' | 'reviews_auto_approve' | 'remove_on_purchase'
const MULTI_WISHLIST_PLANS = new Set(['growth', 'scale'])
const SHARE_LINK_PLANS = new Set(['starter', 'growth', 'scale'])

const TOGGLES: { key: Toggle; label: string; help: string }[] = [
  {
    key: 'multi_wishlist_enabled',
    label: 'Multiple wishlists per customer',
    help: 'Customers can keep up to 20 named lists (for example "Birthday", "Home"). Off: one list each.',
  },
  {
    key: 'reviews_auto_approve',
    label: 'Publish new reviews without moderation',
    help: 'Off: new reviews wait in the Reviews queue until you approve them. Applies to all ratings alike.',
  },
  {
    key: 'remove_on_purchase',
    label: 'Remove purchased products from wishlists',
    help: "When an order arrives (order.created event), the bought products leave that customer's lists.",
  },
]

export function Settings() {
  const { session } = useSession()
  const { client } = session
  const { data: shop, loading, error, setData } = useLoad(() => client.admin.shop(), [client])
  const { busy, message, run } = useAction()
  const [confirmElement, confirm] = useConfirm()
  const ids = { plan: useId() }
  // Turning multi-wishlist off below Growth disables the switch for good: focus goes to
  // the section's heading instead of falling to <body>.
  const rescue = useFocusRescue<HTMLHeadingElement>([shop])
  // Edits not saved yet (undefined: the stored value). The switches have some only inside Shopify admin.
  const [toggles, setToggles] = useState<Partial<Record<Toggle, boolean>>>({})
  const [ttlDraft, setTtlDraft] = useState<string>()
  // '' is "not set" (null).
  const [currencyDraft, setCurrencyDraft] = useState<string>()
  const [textsDraft, setTextsDraft] = useState<string>()
  const [textsProblem, setTextsProblem] = useState<string | null>(null)
  const storedTexts = textsOf(shop?.settings.storefront_strings ?? null)
  const ttlChanged = ttlDraft !== undefined && ttlDraft !== String(shop?.settings.share_link_ttl_days)
  const textsChanged = textsDraft !== undefined && textsDraft !== storedTexts
  const currencyChanged = currencyDraft !== undefined && currencyDraft !== (shop?.settings.currency ?? '')
  const unsaved = Object.keys(toggles).length > 0 || ttlChanged || currencyChanged || textsChanged
  useSaveBar(SAVE_BAR_ID, session.embedded && unsaved)

  if (!shop) return <LoadState loading={loading} error={error} />

  const multiAllowed = MULTI_WISHLIST_PLANS.has(shop.plan)
  // Optimistic: the control shows the new value at once and goes back if the server refuses.
  const update = async (patch: SettingsPatch, done: string) => {
    setData({ ...shop, settings: { ...shop.settings, ...patch } })
    const settings = await run(() => client.admin.updateSettings(patch), done)
    rescue.arm()
    setData({ ...shop, settings: settings ?? shop.settings })
  }

  // Not optimistic: a refused text stays in the box, as typed, to be corrected.
  const saveTexts = async () => {
    const texts = parseTexts(textsDraft ?? storedTexts)
    setTextsProblem(typeof texts === 'string' ? texts : null)
    if (typeof texts === 'string') return
    const settings = await run(
      () => client.admin.updateSettings({ storefront_strings: texts }),
      texts === null ? 'Page texts cleared: the pages use the shipped texts.' : 'Page texts saved.',
    )
    if (!settings) return
    setData({ ...shop, settings })
    setTextsDraft(undefined)
  }

  // The field shows the stored value again after each save, or after a refused one.
  const saveTtl = async () => {
    const days = Number(ttlDraft ?? shop.settings.share_link_ttl_days)
    await update({ share_link_ttl_days: days }, `Share links now last ${days} day${days === 1 ? '' : 's'}.`)
    setTtlDraft(undefined)
  }

  const currencyOf = (value: string): SettingsPatch['currency'] => (value === '' ? null : (value as SettingsPatch['currency']))
  // Saved with its button (a choice made with the keyboard's type-ahead passes other codes on the way).
  const saveCurrency = async () => {
    const value = currencyDraft ?? shop.settings.currency ?? ''
    await update({ currency: currencyOf(value) }, value === '' ? 'Currency: not set.' : `Currency: ${value}.`)
    setCurrencyDraft(undefined)
  }

  const discard = () => {
    setToggles({})
    setTtlDraft(undefined)
    setCurrencyDraft(undefined)
    setTextsDraft(undefined)
    setTextsProblem(null)
  }
  const toggle = (key: Toggle, on: boolean, label: string) => {
    if (!session.embedded) return void update({ [key]: on }, `${label}: ${on ? 'on' : 'off'}.`)
    setToggles((draft) => {
      const next = { ...draft }
      if (on === shop.settings[key]) delete next[key]
      else next[key] = on
      return next
    })
  }

  /** Inside Shopify admin (its save bar's Save, or Enter in a field): every edit in one request. */
  const saveAll = async () => {
    const patch: SettingsPatch = { ...toggles }
    if (ttlChanged) patch.share_link_ttl_days = Number(ttlDraft)
    if (currencyChanged) patch.currency = currencyOf(currencyDraft)
    if (textsChanged) {
      const texts = parseTexts(textsDraft ?? storedTexts)
      setTextsProblem(typeof texts === 'string' ? texts : null)
      if (typeof texts === 'string') return
      patch.storefront_strings = texts
    }
    const settings = await run(() => client.admin.updateSettings(patch), 'Settings saved.')
    if (!settings) return
    setData({ ...shop, settings })
    discard()
  }

  const rotate = async () => {
    const ok = await confirm({
      title: 'Rotate the storefront key?',
      body: (
        <p>
          The current key stops working <strong>at once</strong>: storefronts that embed it (the widget snippet, guest wishlists, review
          forms) fail until you paste the new key into them.
        </p>
      ),
      confirmLabel: 'Rotate key',
      danger: true,
    })
    if (!ok) return
    const rotated = await run(
      () => client.admin.rotateStorefrontKey(),
      'The storefront key was rotated. Update your storefront with the new key.',
    )
    if (rotated) setData({ ...shop, storefrontKey: rotated.storefrontKey } satisfies Shop)
  }

  return (
    <>
      <Announcer message={message} testId="settings-status" />
      <section className="card" aria-labelledby={ids.plan}>
        <h2 id={ids.plan}>Plan</h2>
        <dl className="facts">
          <dt>Shop</dt>
          <dd>{shop.domain}</dd>
          <dt>Plan</dt>
          <dd data-testid="plan" className="capitalize">
            {shop.plan}
          </dd>
        </dl>
        {session.embedded ? (
          <p className="muted small">
            Plans are charged through Shopify: choose or change yours on the <a href={PLAN_HREF}>Plan page</a>.
          </p>
        ) : (
          <p className="muted small">Plans are changed by the service operator.</p>
        )}
      </section>

      <section className="card" aria-labelledby="features-heading">
        <h2 id="features-heading" ref={rescue.target} tabIndex={-1}>
          Features
        </h2>
        {TOGGLES.map((t) => {
          const checked = toggles[t.key] ?? shop.settings[t.key]
          const planBlocked = t.key === 'multi_wishlist_enabled' && !multiAllowed
          // Below Growth the switch is normally disabled. If the stored setting is on anyway
          // (set before a downgrade, or by the operator), it stays enabled, ticked, so the
          // merchant sees the true stored value and can turn it off; once off it is disabled.
          // A ticked-and-disabled box would claim the feature works, an unticked one would
          // hide the stored value that returns on an upgrade.
          const disabled = planBlocked && !checked
          const helpId = `help-${t.key}`
          return (
            <div className="field checkbox" key={t.key}>
              <input
                type="checkbox"
                id={t.key}
                checked={checked}
                disabled={disabled || busy}
                aria-describedby={helpId}
                onChange={(e) => toggle(t.key, e.currentTarget.checked, t.label)}
              />
              <label htmlFor={t.key}>{t.label}</label>
              <p id={helpId} className="muted small">
                {planBlocked ? (
                  <>
                    <strong>Needs the Growth plan or above</strong> (this shop is on {shop.plan}).{' '}
                    {checked && <strong>Stored as on, but it has no effect on this plan; you can turn it off. </strong>}
                    {t.help}
                  </>
                ) : (
                  t.help
                )}
              </p>
            </div>
          )
        })}
        <TtlForm
          value={ttlDraft ?? String(shop.settings.share_link_ttl_days)}
          plan={shop.plan}
          busy={busy}
          saveButton={!session.embedded}
          onChange={setTtlDraft}
          onSave={() => void (session.embedded ? saveAll() : saveTtl())}
        />
      </section>

      <section className="card" aria-labelledby="currency-heading">
        <h2 id="currency-heading">Currency</h2>
        <CurrencyForm
          value={currencyDraft ?? shop.settings.currency ?? ''}
          busy={busy}
          saveButton={!session.embedded}
          onChange={setCurrencyDraft}
          onSave={() => void (session.embedded ? saveAll() : saveCurrency())}
        />
      </section>

      <section className="card" aria-labelledby="texts-heading">
        <h2 id="texts-heading">Page texts</h2>
        <PageTextsForm
          value={textsDraft ?? storedTexts}
          problem={textsProblem}
          busy={busy}
          saveButton={!session.embedded}
          onChange={setTextsDraft}
          onSave={() => void (session.embedded ? saveAll() : saveTexts())}
        />
      </section>

      <section className="card" aria-labelledby="sfk-heading">
        <h2 id="sfk-heading">Storefront key</h2>
        <p className="muted small">
          Public: it goes into your storefront's widget snippet and identifies the shop for guest wishlists and reviews.
        </p>
        <CopyField label="Storefront key" value={shop.storefrontKey} testId="storefront-key" />
        <button type="button" className="danger" onClick={rotate} disabled={busy}>
          Rotate storefront key…
        </button>
      </section>
      {confirmElement}
      {session.embedded && (
        // Shopify admin draws the bar and its buttons, which click these.
        <ui-save-bar id={SAVE_BAR_ID}>
          <button variant="primary" disabled={busy} onClick={() => void saveAll()}>
            Save
          </button>
          <button onClick={discard}>Discard</button>
        </ui-save-bar>
      )}
    </>
  )
}

const currencyNames = new Intl.DisplayNames(['en'], { type: 'currency' })

/** The shop's currency, one of the codes the API accepts: its button saves (inside Shopify admin, with every other edit). */
function CurrencyForm({
  value,
  busy,
  saveButton,
  onChange,
  onSave,
}: {
  value: string
  busy: boolean
  saveButton: boolean
  onChange(value: string): void
  onSave(): void
}) {
  const ids = { select: useId(), help: useId() }
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    onSave()
  }
  return (
    <form onSubmit={submit} className="field inline-form">
      <label htmlFor={ids.select}>Store currency</label>
      <div className="row">
        <select id={ids.select} name="currency" value={value} aria-describedby={ids.help} onChange={(e) => onChange(e.currentTarget.value)}>
          <option value="">Not set</option>
          {CURRENCY_CODES.map((code) => (
            <option key={code} value={code}>
              {code} · {currencyNames.of(code) ?? code}
            </option>
          ))}
        </select>
        {saveButton && <button disabled={busy}>Save currency</button>}
      </div>
      <p id={ids.help} className="muted small">
        Shopper notifications (Klaviyo, Shopify Flow) give the product&apos;s price in it. A Shopify store gets its store currency at
        install when none is set; your choice here is kept.
      </p>
    </form>
  )
}

/** The share-link lifetime: Enter or its button saves (inside Shopify admin, with every other edit). */
function TtlForm({
  value,
  plan,
  busy,
  saveButton,
  onChange,
  onSave,
}: {
  value: string
  plan: string
  busy: boolean
  saveButton: boolean
  onChange(value: string): void
  onSave(): void
}) {
  const ids = { ttl: useId(), help: useId() }

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    onSave()
  }

  return (
    <form onSubmit={submit} className="field inline-form">
      <label htmlFor={ids.ttl}>Share-link lifetime (days)</label>
      <div className="row">
        <input
          id={ids.ttl}
          name="ttl"
          type="number"
          min={1}
          max={365}
          step={1}
          required
          value={value}
          onChange={(e) => onChange(e.currentTarget.value)}
          aria-describedby={ids.help}
          className="narrow"
        />
        {saveButton && <button disabled={busy}>Save lifetime</button>}
      </div>
      <p id={ids.help} className="muted small">
        {!SHARE_LINK_PLANS.has(plan) && (
          <>
            <strong>Share links need the Starter plan or above</strong> (this shop is on {plan}); the lifetime applies once the shop
            upgrades.{' '}
          </>
        )}
        1 to 365 days. Applies to links created from now on.
      </p>
    </form>
  )
}

type PageTexts = Shop['settings']['storefront_strings']
const TEXTS_EXAMPLE = '{"fr": {"wishlistTitle": "Mes coups de cœur"}}'

/** The stored texts as the box shows them: indented JSON, empty for none. */
const textsOf = (value: PageTexts): string => (value === null ? '' : JSON.stringify(value, null, 2))

/**
 * The texts a box holds: null when it is empty (the shipped texts), else a JSON object; a
 * string says what is wrong. The server checks languages and keys and says which one is wrong.
 */
function parseTexts(draft: string): PageTexts | string {
  if (draft.trim() === '') return null
  let parsed: unknown
  try {
    parsed = JSON.parse(draft)
  } catch {
    parsed = undefined
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return `Not a JSON object. Write it like ${TEXTS_EXAMPLE}.`
  return parsed as NonNullable<PageTexts>
}

/**
 * The shop's own texts of the pages shoppers see (`storefront_strings`), as JSON: by
 * language, then by string key. Empty clears them.
 */
function PageTextsForm({
  value,
  problem,
  busy,
  saveButton,
  onChange,
  onSave,
}: {
  value: string
  problem: string | null
  busy: boolean
  saveButton: boolean
  onChange(value: string): void
  onSave(): void
}) {
  const ids = { texts: useId(), help: useId(), problem: useId() }

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    onSave()
  }

  return (
    <form onSubmit={submit} className="field">
      <label htmlFor={ids.texts}>Your texts (JSON)</label>
      <p id={ids.help} className="muted small">
        Replace any text of the wishlist, shared-list and review pages, per language (en, fr, de, es, it, nl, pt-BR, ja), for example{' '}
        <code>{TEXTS_EXAMPLE}</code>. The string keys are listed in the API documentation (docs/api.md, &ldquo;Shops, plans and
        settings&rdquo;). Leave it empty to use the shipped texts. The widget&apos;s texts are changed in the theme editor.
      </p>
      <textarea
        id={ids.texts}
        name="storefront_strings"
        rows={6}
        spellCheck={false}
        className="mono"
        value={value}
        onChange={(e) => onChange(e.currentTarget.value)}
        aria-describedby={problem === null ? ids.help : `${ids.help} ${ids.problem}`}
        aria-invalid={problem !== null}
      />
      {problem !== null && (
        <p id={ids.problem} className="msg error" role="alert">
          {problem}
        </p>
      )}
      {saveButton && (
        <div className="row">
          <button disabled={busy}>Save page texts</button>
        </div>
      )}
    </form>
  )
}
