/**
 * The dashboard shell: sign-in, then a header (shop, plan, sign out), the screen
 * navigation (hash routes, so the server serves one index.html) and the current screen.
 * Focus moves to the screen's heading on navigation.
 */
import { type FormEvent, useCallback, useEffect, useId, useMemo, useRef, useState } from 'react'
import { ApiKeys } from './screens/ApiKeys.js'
import { Overview } from './screens/Overview.js'
import { PrivacyRequests } from './screens/PrivacyRequests.js'
import { Reviews } from './screens/Reviews.js'
import { Settings } from './screens/Settings.js'
import { Webhooks } from './screens/Webhooks.js'
import { describeError, forgetSession, restoreSession, type Session, shopifySessionToken, signIn, signInWithShopify } from './session.js'
import { SessionContext, type SessionContextValue, When } from './ui.js'

const SCREENS = [
  { id: 'overview', title: 'Overview', Component: Overview },
  { id: 'settings', title: 'Settings', Component: Settings },
  { id: 'api-keys', title: 'API keys', Component: ApiKeys },
  { id: 'webhooks', title: 'Webhooks', Component: Webhooks },
  { id: 'reviews', title: 'Reviews', Component: Reviews },
  { id: 'privacy', title: 'Privacy requests', Component: PrivacyRequests },
] as const
type ScreenId = (typeof SCREENS)[number]['id']

function routeFromHash(): ScreenId {
  const id = window.location.hash.replace(/^#\/?/, '')
  return SCREENS.find((s) => s.id === id)?.id ?? 'overview'
}

function useRoute(): ScreenId {
  const [route, setRoute] = useState(routeFromHash)
  useEffect(() => {
    const onHash = () => setRoute(routeFromHash())
    window.addEventListener('hashchange', onHash)
    return () => window.removeEventListener('hashchange', onHash)
  }, [])
  return route
}

export function App() {
  const [session, setSession] = useState<Session | null | 'restoring'>('restoring')
  const [notice, setNotice] = useState<string | undefined>()
  const [failure, setFailure] = useState<string | undefined>()

  useEffect(() => {
    // Opened by Shopify admin: its session token signs in; otherwise this tab's session, if any.
    const sessionToken = shopifySessionToken()
    if (sessionToken)
      signInWithShopify(sessionToken).then(setSession, (err: unknown) => {
        setFailure(`Shopify sign-in failed: ${describeError(err)}`)
        setSession(null)
      })
    else restoreSession().then((s) => setSession(s ?? null))
  }, [])

  const signOut = useCallback((reason?: string) => {
    forgetSession()
    setNotice(reason)
    setSession(null)
  }, [])

  if (session === 'restoring') return <p className="muted center">Loading…</p>
  if (!session)
    return (
      <SignIn
        notice={notice}
        failure={failure}
        onSignedIn={(s) => {
          setNotice(undefined)
          setFailure(undefined)
          setSession(s)
        }}
      />
    )
  return <Shell session={session} signOut={signOut} />
}

function SignIn({
  notice,
  failure,
  onSignedIn,
}: {
  notice: string | undefined
  failure: string | undefined
  onSignedIn(session: Session): void
}) {
  const [error, setError] = useState<string | undefined>(failure)
  // Opened from Shopify admin (`?shop=…`): reopening the app there signs in again.
  const embedded = new URLSearchParams(window.location.search).has('shop')
  const [busy, setBusy] = useState(false)
  const keyId = useId()
  const secretId = useId()
  const helpId = useId()
  const firstField = useRef<HTMLInputElement>(null)
  useEffect(() => firstField.current?.focus(), [])

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault()
    const form = new FormData(e.currentTarget)
    setBusy(true)
    setError(undefined)
    try {
      onSignedIn(await signIn(String(form.get('apiKey') ?? ''), String(form.get('apiSecret') ?? '')))
    } catch (err) {
      setError(describeError(err))
      setBusy(false)
    }
  }

  return (
    <main className="signin">
      <form onSubmit={submit} aria-describedby={helpId} className="card">
        <h1>Wishlist dashboard</h1>
        <p id={helpId} className="muted">
          Sign in with an <strong>admin</strong> API key of your shop. <code>npm start</code> prints the demo shop's key and secret;{' '}
          <code>npx wishlist keys create --domain …</code> makes one.
        </p>
        {notice && (
          <p className="msg notice" role="status">
            {notice}
          </p>
        )}
        {embedded && <p className="muted">Opened from Shopify admin: open the app there again to sign in with your Shopify session.</p>}
        <div className="field">
          <label htmlFor={keyId}>API key</label>
          <input
            id={keyId}
            ref={firstField}
            name="apiKey"
            required
            autoComplete="username"
            placeholder="ak_…"
            spellCheck={false}
            className="mono"
          />
        </div>
        <div className="field">
          <label htmlFor={secretId}>Secret</label>
          <input
            id={secretId}
            name="apiSecret"
            type="password"
            required
            autoComplete="current-password"
            placeholder="sk_…"
            className="mono"
          />
        </div>
        <p role="alert" className={error ? 'msg error' : 'msg'}>
          {error ?? ''}
        </p>
        <button className="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p className="muted small">The secret stays in this tab's memory; only the short-lived token is kept for this tab's session.</p>
      </form>
    </main>
  )
}

function Shell({ session, signOut }: { session: Session; signOut(reason?: string): void }) {
  const route = useRoute()
  const screen = SCREENS.find((s) => s.id === route) ?? SCREENS[0]
  const heading = useRef<HTMLHeadingElement>(null)
  const value = useMemo<SessionContextValue>(() => ({ session, signOut }), [session, signOut])

  useEffect(() => {
    document.title = `${screen.title} · Wishlist dashboard`
    // Focus goes to the screen's heading after sign-in and on every navigation, so screen
    // readers announce where the user is and Tab continues from the top of the screen.
    heading.current?.focus()
  }, [screen])

  const Screen = screen.Component
  return (
    <SessionContext.Provider value={value}>
      <a className="skip" href="#main" onClick={(e) => (e.preventDefault(), heading.current?.focus())}>
        Skip to content
      </a>
      <header className="top">
        <div className="brand">
          <span className="logo" aria-hidden="true">
            ♥
          </span>
          <span>
            <strong data-testid="shop-domain">{session.shop.domain}</strong>
            <span className="badge">{session.shop.plan} plan</span>
          </span>
        </div>
        <button type="button" onClick={() => signOut('You signed out.')}>
          Sign out
        </button>
      </header>
      <nav aria-label="Dashboard sections" className="tabs">
        <ul>
          {SCREENS.map((s) => (
            <li key={s.id}>
              <a href={`#/${s.id}`} aria-current={s.id === route ? 'page' : undefined}>
                {s.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" className="content">
        <h1 ref={heading} tabIndex={-1}>
          {screen.title}
        </h1>
        {session.shop.uninstalledAt && (
          <p className="msg notice" data-testid="uninstalled">
            <strong>The app is uninstalled from this shop</strong> (since <When iso={session.shop.uninstalledAt} />
            ): the storefront's hearts, reviews and app proxy are refused and outbound webhooks wait. Your data stays here and can still be
            exported; installing the app again turns everything back on.
          </p>
        )}
        <Screen key={screen.id} />
      </main>
    </SessionContext.Provider>
  )
}
