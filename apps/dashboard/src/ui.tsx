/**
 * Shared pieces: the session context, an action runner that reports results in live
 * regions, a loader, the confirmation dialog (native <dialog>: focus trapped, Escape
 * cancels, focus returns to the opener), copy buttons, the "shown once" secret panel and
 * the screens' tables.
 */
import { createContext, type DependencyList, type ReactNode, useCallback, useContext, useEffect, useId, useRef, useState } from 'react'
import { type AnalyticsPeriodQuery, isWishlistApiError } from 'wishlist-service-sdk'
import { describeError, isSignedOutError, type Session } from './session.js'

export interface SessionContextValue {
  session: Session
  signOut(reason?: string): void
}

export const SessionContext = createContext<SessionContextValue | null>(null)

export function useSession(): SessionContextValue {
  const value = useContext(SessionContext)
  if (!value) throw new Error('useSession outside the signed-in layout')
  return value
}

export interface Message {
  kind: 'ok' | 'error'
  text: string
  /** Technical detail (a raw error text) shown on request beside the message. */
  detail?: string | undefined
}

export interface RunOptions {
  /**
   * The item acted on is gone (404 NOT_FOUND: deleted elsewhere). Called instead of the
   * usual error report; returns the message to show (it should also drop the item).
   */
  onNotFound?(): string
  /**
   * Called with the text of any other failure; returning true means the caller shows it
   * next to the control (the message region then stays empty, so it is announced once).
   */
  onError?(text: string): boolean | void
}

/** True when keyboard focus was lost: a focused control was disabled or removed. */
export const focusIsLost = (): boolean => document.activeElement === null || document.activeElement === document.body

/**
 * Runs API calls: tracks `busy`, reports success or failure, signs out on 401. Controls are
 * disabled while `busy`, which drops focus to <body>; the control that had focus when the
 * call started gets it back once the call is over (when it is still there and enabled).
 */
export function useAction() {
  const { signOut } = useSession()
  const [busy, setBusy] = useState(false)
  const [message, setMessage] = useState<Message | null>(null)
  const focusedBefore = useRef<Element | null>(null)

  useEffect(() => {
    if (busy) return
    const before = focusedBefore.current
    focusedBefore.current = null
    if (before instanceof HTMLElement && before.isConnected && focusIsLost()) before.focus()
  }, [busy])

  const run = useCallback(
    async <R,>(
      fn: () => Promise<R>,
      success?: string | ((result: R) => string | Message),
      options: RunOptions = {},
    ): Promise<R | undefined> => {
      focusedBefore.current = document.activeElement
      setBusy(true)
      setMessage(null)
      try {
        const result = await fn()
        if (success) {
          const done = typeof success === 'function' ? success(result) : success
          setMessage(typeof done === 'string' ? { kind: 'ok', text: done } : done)
        }
        return result
      } catch (err) {
        if (isSignedOutError(err)) signOut('Your session ended (the token expired or its API key was revoked). Sign in again.')
        else if (options.onNotFound && isWishlistApiError(err) && err.status === 404)
          setMessage({ kind: 'error', text: options.onNotFound() })
        else {
          const text = describeError(err)
          if (options.onError?.(text) !== true) setMessage({ kind: 'error', text })
        }
        return undefined
      } finally {
        setBusy(false)
      }
    },
    [signOut],
  )
  return { busy, message, setMessage, run }
}

/**
 * Focus for when a re-render removes the focused control (a deleted row, a button that no
 * longer applies): `arm()` before the change; the next time `deps` change, if focus fell to
 * <body>, `target` (a heading or status text with tabIndex -1) gets it.
 */
export function useFocusRescue<T extends HTMLElement>(deps: DependencyList) {
  const target = useRef<T>(null)
  const armed = useRef(false)
  useEffect(() => {
    if (!armed.current) return
    armed.current = false
    if (focusIsLost()) target.current?.focus()
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps)
  const arm = useCallback(() => {
    armed.current = true
  }, [])
  return { target, arm }
}

/** Loads data when `deps` change; `reload()` loads again. */
export function useLoad<T>(load: () => Promise<T>, deps: DependencyList) {
  const { signOut } = useSession()
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true })
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let live = true
    setState((s) => ({ ...s, loading: true }))
    load().then(
      (data) => live && setState({ data, loading: false }),
      (err: unknown) => {
        if (!live) return
        if (isSignedOutError(err)) signOut('Your session ended (the token expired or its API key was revoked). Sign in again.')
        else setState({ error: describeError(err), loading: false })
      },
    )
    return () => {
      live = false
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick])
  const reload = useCallback(() => setTick((t) => t + 1), [])
  return { ...state, reload, setData: (data: T) => setState({ data, loading: false }) }
}

