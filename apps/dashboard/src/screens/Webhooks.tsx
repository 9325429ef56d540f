/** Webhooks: endpoints, create (the signing secret is shown once), test, delete, deliveries. */
import { type CreatedWebhook, WEBHOOK_EVENTS, type WebhookList } from 'wishlist-service-sdk'
import { type FormEvent, useId, useRef, useState } from 'react'
import {
  Announcer,
  CopyField,
  LoadState,
  type Message,
  SecretOnce,
  Table,
  useAction,
  useConfirm,
  useFocusRescue,
  useLoad,
  useSession,
  When,
} from '../ui.js'

type Endpoint = WebhookList['webhooks'][number]

type EventName = (typeof WEBHOOK_EVENTS)[number]['name']

/** Deliveries shown at first, and at most (the API's maximum `limit`). */
const FEW_DELIVERIES = 20
const MANY_DELIVERIES = 100

/**
 * Plain words for the transport errors a failed delivery reports (Node's error codes and
 * messages such as `connect ECONNREFUSED 127.0.0.1:80`); unknown texts are kept as they are.
 */
function plainDeliveryError(raw: string): string {
  if (/ECONNREFUSED/.test(raw)) return 'the connection was refused: nothing is listening at that address and port'
  if (/ENOTFOUND|EAI_AGAIN/.test(raw)) return 'the host name could not be found: check the URL'
  if (/ETIMEDOUT|timeout|timed out/i.test(raw)) return 'the endpoint did not answer in time (10 seconds)'
  if (/certificate|CERT_|self[- ]signed|SSL|TLS/i.test(raw))
    return 'its HTTPS certificate was not accepted (expired, self-signed or for another host name)'
  if (/ECONNRESET|socket hang up|other side closed/i.test(raw)) return 'the connection was closed before an answer arrived'
  if (/EHOSTUNREACH|ENETUNREACH/.test(raw)) return 'the host could not be reached'
  return raw
}

function testResultMessage(r: {
  delivered: boolean
  durationMs: number
  error: string | null
  delivery: { lastStatusCode: number | null }
}): Message {
  if (r.delivered) return { kind: 'ok', text: `Test delivered: the endpoint answered ${r.delivery.lastStatusCode} in ${r.durationMs} ms.` }
  const answered = r.delivery.lastStatusCode ? `: the endpoint answered ${r.delivery.lastStatusCode}` : ''
  const plain = r.error ? plainDeliveryError(r.error) : undefined
  return {
    kind: 'error',
    text: `Test not delivered${answered}${plain ? `${answered ? '; ' : ': '}${plain}` : ''}.`,
    detail: r.error ?? undefined,
  }
}

export function Webhooks() {
  const { session } = useSession()
  const { client } = session
  const { data, loading, error, reload } = useLoad(() => client.webhooks.list(), [client])
  const { busy, message, run, setMessage } = useAction()
  const [confirmElement, confirm] = useConfirm()
  const [created, setCreated] = useState<CreatedWebhook | null>(null)
  const ids = { url: useId(), urlHelp: useId() }
  // A deleted endpoint's card (and its focused button) goes: focus moves to the list's heading.
  const rescue = useFocusRescue<HTMLHeadingElement>([data])

  /** An endpoint that is gone (deleted here or elsewhere): reload the list. */
  const dropEndpoint = () => {
    rescue.arm()
    reload()
  }
  const goneMessage = (endpoint: Endpoint) => `Endpoint ${endpoint.url} no longer exists (it was deleted elsewhere); the list was reloaded.`

  // Deleting is done here, not in the card: the result is announced in this screen's status
  // region, which stays when the card goes.
  const remove = async (endpoint: Endpoint) => {
    const ok = await confirm({
      title: 'Delete this endpoint?',
      body: (
        <p>
          <code>{endpoint.url}</code> receives no more events, and deliveries still waiting for a retry are dropped.
        </p>
      ),
      confirmLabel: 'Delete endpoint',
      danger: true,
    })
    if (!ok) return
    const done = await run(() => client.webhooks.delete(endpoint.webhookId), `Endpoint deleted. ${endpoint.url} receives no more events.`, {
      onNotFound: () => {
        dropEndpoint()
        return goneMessage(endpoint)
      },
    })
    if (done) {
      if (created?.webhookId === endpoint.webhookId) setCreated(null)
      dropEndpoint()
    }
  }

  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const formElement = e.currentTarget
    const form = new FormData(formElement)
    const events = form.getAll('events').map(String) as EventName[]
    if (events.length === 0) {
      setMessage({ kind: 'error', text: 'Choose at least one event.' })
      return
    }
    const url = String(form.get('url') ?? '').trim()
    const webhook = await run(
      () => client.webhooks.create({ url, events }),
      (w) => `Webhook ${w.webhookId} created.`,
    )
    if (webhook) {
      formElement.reset()
      setCreated(webhook)
      reload()
    }
  }

  return (
    <>
      <Announcer message={message} testId="webhooks-status" />
      {created && (
        <SecretOnce title={`Signing secret of ${created.url}`} onDone={() => setCreated(null)} testId="new-webhook">
          <p className="muted small">
            Verify the <code>webhook-signature</code> header of every delivery with it (Standard Webhooks, HMAC-SHA256).
          </p>
          <CopyField label="Signing secret" value={created.secret} testId="new-webhook-secret" />
        </SecretOnce>
      )}
      <section className="card" aria-labelledby="create-webhook-heading">
        <h2 id="create-webhook-heading">Add an endpoint</h2>
        <form onSubmit={create}>
          <div className="field">
            <label htmlFor={ids.url}>Endpoint URL</label>
            <input
              id={ids.url}
              name="url"
              type="url"
              required
              placeholder="https://example.com/webhooks/wishlist"
              aria-describedby={ids.urlHelp}
              className="wide"
            />
            <p id={ids.urlHelp} className="muted small">
              We POST signed JSON to it; any 2xx answer counts as delivered, others are retried for about a day.
            </p>
          </div>
          <fieldset className="events">
            <legend>Events</legend>
            {/* Every event the API accepts, from the SDK's list generated from the API's own document. */}
            {WEBHOOK_EVENTS.map((ev) => (
              <label key={ev.name} className="checkbox-line">
                <input type="checkbox" name="events" value={ev.name} defaultChecked={ev.name.startsWith('wishlist.item')} />
                <span>
                  <code>{ev.name}</code> <span className="muted small">{ev.summary}</span>
                </span>
              </label>
            ))}
          </fieldset>
          <button className="primary" disabled={busy}>
            Add endpoint
          </button>
        </form>
      </section>
      <section aria-labelledby="endpoints-heading">
        <h2 id="endpoints-heading" ref={rescue.target} tabIndex={-1}>
          Endpoints
        </h2>
        <LoadState loading={loading && !data} error={error} />
        {data && data.webhooks.length === 0 && <p>No endpoints yet.</p>}
        {data?.webhooks.map((w) => (
          <EndpointCard
            key={w.webhookId}
            endpoint={w}
            deleting={busy}
            onDelete={() => remove(w)}
            onGone={() => {
              dropEndpoint()
              setMessage({ kind: 'error', text: goneMessage(w) })
            }}
          />
        ))}
      </section>
      {confirmElement}
    </>
  )
}

