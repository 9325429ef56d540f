/**
 * Channels: where shopper notifications go (docs/notifications.md). Klaviyo, connected with a
 * private API key the server checks with Klaviyo before it keeps it (the result, or the
 * refusal in words), disconnected after a confirmation; Shopify Flow's triggers (Shopify shops);
 * what the notifications of a period did per signal (sent, failed, waiting, skipped per
 * channel; suppressed by reason); and the three frequency settings.
 *
 * Through the SDK's typed calls (`admin.channels`, `admin.connectKlaviyo`, `admin.disconnectKlaviyo`).
 */
import { type Channels, isWishlistApiError, type KlaviyoChannel } from 'wishlist-service-sdk'
import { type FormEvent, useId, useState } from 'react'
import {
  Announcer,
  type Column,
  LoadState,
  type Period,
  PeriodPicker,
  periodSpan,
  Table,
  useAction,
  useConfirm,
  useFocusRescue,
  useLoad,
  useSession,
  When,
} from '../ui.js'

type Signal = 'back_in_stock' | 'price_drop' | 'low_stock' | 'reminder' | 'item_added'
type ChannelReport = Channels['channels'][number]
type ChannelView = KlaviyoChannel

/** The frequency settings (GET/PATCH /v1/admin/settings). */
interface Frequency {
  notification_cooldown_hours: number
  notifications_per_day: number
  reminder_after_days: number
}

const SIGNALS: { value: Signal; label: string }[] = [
  { value: 'back_in_stock', label: 'Back in stock' },
  { value: 'price_drop', label: 'Price drop' },
  { value: 'low_stock', label: 'Low stock' },
  { value: 'reminder', label: 'Reminder' },
  { value: 'item_added', label: 'Item added' },
]
const signalLabel = (s: Signal) => SIGNALS.find((x) => x.value === s)?.label ?? s

const FREQUENCY: { key: keyof Frequency; label: string; min: number; max: number; help: string }[] = [
  {
    key: 'notification_cooldown_hours',
    label: 'Hours between notifications of the same product',
    min: 1,
    max: 720,
    help: 'A shopper gets at most one notification per product and kind (back in stock, price drop …) in this many hours. 1 to 720; 24 by default.',
  },
  {
    key: 'notifications_per_day',
    label: 'Notifications per shopper per day',
    min: 1,
    max: 50,
    help: 'At most this many notifications to one shopper in any 24 hours, all products together. 1 to 50; 3 by default.',
  },
  {
    key: 'reminder_after_days',
    label: 'Days before the reminder',
    min: 1,
    max: 90,
    help: 'One reminder this many days after a shopper added a product they have not bought. 1 to 90; 7 by default.',
  },
]

const number = new Intl.NumberFormat()

/** What Klaviyo answered, from the server's message ("Klaviyo refused the private key (klaviyo answered HTTP 401: …); nothing was stored"). */
function klaviyoAnswer(message: string): string {
  const reason = /\((.*)\)/.exec(message)?.[1] ?? message
  const answer = reason.replace(/^klaviyo answered /i, '')
  return /[.!?]$/.test(answer) ? answer : `${answer}.`
}

/** Why Klaviyo's key was not kept, in words; undefined for a failure that is not about the key. */
function keyRefusal(err: unknown): string | undefined {
  if (!isWishlistApiError(err)) return undefined
  if (err.code === 'CHANNEL_KEY_REJECTED')
    return `Klaviyo refused this key, so it was not saved. Check that it is a private API key of your Klaviyo account (Klaviyo: Settings, API keys) that has not been revoked, with read access to Accounts and Profiles and write access to Events and Data Privacy. Klaviyo's answer: ${klaviyoAnswer(err.message)}`
  if (err.code === 'VALIDATION_ERROR')
    return 'This is not a Klaviyo private API key, so it was not saved: private keys start with "pk_" followed by letters and digits (the six-character public key cannot be used).'
  if (err.code === 'UNAVAILABLE')
    return /SHOPIFY_TOKEN_KEY/.test(err.message)
      ? 'The key was not saved: the service has no key to encrypt it with (SHOPIFY_TOKEN_KEY). Ask the service operator to set it.'
      : 'Klaviyo could not be reached to check the key, so it was not saved. Try again in a few minutes.'
  return undefined
}