/** Polite status and assertive error regions, present before anything is announced. */
export function Announcer({ message, testId }: { message: Message | null; testId?: string }) {
  return (
    <div className="announcer" data-testid={testId}>
      <p role="status" className={message?.kind === 'ok' ? 'msg ok' : 'msg'} title={message?.kind === 'ok' ? message.detail : undefined}>
        {message?.kind === 'ok' ? message.text : ''}
      </p>
      <p
        role="alert"
        className={message?.kind === 'error' ? 'msg error' : 'msg'}
        title={message?.kind === 'error' ? message.detail : undefined}
      >
        {message?.kind === 'error' ? message.text : ''}
      </p>
      {message?.detail && (
        <details className="msg-detail small">
          <summary>Technical details</summary>
          <code className="break">{message.detail}</code>
        </details>
      )}
    </div>
  )
}

export function LoadState({ loading, error }: { loading: boolean; error?: string | undefined }) {
  if (error)
    return (
      <p role="alert" className="msg error">
        {error}
      </p>
    )
  return loading ? (
    <p className="muted" role="status">
      Loading…
    </p>
  ) : null
}

export interface ConfirmOptions {
  title: string
  body: ReactNode
  confirmLabel: string
  danger?: boolean
}

/**
 * `[dialogElement, confirm]`: `await confirm({...})` resolves true when confirmed.
 *
 * The answer is taken where the shopper gives it (a button's click, the dialog's `cancel`
 * on Escape), not from the `close` event: that event is queued, so it can arrive after the
 * dialog was opened again and would answer the new question. `close` only answers when
 * Chromium closed the dialog without a `cancel` event (a repeated Escape without user
 * activation) and the dialog is still closed.
 */
export function useConfirm(): [ReactNode, (options: ConfirmOptions) => Promise<boolean>] {
  type Pending = ConfirmOptions & { resolve(ok: boolean): void; opener: Element | null }
  const ref = useRef<HTMLDialogElement>(null)
  const [pending, setPending] = useState<Pending | null>(null)
  /** The question the open dialog asks, until it is answered. */
  const shown = useRef<Pending | null>(null)
  const titleId = useId()
  const bodyId = useId()

  useEffect(() => {
    const dialog = ref.current
    if (!pending || !dialog || shown.current === pending) return
    shown.current?.resolve(false)
    shown.current = pending
    if (!dialog.open) dialog.showModal()
  }, [pending])

  const confirm = useCallback(
    (options: ConfirmOptions) => new Promise<boolean>((resolve) => setPending({ ...options, resolve, opener: document.activeElement })),
    [],
  )

  const answer = (ok: boolean) => {
    const entry = shown.current
    if (!entry) return
    shown.current = null
    if (ref.current?.open) ref.current.close()
    entry.resolve(ok)
    setPending((p) => (p === entry ? null : p))
    if (entry.opener instanceof HTMLElement && entry.opener.isConnected) entry.opener.focus()
  }

  const element = (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={titleId}
      aria-describedby={bodyId}
      onCancel={() => answer(false)}
      onClose={() => {
        if (!ref.current?.open) answer(false)
      }}
    >
      {pending && (
        <div>
          <h2 id={titleId}>{pending.title}</h2>
          <div id={bodyId}>{pending.body}</div>
          <div className="actions">
            <button type="button" autoFocus onClick={() => answer(false)}>
              Cancel
            </button>
            <button type="button" className={pending.danger ? 'danger' : 'primary'} onClick={() => answer(true)}>
              {pending.confirmLabel}
            </button>
          </div>
        </div>
      )}
    </dialog>
  )
  return [element, confirm]
}

async function writeClipboard(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text)
  } catch {
    // Clipboard API unavailable (insecure context or denied): fall back to a selection copy.
    const area = document.createElement('textarea')
    area.value = text
    area.setAttribute('readonly', '')
    area.className = 'offscreen'
    document.body.append(area)
    area.select()
    const ok = document.execCommand('copy')
    area.remove()
    if (!ok) throw new Error('copy failed')
  }
}