function EndpointCard({
  endpoint,
  deleting,
  onDelete,
  onGone,
}: {
  endpoint: Endpoint
  deleting: boolean
  onDelete(): void
  onGone(): void
}) {
  const { session } = useSession()
  const { client } = session
  const [limit, setLimit] = useState(FEW_DELIVERIES)
  // One more than is shown, to know whether there are more.
  const { data, loading, error, reload } = useLoad(
    () => client.webhooks.deliveries(endpoint.webhookId, { limit: Math.min(limit + 1, MANY_DELIVERIES) }),
    [client, endpoint.webhookId, limit],
  )
  const { busy, message, run } = useAction()
  const headingId = useId()
  const deliveriesHeading = useRef<HTMLHeadingElement>(null)
  const shown = data?.deliveries.slice(0, limit) ?? []
  const more = data ? data.deliveries.length > limit || data.deliveries.length >= MANY_DELIVERIES : false

  const sendTest = async () => {
    // A 404: the endpoint was deleted elsewhere; the screen reports it, as this card goes.
    const result = await run(() => client.webhooks.test(endpoint.webhookId), testResultMessage, { onNotFound: () => (onGone(), '') })
    if (result) reload()
  }

  return (
    <article className="card endpoint" aria-labelledby={headingId} data-testid={`webhook-${endpoint.webhookId}`}>
      <h3 id={headingId} className="mono break">
        {endpoint.url}
      </h3>
      <p className="muted small">
        <span className="mono">{endpoint.webhookId}</span> · created <When iso={endpoint.createdAt} />
      </p>
      <ul className="tags" aria-label="Events">
        {endpoint.events.map((e) => (
          <li key={e}>
            <code>{e}</code>
          </li>
        ))}
      </ul>
      <div className="row">
        <button type="button" onClick={sendTest} disabled={busy}>
          Send test event
        </button>
        {/* Not disabled while loading: that would drop keyboard focus to <body>. */}
        <button type="button" onClick={reload}>
          Refresh deliveries
        </button>
        <button type="button" className="danger" onClick={onDelete} disabled={busy || deleting}>
          Delete…
        </button>
      </div>
      <Announcer message={message} />
      <h4 ref={deliveriesHeading} tabIndex={-1}>
        Recent deliveries
      </h4>
      <LoadState loading={loading && !data} error={error} />
      {data && shown.length === 0 && <p className="muted">No deliveries yet.</p>}
      {shown.length > 0 && (
        <Table
          testId="deliveries"
          label="Recent deliveries"
          rows={shown}
          rowKey={(d) => d.id}
          columns={[
            { header: 'Event', cell: (d) => <code>{d.event}</code> },
            { header: 'Status', cell: (d) => <span className={`status ${d.status}`}>{d.status}</span> },
            { header: 'HTTP', numeric: true, cell: (d) => d.lastStatusCode ?? '—' },
            { header: 'Attempts', numeric: true, cell: (d) => d.attempts },
            { header: 'Next retry', cell: (d) => (d.status === 'pending' ? <When iso={d.nextAttemptAt} empty="now" /> : '—') },
            { header: 'Created', cell: (d) => <When iso={d.createdAt} /> },
          ]}
        />
      )}
      {more && (
        <p className="row muted small">
          <span>Showing the {shown.length} most recent deliveries.</span>
          {limit < MANY_DELIVERIES && (
            <button type="button" className="small" onClick={() => (setLimit(MANY_DELIVERIES), deliveriesHeading.current?.focus())}>
              Show up to {MANY_DELIVERIES}
            </button>
          )}
        </p>
      )}
    </article>
  )
}
