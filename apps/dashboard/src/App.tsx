/**
 * The dashboard shell: sign-in, then a header (shop, plan, sign out), the screen
 * navigation (hash routes, so the server serves one index.html) and the current screen.
 * Focus moves to the screen's heading on navigation.
 *
 * Embedded in Shopify admin (the page came with App Bridge): no sign-in and no header; the
 * screens are App Bridge's navigation menu in the admin, the home screen is the setup guide, and
 * a plan page (Shopify Billing) comes second.
 */
import { type FormEvent, useCallback, useEffect, useId, useMemo, useRef, useState } from 'react'
import { appBridge } from './app-bridge.js'
import { ApiKeys } from './screens/ApiKeys.js'
import { Channels } from './screens/Channels.js'
import { Overview } from './screens/Overview.js'
import { Plan } from './screens/Plan.js'
import { PrivacyRequests } from './screens/PrivacyRequests.js'
import { Reviews } from './screens/Reviews.js'
import { Settings } from './screens/Settings.js'
import { SetupGuide } from './screens/SetupGuide.js'
import { Webhooks } from './screens/Webhooks.js'
import { describeError, forgetSession, restoreSession, type Session, signIn, signInWithAppBridge } from './session.js'
import { SessionContext, type SessionContextValue, When } from './ui.js'

const SCREENS = [
  { id: 'overview', title: 'Overview', Component: Overview },
  { id: 'settings', title: 'Settings', Component: Settings },
  { id: 'api-keys', title: 'API keys', Component: ApiKeys },
  { id: 'webhooks', title: 'Webhooks', Component: Webhooks },
  { id: 'channels', title: 'Channels', Component: Channels },
  { id: 'reviews', title: 'Reviews', Component: Reviews },
  { id: 'privacy', title: 'Privacy requests', Component: PrivacyRequests },
] as const
/** The home screen inside Shopify admin; the first of the screens is the home elsewhere. */
const SETUP = { id: 'setup', title: 'Setup guide', Component: SetupGuide } as const
/** Inside Shopify admin only: plans are billed by Shopify there; elsewhere they are the operator's. */
const PLAN = { id: 'plan', title: 'Plan', Component: Plan } as const
type Screen = (typeof SCREENS)[number] | typeof SETUP | typeof PLAN

const screensOf = (embedded: boolean): readonly Screen[] => (embedded ? [SETUP, PLAN, ...SCREENS] : SCREENS)

function screenFromHash(screens: readonly Screen[]): Screen {
  // Back from Shopify's approval page (it adds `charge_id`): the plan page, which confirms the plan.
  const returning = window.location.hash === '' && new URLSearchParams(window.location.search).has('charge_id')
  const id = returning ? PLAN.id : window.location.hash.replace(/^#\/?/, '')
  return screens.find((s) => s.id === id) ?? screens[0]!
}

function useScreen(screens: readonly Screen[]): Screen {
  const [screen, setScreen] = useState(() => screenFromHash(screens))
  useEffect(() => {
    const onHash = () => setScreen(screenFromHash(screens))
    window.addEventListener('hashchange', onHash)
    return () => window.removeEventListener('hashchange', onHash)
  }, [screens])
  return screen
}

export function App() {
  const [bridge] = useState(appBridge)
  const [session, setSession] = useState<Session | null | 'restoring'>('restoring')
  const [notice, setNotice] = useState<string | undefined>()
  // Embedded: why App Bridge's session token was refused.
  const [failure, setFailure] = useState<string | undefined>()

  useEffect(() => {
    // Embedded in Shopify admin: App Bridge's session tokens; otherwise this tab's session, if any.
    if (bridge)
      signInWithAppBridge(bridge).then(setSession, (err: unknown) => {
        setFailure(describeError(err))
        setSession(null)
      })
    else restoreSession().then((s) => setSession(s ?? null))
  }, [bridge])

  const signOut = useCallback((reason?: string) => {
    forgetSession()
    setNotice(reason)
    setSession(null)
  }, [])

  if (session === 'restoring') return <p className="muted center">Loading…</p>
  if (!session && bridge) return <EmbeddedFailure failure={failure} />
  if (!session)
    return (
      <SignIn
        notice={notice}
        onSignedIn={(s) => {
          setNotice(undefined)
          setSession(s)
        }}
      />
    )
  return <Shell session={session} signOut={signOut} />
}

function SignIn({ notice, onSignedIn }: { notice: string | undefined; onSignedIn(session: Session): void }) {
  const [error, setError] = useState<string | undefined>()
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

/** Embedded, when Shopify's session token is refused: no sign-in form, the way back is through Shopify admin. */
function EmbeddedFailure({ failure }: { failure: string | undefined }) {
  return (
    <main className="content">
      <h1>Wishlist</h1>
      <div className="card">
        <h2>Shopify could not confirm this session</h2>
        {failure && (
          <p role="alert" className="msg error">
            {failure}
          </p>
        )}
        <p>Open the app again from Shopify admin (Apps, then Wishlist) to start a new session.</p>
      </div>
    </main>
  )
}

function Shell({ session, signOut }: { session: Session; signOut(reason?: string): void }) {
  const screens = useMemo(() => screensOf(session.embedded), [session.embedded])
  const screen = useScreen(screens)
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
      {session.embedded ? (
        // Shopify admin shows these in its own navigation; the first is the home (the setup guide).
        <ui-nav-menu>
          {screens.map((s, i) => (
            <a key={s.id} href={`#/${i === 0 ? '' : s.id}`} rel={i === 0 ? 'home' : undefined}>
              {s.title}
            </a>
          ))}
        </ui-nav-menu>
      ) : (
        <>
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
              {screens.map((s) => (
                <li key={s.id}>
                  <a href={`#/${s.id}`} aria-current={s.id === screen.id ? 'page' : undefined}>
                    {s.title}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        </>
      )}
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