function checkInWords(check: NonNullable<ChannelView['lastCheck']>): string {
  switch (check.state) {
    case 'valid':
      return 'Klaviyo accepted the key.'
    case 'invalid':
      return `Klaviyo refused the key${check.error ? ` (${check.error})` : ''}. Notifications to Klaviyo are paused until you connect a new key.`
    case 'unreachable':
      return `Klaviyo could not be reached${check.error ? ` (${check.error})` : ''}; notifications wait and are sent once it answers.`
  }
}

export function Channels() {
  const { session } = useSession()
  const { client } = session
  const [period, setPeriod] = useState<Period>('30d')
  const report = useLoad(() => client.admin.channels({ period }), [client, period])
  const shop = useLoad(() => client.admin.shop(), [client])
  const { busy, message, run } = useAction()
  const [confirmElement, confirm] = useConfirm()
  const [keyError, setKeyError] = useState<string | null>(null)
  const ids = { key: useId(), keyHelp: useId(), keyError: useId(), klaviyo: useId(), flow: useId(), counts: useId(), frequency: useId() }
  // Disconnecting removes the button that had focus: focus goes to Klaviyo's heading.
  const rescue = useFocusRescue<HTMLHeadingElement>([report.data])

  const answer = report.data
  const klaviyo = answer?.channels.find((c) => c.channel === 'klaviyo')
  const flow = answer?.channels.find((c) => c.channel === 'flow')
  const span = periodSpan(period)

  const connect = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = e.currentTarget
    const key = String(new FormData(form).get('private_key') ?? '').trim()
    setKeyError(null)
    const stored = await run(
      async () => {
        try {
          return await client.admin.connectKlaviyo(key)
        } catch (err) {
          const words = keyRefusal(err)
          throw words === undefined ? err : new Error(words)
        }
      },
      (c) => `Klaviyo connected: Klaviyo accepted the key ending in ${c.keyLast4 ?? ''}.`,
      {
        onError: (text) => {
          setKeyError(text)
          return false
        },
      },
    )
    if (stored) {
      form.reset()
      report.reload()
    }
  }

  const disconnect = async () => {
    const ok = await confirm({
      title: 'Disconnect Klaviyo?',
      body: (
        <p>
          The key ending in <code>{klaviyo?.keyLast4}</code> is deleted here and no more events are sent to Klaviyo; notifications waiting
          for Klaviyo are not sent. Your Klaviyo account, its flows and the events it already has stay as they are.
        </p>
      ),
      confirmLabel: 'Disconnect Klaviyo',
      danger: true,
    })
    if (!ok) return
    const done = await run(() => client.admin.disconnectKlaviyo(), 'Klaviyo disconnected: its key was deleted.', {
      onNotFound: () => {
        rescue.arm()
        report.reload()
        return 'Klaviyo was already disconnected (elsewhere); the page was reloaded.'
      },
    })
    if (done) {
      rescue.arm()
      report.reload()
    }
  }

  return (
    <>
      <p className="muted page-subtitle">
        Shoppers who gave their e-mail get notifications about the products they wished for (back in stock, price drop, low stock, a
        reminder) through your own Klaviyo flows or Shopify Flow workflows.
      </p>
      <Announcer message={message} testId="channels-status" />

      <section className="card" aria-labelledby={ids.klaviyo}>
        <h2 id={ids.klaviyo} ref={rescue.target} tabIndex={-1}>
          Klaviyo
        </h2>
        <LoadState loading={report.loading && !answer} error={report.error} />
        {klaviyo && (
          <div data-testid="klaviyo-state">
            {klaviyo.connected ? (
              <dl className="facts">
                <dt>Status</dt>
                <dd data-testid="klaviyo-connected">Connected</dd>
                <dt>Private key</dt>
                <dd>
                  ending in <code data-testid="klaviyo-last4">{klaviyo.keyLast4}</code>
                </dd>
                <dt>Connected</dt>
                <dd>
                  <When iso={klaviyo.connectedAt} />
                </dd>
                {klaviyo.lastCheck && (
                  <>
                    <dt>Last check</dt>
                    <dd data-testid="klaviyo-check">
                      {checkInWords(klaviyo.lastCheck)} (<When iso={klaviyo.lastCheck.checkedAt} />)
                    </dd>
                  </>
                )}
              </dl>
            ) : (
              <p data-testid="klaviyo-connected">Not connected.</p>
            )}
          </div>
        )}
        <form onSubmit={connect}>
          <div className="field">
            <label htmlFor={ids.key}>{klaviyo?.connected ? 'New private API key' : 'Private API key'}</label>
            <div className="row">
              <input
                id={ids.key}
                name="private_key"
                type="password"
                required
                autoComplete="off"
                spellCheck={false}
                placeholder="pk_…"
                className="mono"
                aria-invalid={keyError ? true : undefined}
                aria-describedby={keyError ? `${ids.keyError} ${ids.keyHelp}` : ids.keyHelp}
              />
              <button className="primary" disabled={busy}>
                {klaviyo?.connected ? 'Replace key' : 'Connect Klaviyo'}
              </button>
            </div>
            {keyError && (
              <p id={ids.keyError} className="field-error" data-testid="klaviyo-key-error">
                {keyError}
              </p>
            )}
            <p id={ids.keyHelp} className="muted small">
              In Klaviyo: Settings, API keys, Create private API key, with read access to Accounts and Profiles and write access to Events
              and Data Privacy. The key is checked with Klaviyo before it is saved, kept encrypted, and never shown again (only its last
              four characters).
            </p>
          </div>
        </form>
        {klaviyo?.connected && (
          <button type="button" className="danger" onClick={disconnect} disabled={busy}>
            Disconnect Klaviyo…
          </button>
        )}
      </section>

      {flow?.triggers && (
        <section className="card" aria-labelledby={ids.flow}>
          <h2 id={ids.flow}>Shopify Flow</h2>
          <p className="muted small">
            Each kind of notification is a trigger in Shopify Flow. A notification is sent to Flow only while one of your workflows that
            starts with its trigger is turned on; Shopify tells the app when that changes.
          </p>
          <Table
            testId="flow-triggers"
            label="Shopify Flow triggers"
            rows={flow.triggers}
            rowKey={(t) => t.signal}
            columns={[
              {
                header: 'Trigger',
                cell: (t) => (
                  <>
                    {signalLabel(t.signal)}
                    <br />
                    <code className="break small">{t.handle}</code>
                  </>
                ),
              },
              {
                header: 'Status',
                cell: (t) =>
                  t.state === 'enabled' ? (
                    <span className="status flow-state succeeded">On: a workflow uses it</span>
                  ) : t.state === 'disabled' ? (
                    <span className="status flow-state pending">Off: no workflow turned on uses it</span>
                  ) : (
                    <span className="status flow-state">Not reported yet</span>
                  ),
              },
              { header: 'Since', cell: (t) => <When iso={t.since} empty="—" /> },
            ]}
          />
        </section>
      )}

      <section className="card" aria-labelledby={ids.counts}>
        <h2 id={ids.counts}>Notifications</h2>
        <PeriodPicker period={period} onChange={setPeriod} />
        <p className="visually-hidden" role="status">
          {report.loading ? '' : answer ? `Showing notifications of ${span}.` : ''}
        </p>
        {answer && (
          <div aria-busy={report.loading} className="counts">
            <p className="muted small">
              Notifications due in {span}, by kind: what each channel did with them, and those not sent because of the frequency limits or
              an opt-out.
            </p>
            {answer.channels.map((c) => (
              <DeliveryTable key={c.channel} channel={c} />
            ))}
            <h3>Not sent</h3>
            <Table
              testId="counts-suppressed"
              label="Notifications not sent, by reason"
              rows={SIGNALS}
              rowKey={(s) => s.value}
              columns={[
                { header: 'Notification', cell: (s) => s.label },
                { header: 'Too soon after the last one', numeric: true, cell: (s) => number.format(answer.suppressed[s.value].cooldown) },
                { header: 'Daily limit reached', numeric: true, cell: (s) => number.format(answer.suppressed[s.value].daily_cap) },
                { header: 'Shopper opted out', numeric: true, cell: (s) => number.format(answer.suppressed[s.value].opted_out) },
              ]}
            />
          </div>
        )}
      </section>

      <section className="card" aria-labelledby={ids.frequency}>
        <h2 id={ids.frequency}>Frequency</h2>
        <LoadState loading={shop.loading && !shop.data} error={shop.error} />
        {shop.data && (
          <FrequencyForm
            stored={frequencyOf(shop.data.settings)}
            busy={busy}
            onSave={async (patch) => {
              const settings = await run(
                () => client.admin.updateSettings(patch),
                'Frequency saved: it applies to the notifications due from now on.',
              )
              if (settings && shop.data) shop.setData({ ...shop.data, settings })
            }}
          />
        )}
      </section>
      {confirmElement}
    </>
  )
}

