/**
 * The home screen inside Shopify admin: a setup guide in Polaris's patterns (a page, a card
 * with an index table of the steps, an empty state), drawn with the dashboard's own styles.
 * Its three steps: the catalog the service knows and its sync from Shopify (run again from
 * here), the plan, and the theme editor link that turns the app embed on
 * (`GET /v1/admin/platform-setup`).
 */
import { type ReactNode, useEffect } from 'react'
import type { PlatformSetup } from 'wishlist-service-sdk'
import { Announcer, type Column, LoadState, Table, useAction, useLoad, useSession, When } from '../ui.js'

/** The plan page of the embedded admin. */
export const PLAN_HREF = '#/plan'

interface Step {
  id: string
  title: string
  help: ReactNode
  status: { text: string; tone: 'done' | 'todo' | 'failed' | 'info' }
  action: ReactNode
}

const CATALOG_STATUS: Record<PlatformSetup['catalog']['state'], Step['status']> = {
  not_started: { text: 'Not started', tone: 'todo' },
  running: { text: 'Syncing', tone: 'info' },
  done: { text: 'Synced', tone: 'done' },
  failed: { text: 'Failed', tone: 'failed' },
}

/** A link into Shopify admin: it replaces the whole admin page (the app's frame cannot show it). */
function AdminLink({ href, children, testId }: { href: string; children: ReactNode; testId?: string }) {
  return (
    <a href={href} target="_top" data-testid={testId}>
      {children}
    </a>
  )
}

/** How often the guide reads the sync's state again while it runs. */
const SYNC_REFRESH_MS = 2_000

/** The catalog step's action: start the sync again, unless it runs. */
function CatalogSyncButton({ catalog, busy, onSync }: { catalog: PlatformSetup['catalog']; busy: boolean; onSync(): void }) {
  if (catalog.state === 'running') return <span className="muted">Reading your products…</span>
  return (
    <button type="button" disabled={busy} onClick={onSync} data-testid="catalog-sync">
      {catalog.state === 'not_started' ? 'Sync now' : 'Sync again'}
    </button>
  )
}

function stepsOf(setup: PlatformSetup, catalogAction: ReactNode): Step[] {
  const { catalog, plan, appEmbed } = setup
  const products = `${catalog.products} product${catalog.products === 1 ? '' : 's'}`
  return [
    {
      id: 'catalog',
      title: 'Catalog sync',
      help: (
        <>
          Titles, prices and stock of your products, for wishlists and their back-in-stock and price-drop alerts.{' '}
          {catalog.products === 0 ? (
            "They are read from Shopify once you open the app, then kept current by Shopify's product updates."
          ) : (
            <>
              {products} known, last updated <When iso={catalog.updatedAt} />.
            </>
          )}
          {catalog.state === 'failed' && catalog.sync?.error != null && <> The last sync failed: {catalog.sync.error}</>}
        </>
      ),
      status: CATALOG_STATUS[catalog.state],
      action: catalogAction,
    },
    {
      id: 'plan',
      title: 'Plan',
      help: 'Free works at once; paid plans add share links, several lists per customer and more.',
      status: {
        text: `${plan.current[0]!.toUpperCase()}${plan.current.slice(1)} plan${plan.subscription?.status === 'PENDING' ? ', awaiting approval' : ''}`,
        tone: plan.current === 'free' ? 'info' : 'done',
      },
      action: (
        <a href={PLAN_HREF} data-testid="plan-link">
          Choose a plan
        </a>
      ),
    },
    {
      id: 'app-embed',
      title: 'App embed',
      help: 'Turn the Wishlist app embed on in your theme and save: hearts and the wishlist button appear on your store.',
      status: { text: 'In your theme', tone: 'info' },
      action:
        appEmbed.editorUrl === null ? (
          <span className="muted">The app's client id is not configured (SHOPIFY_API_KEY).</span>
        ) : (
          <AdminLink href={appEmbed.editorUrl} testId="theme-editor-link">
            Open the theme editor
          </AdminLink>
        ),
    },
  ]
}

const COLUMNS: Column<Step>[] = [
  {
    header: 'Step',
    cell: (step, i) => (
      <>
        <strong>
          {i + 1}. {step.title}
        </strong>
        <p className="muted small step-help">{step.help}</p>
      </>
    ),
  },
  { header: 'Status', cell: (step) => <span className={`status ${step.status.tone}`}>{step.status.text}</span> },
  { header: 'Next', cell: (step) => step.action },
]

export function SetupGuide() {
  const { session } = useSession()
  const { client, shop } = session
  const { data, loading, error, reload, setData } = useLoad(() => client.admin.platformSetup(), [client])
  const { busy, message, run } = useAction()
  const running = data?.catalog.state === 'running'
  // While the sync runs, its state is read again until it ends.
  useEffect(() => {
    if (!running || loading) return
    const timer = setTimeout(reload, SYNC_REFRESH_MS)
    return () => clearTimeout(timer)
  }, [running, loading, reload])
  const syncCatalog = async () => {
    const catalog = await run(() => client.admin.syncCatalog(), 'The catalog sync started.')
    if (catalog !== undefined && data !== undefined) setData({ ...data, catalog })
  }

  return (
    <>
      <p className="page-subtitle muted">
        Three steps to show wishlists on <strong data-testid="shop-domain">{shop.domain}</strong>.
      </p>
      {data === undefined ? (
        <LoadState loading={loading} error={error} />
      ) : (
        <>
          <section className="card" aria-labelledby="setup-steps-heading">
            <h2 id="setup-steps-heading">Setup steps</h2>
            <Table
              columns={COLUMNS}
              rows={stepsOf(data, <CatalogSyncButton catalog={data.catalog} busy={busy} onSync={() => void syncCatalog()} />)}
              rowKey={(step) => step.id}
              testId="setup-steps"
              label="Setup steps"
              stacked
            />
            <Announcer message={message} testId="catalog-sync-message" />
          </section>
          {data.catalog.products === 0 && (
            <section className="card empty-state" aria-labelledby="catalog-empty-heading" data-testid="catalog-empty">
              <span className="empty-state-mark" aria-hidden="true">
                ♥
              </span>
              <h2 id="catalog-empty-heading">No products yet</h2>
              <p className="muted">
                The wishlist reads your products from Shopify, then keeps them current from Shopify's product updates. Add a product in
                Shopify admin and it shows here, ready for shoppers' wishlists.
              </p>
              <AdminLink href={`https://${shop.domain}/admin/products`}>Go to products</AdminLink>
            </section>
          )}
        </>
      )}
    </>
  )
}
