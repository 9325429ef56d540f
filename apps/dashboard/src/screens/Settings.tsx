/** Shop settings (saved as they change), the plan (read-only) and the storefront key. */
import type { SettingsPatch, Shop } from '@wishlist/sdk'
import { type FormEvent, useId, useState } from 'react'
import { Announcer, CopyField, LoadState, useAction, useConfirm, useLoad, useSession } from '../ui.js'

type Toggle = 'multi_wishlist_enabled' | 'reviews_auto_approve' | 'remove_on_purchase'
const MULTI_WISHLIST_PLANS = new Set(['growth', 'scale'])

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
    help: 'When an order arrives (order.created event), the bought products leave that customer\'s lists.',
  },
]

export function Settings() {
  const { session } = useSession()
  const { client } = session
  const { data: shop, loading, error, setData } = useLoad(() => client.admin.shop(), [client])
  const { busy, message, run } = useAction()
  const [confirmElement, confirm] = useConfirm()
  const ids = { ttl: useId(), ttlHelp: useId(), plan: useId() }

  if (!shop) return <LoadState loading={loading} error={error} />

  const multiAllowed = MULTI_WISHLIST_PLANS.has(shop.plan)
  // Optimistic: the control shows the new value at once and goes back if the server refuses.
  const update = async (patch: SettingsPatch, done: string) => {
    setData({ ...shop, settings: { ...shop.settings, ...patch } })
    const settings = await run(() => client.admin.updateSettings(patch), done)
    setData({ ...shop, settings: settings ?? shop.settings })
  }

  const saveTtl = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const days = Number(new FormData(e.currentTarget).get('ttl'))
    void update({ share_link_ttl_days: days }, `Share links now last ${days} day${days === 1 ? '' : 's'}.`)
  }

  const rotate = async () => {
    const ok = await confirm({
      title: 'Rotate the storefront key?',
      body: (
        <p>
          The current key stops working <strong>at once</strong>: storefronts that embed it (the widget snippet, guest wishlists, review forms) fail until you paste the new key into them.
        </p>
      ),
      confirmLabel: 'Rotate key',
      danger: true,
    })
    if (!ok) return
    const rotated = await run(() => client.admin.rotateStorefrontKey(), 'The storefront key was rotated. Update your storefront with the new key.')
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
        <p className="muted small">Plans are changed by the service operator.</p>
      </section>

      <section className="card" aria-labelledby="features-heading">
        <h2 id="features-heading">Features</h2>
        {TOGGLES.map((t) => {
          const disabled = t.key === 'multi_wishlist_enabled' && !multiAllowed
          const helpId = `help-${t.key}`
          return (
            <div className="field checkbox" key={t.key}>
              <input
                type="checkbox"
                id={t.key}
                checked={shop.settings[t.key]}
                disabled={disabled || busy}
                aria-describedby={helpId}
                onChange={(e) => void update({ [t.key]: e.currentTarget.checked }, `${t.label}: ${e.currentTarget.checked ? 'on' : 'off'}.`)}
              />
              <label htmlFor={t.key}>{t.label}</label>
              <p id={helpId} className="muted small">
                {disabled ? (
                  <>
                    <strong>Needs the Growth plan or above</strong> (this shop is on {shop.plan}). {t.help}
                  </>
                ) : (
                  t.help
                )}
              </p>
            </div>
          )
        })}
        <form onSubmit={saveTtl} className="field inline-form">
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
              defaultValue={shop.settings.share_link_ttl_days}
              key={shop.settings.share_link_ttl_days}
              aria-describedby={ids.ttlHelp}
              className="narrow"
            />
            <button disabled={busy}>Save lifetime</button>
          </div>
          <p id={ids.ttlHelp} className="muted small">
            1 to 365 days. Applies to links created from now on.
          </p>
        </form>
      </section>

      <section className="card" aria-labelledby="sfk-heading">
        <h2 id="sfk-heading">Storefront key</h2>
        <p className="muted small">Public: it goes into your storefront's widget snippet and identifies the shop for guest wishlists and reviews.</p>
        <CopyField label="Storefront key" value={shop.storefrontKey} testId="storefront-key" />
        <button type="button" className="danger" onClick={rotate} disabled={busy}>
          Rotate storefront key…
        </button>
      </section>
      {confirmElement}
    </>
  )
}