const frequencyOf = (settings: object): Frequency => {
  const s = settings as Partial<Frequency>
  return {
    notification_cooldown_hours: s.notification_cooldown_hours ?? 24,
    notifications_per_day: s.notifications_per_day ?? 3,
    reminder_after_days: s.reminder_after_days ?? 7,
  }
}

function DeliveryTable({ channel }: { channel: ChannelReport }) {
  const name = channel.channel === 'klaviyo' ? 'Klaviyo' : 'Shopify Flow'
  const columns: Column<{ value: Signal; label: string }>[] = [
    { header: 'Notification', cell: (s) => s.label },
    { header: 'Sent', numeric: true, cell: (s) => number.format(channel.deliveries[s.value].sent) },
    { header: 'Failed', numeric: true, cell: (s) => number.format(channel.deliveries[s.value].failed) },
    { header: 'Waiting', numeric: true, cell: (s) => number.format(channel.deliveries[s.value].pending) },
    { header: 'Skipped', numeric: true, cell: (s) => number.format(channel.deliveries[s.value].skipped) },
  ]
  return (
    <>
      <h3>{name}</h3>
      <Table
        testId={`counts-${channel.channel}`}
        label={`Notifications through ${name}`}
        rows={SIGNALS}
        rowKey={(s) => s.value}
        columns={columns}
      />
    </>
  )
}