export function CopyButton({ value, label }: { value: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle')
  useEffect(() => {
    if (state === 'idle') return
    const t = setTimeout(() => setState('idle'), 2500)
    return () => clearTimeout(t)
  }, [state])
  return (
    <>
      <button
        type="button"
        aria-label={`Copy ${label}`}
        onClick={() =>
          writeClipboard(value).then(
            () => setState('copied'),
            () => setState('failed'),
          )
        }
      >
        {state === 'copied' ? 'Copied' : 'Copy'}
      </button>
      <span role="status" className="visually-hidden">
        {state === 'copied'
          ? `${label} copied to the clipboard`
          : state === 'failed'
            ? `Could not copy; select the ${label} and copy it yourself`
            : ''}
      </span>
    </>
  )
}

/** A read-only value with a copy button. */
export function CopyField({ label, value, testId }: { label: string; value: string; testId?: string }) {
  const id = useId()
  return (
    <div className="field copy-field">
      <label htmlFor={id}>{label}</label>
      <div className="row">
        <input id={id} readOnly value={value} className="mono" data-testid={testId} onFocus={(e) => e.currentTarget.select()} />
        <CopyButton value={value} label={label.toLowerCase()} />
      </div>
    </div>
  )
}

/** A newly created secret, shown once: focused when it appears so screen readers read it. */
export function SecretOnce({ title, children, onDone, testId }: { title: string; children: ReactNode; onDone(): void; testId?: string }) {
  const headingRef = useRef<HTMLHeadingElement>(null)
  const headingId = useId()
  useEffect(() => headingRef.current?.focus(), [])
  return (
    <section className="secret-once" aria-labelledby={headingId} data-testid={testId}>
      <h3 id={headingId} ref={headingRef} tabIndex={-1}>
        {title}
      </h3>
      <p>
        <strong>Copy the secret now: it is shown only once.</strong> Store it in your backend's secret store; the service keeps only a hash.
      </p>
      {children}
      <button type="button" onClick={onDone}>
        I have stored it
      </button>
    </section>
  )
}

/** A column of a `Table`: its header, and what each row shows in it. */
export interface Column<T> {
  header: ReactNode
  /** Read by screen readers only (a column of buttons). */
  headerHidden?: boolean
  /** Figures: header and cells right-aligned (`num`). */
  numeric?: boolean
  /** The cells' class (`mono` for ids). */
  cellClass?: string
  cell(row: T, index: number): ReactNode
}

/**
 * A table of rows, one per item, under scoped column headers; it scrolls sideways on its own
 * when the window is narrow. The scrolling box is a named region in the tab order, so a
 * keyboard user can reach it and scroll it with the arrow keys (`label` names it; it
 * defaults to the table's test id in words).
 */
export function Table<T>({
  columns,
  rows,
  rowKey,
  testId,
  label,
  stacked,
}: {
  columns: Column<T>[]
  rows: readonly T[]
  rowKey(row: T): string
  testId?: string
  label?: string
  /** On a phone, each row's first cell above the others, the column headers for screen readers only. */
  stacked?: boolean
}) {
  return (
    <div className="table-wrap" role="region" tabIndex={0} aria-label={label ?? (testId ? testId.replace(/-/g, ' ') : 'Table')}>
      <table data-testid={testId} className={stacked ? 'stacked' : undefined}>
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th key={i} scope="col" className={c.numeric ? 'num' : undefined}>
                {c.headerHidden ? <span className="visually-hidden">{c.header}</span> : c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={rowKey(row)}>
              {columns.map((c, j) => (
                <td key={j} className={c.numeric ? 'num' : c.cellClass}>
                  {c.cell(row, i)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/**
 * A star rating read as one image with a text label ("4 of 5 stars"); filled (★) and empty
 * (☆) stars differ in shape as well as colour, both at least 3:1 against white.
 */
export function Stars({ rating, label }: { rating: number; label?: string }) {
  const filled = Math.max(0, Math.min(5, Math.round(rating)))
  return (
    <span className="stars" role="img" aria-label={label ?? `${rating} of 5 stars`}>
      {'★'.repeat(filled)}
      <span className="dim">{'☆'.repeat(5 - filled)}</span>
    </span>
  )
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

export function When({ iso, empty = '—' }: { iso: string | null | undefined; empty?: string }) {
  if (!iso) return <>{empty}</>
  const d = new Date(iso)
  return <time dateTime={iso}>{Number.isNaN(d.getTime()) ? iso : dateFormat.format(d)}</time>
}

export type Period = NonNullable<AnalyticsPeriodQuery['period']>
/** `label` names the radio button; `span` completes "Figures for …" in running text. */
const PERIODS: { value: Period; label: string; span: string }[] = [
  { value: '7d', label: '7 days', span: 'the last 7 days' },
  { value: '14d', label: '14 days', span: 'the last 14 days' },
  { value: '30d', label: '30 days', span: 'the last 30 days' },
  { value: '90d', label: '90 days', span: 'the last 90 days' },
  { value: '1y', label: '1 year', span: 'the last year (365 days)' },
  { value: 'all', label: 'All time', span: 'all time' },
]

/** A period in running text ("the last 30 days"). */
export const periodSpan = (period: Period): string => PERIODS.find((p) => p.value === period)?.span ?? period

/** The analytics period as a group of radio buttons (arrow keys move between them). */
export function PeriodPicker({ period, onChange }: { period: Period; onChange(period: Period): void }) {
  const name = useId()
  return (
    <fieldset className="segmented">
      <legend>Period</legend>
      {PERIODS.map((p) => (
        <label key={p.value}>
          <input type="radio" name={name} value={p.value} checked={period === p.value} onChange={() => onChange(p.value)} />
          <span>{p.label}</span>
        </label>
      ))}
    </fieldset>
  )
}
