/** The React half of the demo: wishlist-service-sdk/react against the same server and shop. */
import { useEffect, useState } from 'react'
import { createRoot } from 'react-dom/client'
import { useGuestMerge, useReviewSummary, useWishlist, WishlistProvider } from 'wishlist-service-sdk/react'

interface DemoGlobals {
  DEMO: { storefrontKey: string; ready: boolean; session: { customerId: string; token: string } | null }
}
const demo = (window as unknown as DemoGlobals).DEMO
/** The widget's handle on the same page (packages/widget: `window.Wishlist`). */
const widget = () => (window as unknown as { Wishlist?: { refresh(): Promise<void> } }).Wishlist

const PRODUCTS: Record<string, string> = {
  '1000001': 'Canvas tote',
  '1000002': 'Wool beanie',
  '1000003': 'Linen shirt',
  '1000004': 'Leather belt',
  '1000005': 'Rain jacket',
  '1000006': 'Trail socks',
}

function Wishlist() {
  const wishlist = useWishlist()
  const merge = useGuestMerge()
  const { refresh } = wishlist
  // The widget and this app keep separate caches. The widget announces its changes
  // (`wishlist:change`), and this app has the widget reload after each of its own.
  const afterChange = (result: Promise<{ ok: boolean }>) => void result.then((r) => (r.ok ? widget()?.refresh() : undefined))
  useEffect(() => {
    const onChange = () => void refresh()
    document.addEventListener('wishlist:change', onChange)
    return () => document.removeEventListener('wishlist:change', onChange)
  }, [refresh])
  return (
    <section>
      <h2>
        My wishlist (React) <span data-testid="react-count">{wishlist.total}</span>
      </h2>
      {merge.status === 'merged' && <p role="status">Your guest wishlist was merged into your account.</p>}
      {wishlist.error && (
        <p role="alert" data-testid="react-error">
          Could not update the wishlist: {wishlist.error.code}
        </p>
      )}
      <ul data-testid="react-items">
        {wishlist.items.map((item) => (
          <li key={item.productId} data-product-id={item.productId}>
            <span data-testid="react-item-name">{PRODUCTS[item.productId] ?? item.productId}</span>{' '}
            <label>
              Quantity{' '}
              <input
                type="number"
                min={1}
                max={99}
                value={item.quantity}
                data-testid={`react-quantity-${item.productId}`}
                onChange={(e) => {
                  const quantity = Number(e.currentTarget.value)
                  if (Number.isInteger(quantity) && quantity >= 1 && quantity <= 99) void wishlist.updateItem(item.productId, { quantity })
                }}
              />
            </label>{' '}
            <NoteField productId={item.productId} note={item.note} save={(note) => void wishlist.updateItem(item.productId, { note })} />{' '}
            <button type="button" onClick={() => afterChange(wishlist.remove(item.productId))}>
              Remove
            </button>
          </li>
        ))}
      </ul>
      <p>
        {Object.entries(PRODUCTS)
          .filter(([id]) => !wishlist.has(id))
          .slice(0, 3)
          .map(([id, name]) => (
            <button key={id} type="button" data-testid={`react-add-${id}`} onClick={() => afterChange(wishlist.add(id))}>
              Add {name}
            </button>
          ))}
      </p>
    </section>
  )
}

/** The item's note: edited locally, saved (trimmed; empty clears it) when the field loses focus or on Enter. */
function NoteField({ productId, note, save }: { productId: string; note: string | null; save: (note: string | null) => void }) {
  const [draft, setDraft] = useState(note ?? '')
  useEffect(() => setDraft(note ?? ''), [note])
  const commit = () => {
    const next = draft.trim() === '' ? null : draft.trim()
    if (next !== note) save(next)
  }
  return (
    <label>
      Note{' '}
      <input
        type="text"
        maxLength={280}
        value={draft}
        data-testid={`react-note-${productId}`}
        onChange={(e) => setDraft(e.currentTarget.value)}
        onBlur={commit}
        onKeyDown={(e) => {
          if (e.key === 'Enter') commit()
        }}
      />
    </label>
  )
}

function Rating() {
  const { summary } = useReviewSummary('1000001')
  if (!summary) return null
  return (
    <p>
      Canvas tote: {summary.averageRating ?? '–'} / 5 from {summary.reviewCount} reviews
    </p>
  )
}

function App() {
  return (
    <WishlistProvider
      baseUrl={location.origin}
      storefrontKey={demo.storefrontKey}
      customerId={demo.session?.customerId}
      customerToken={demo.session?.token}
    >
      <Wishlist />
      <Rating />
    </WishlistProvider>
  )
}

const host = document.getElementById('react-app')
if (host && demo.ready) createRoot(host).render(<App />)