/** The three settings, saved together; the fields keep what was typed (a refused value stays to be corrected). */
function FrequencyForm({ stored, busy, onSave }: { stored: Frequency; busy: boolean; onSave(patch: Frequency): Promise<void> }) {
  const [draft, setDraft] = useState<Record<keyof Frequency, string>>({
    notification_cooldown_hours: String(stored.notification_cooldown_hours),
    notifications_per_day: String(stored.notifications_per_day),
    reminder_after_days: String(stored.reminder_after_days),
  })
  const baseId = useId()
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    void onSave({
      notification_cooldown_hours: Number(draft.notification_cooldown_hours),
      notifications_per_day: Number(draft.notifications_per_day),
      reminder_after_days: Number(draft.reminder_after_days),
    })
  }
  return (
    <form onSubmit={submit}>
      {FREQUENCY.map((f) => (
        <div className="field" key={f.key}>
          <label htmlFor={`${baseId}-${f.key}`}>{f.label}</label>
          <input
            id={`${baseId}-${f.key}`}
            name={f.key}
            type="number"
            min={f.min}
            max={f.max}
            step={1}
            required
            value={draft[f.key]}
            onChange={(e) => {
              const value = e.currentTarget.value
              setDraft((d) => ({ ...d, [f.key]: value }))
            }}
            aria-describedby={`${baseId}-${f.key}-help`}
            className="narrow"
          />
          <p id={`${baseId}-${f.key}-help`} className="muted small">
            {f.help}
          </p>
        </div>
      ))}
      <button className="primary" disabled={busy}>
        Save frequency
      </button>
    </form>
  )
}
