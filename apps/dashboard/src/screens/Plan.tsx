/**
 * The plan page inside Shopify admin (Shopify Billing): a card per plan in Polaris's pattern,
 * the current one marked, each with its price, trial and a button to choose it. A paid plan is
 * approved on Shopify's own page, opened in the top frame (App Bridge lets the app navigate
 * the admin there); the plan changes once Shopify says the subscription is active, which this
 * page confirms each time it opens (`GET /v1/platforms/shopify/billing`). Free cancels the
 * subscription at once.
 */
import type { ShopifyBilling } from 'wishlist-service-sdk'
import { Announcer, LoadState, useAction, useLoad, useSession } from '../ui.js'

type PlanId = ShopifyBilling['plan']
type Offer = ShopifyBilling['plans'][number]

const TITLES: Record<PlanId, string> = { free: 'Free', starter: 'Starter', growth: 'Growth', scale: 'Scale' }

/** What each plan adds (docs/api.md, "Shops, plans and settings"). */
const FEATURES: Record<PlanId, string[]> = {
  free: ['Wishlists for every shopper, signed in or not', 'Product reviews', 'This dashboard and the admin API'],
  starter: ['Everything in Free', 'Share links for wishlists', 'The headless wishlist API'],
  growth: ['Everything in Starter', 'Several wishlists per customer', 'Bulk import of wishlists'],
  scale: ['Everything in Growth', 'For the busiest stores'],
}

const STATUS_TEXT: Record<string, string> = {
  PENDING: 'waiting for your approval in Shopify',
  ACCEPTED: 'approved, starting',
  ACTIVE: 'active',
  FROZEN: 'frozen by Shopify (the store’s bill is unpaid)',
  CANCELLED: 'cancelled',
  DECLINED: 'declined',
  EXPIRED: 'expired before approval',
}

const priceText = (offer: Offer) => (offer.price === null ? 'No charge' : `$${offer.price} ${offer.currencyCode}`)

function PlanCard({ offer, current, busy, onChoose }: { offer: Offer; current: boolean; busy: boolean; onChoose(plan: PlanId): void }) {
  const title = TITLES[offer.plan]
  const headingId = `plan-${offer.plan}-heading`
  return (
    <li className={current ? 'card plan-card current' : 'card plan-card'} data-testid={`plan-${offer.plan}`}>
      <h2 id={headingId}>
        {title}
        {current && <span className="badge">Current plan</span>}
      </h2>
      <p className="plan-price">
        <strong>{priceText(offer)}</strong>
        {offer.price !== null && <span className="muted"> every 30 days</span>}
      </p>
      {offer.trialDays > 0 && <p className="muted small">{offer.trialDays}-day free trial</p>}
      <ul className="plan-features">
        {FEATURES[offer.plan].map((f) => (
          <li key={f}>{f}</li>
        ))}
      </ul>
      {current ? (
        <p className="muted small plan-current-note">Your plan now</p>
      ) : (
        <button
          type="button"
          className={offer.plan === 'free' ? undefined : 'primary'}
          disabled={busy}
          onClick={() => onChoose(offer.plan)}
          data-testid={`choose-${offer.plan}`}
        >
          {offer.plan === 'free' ? 'Downgrade to Free' : `Choose ${title}`}
        </button>
      )}
    </li>
  )
}

export function Plan() {
  const { session } = useSession()
  const { client } = session
  const { data, loading, error, setData } = useLoad(() => client.admin.shopifyBilling(), [client])
  const { busy, message, run } = useAction()

  async function choose(plan: PlanId) {
    const chosen = await run(
      () => client.admin.chooseShopifyPlan({ plan }),
      (r) => (r.confirmationUrl === null ? `You are on the ${TITLES[r.billing.plan]} plan.` : 'Opening Shopify to approve the charge…'),
    )
    if (chosen === undefined) return
    setData(chosen.billing)
    // Shopify's approval page cannot be framed: the whole admin goes there (App Bridge allows `_top`).
    if (chosen.confirmationUrl !== null) window.open(chosen.confirmationUrl, '_top')
  }

  if (data === undefined) return <LoadState loading={loading} error={error} />
  const { subscription } = data
  return (
    <>
      <p className="page-subtitle muted">
        Plans are billed by Shopify, on your Shopify bill. A paid plan starts once you approve it in Shopify.
      </p>
      {!data.confirmed && (
        <p className="msg notice" role="status">
          Shopify could not be reached just now: the plan shown is the last one Shopify confirmed.
        </p>
      )}
      {data.test && (
        <p className="msg notice" data-testid="test-charges">
          Test charges: approving a plan here bills nothing (a development setting of this app).
        </p>
      )}
      {subscription !== null && subscription.status !== 'ACTIVE' && (
        <p className="muted" data-testid="subscription-status">
          Your {TITLES[subscription.plan]} subscription is {STATUS_TEXT[subscription.status] ?? subscription.status.toLowerCase()}.
        </p>
      )}
      <Announcer message={message} testId="plan-message" />
      <ul className="cards" aria-label="Plans">
        {data.plans.map((offer) => (
          <PlanCard key={offer.plan} offer={offer} current={offer.plan === data.plan} busy={busy} onChoose={(p) => void choose(p)} />
        ))}
      </ul>
    </>
  )
}
