/** Webhooks: endpoints, create (the signing secret is shown once), test, delete, deliveries. */
import type { CreatedWebhook, CreateWebhookInput, WebhookList } from '@wishlist/sdk'
import { type FormEvent, useId, useState } from 'react'
import { Announcer, CopyField, LoadState, SecretOnce, useAction, useConfirm, useLoad, useSession, When } from '../ui.js'

type EventName = CreateWebhookInput['events'][number]
type Endpoint = WebhookList['webhooks'][number]

const EVENTS: { name: EventName; help: string }[] = [
  { name: 'wishlist.item.added', help: 'a shopper adds a product' },
  { name: 'wishlist.item.removed', help: 'a shopper removes a product' },
  { name: 'wishlist.shared', help: 'a share link is created' },
  { name: 'wishlist.product.back_in_stock', help: 'a wishlisted product is available again' },
  { name: 'wishlist.product.price_dropped', help: 'a wishlisted product gets cheaper' },
  { name: 'wishlist.product.low_stock', help: 'fewer than 5 left of a wishlisted product' },
]

export function Webhooks() {
  const { session } = useSession()
  const { client } = session
  const { data, loading, error, reload } = useLoad(() => client.webhooks.list(), [client])
  const { busy, message, run, setMessage } = useAction()
  const [created, setCreated] = useState<CreatedWebhook | null>(null)
  const ids = { url: useId(), urlHelp: useId() }

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
    const webhook = await run(() => client.webhooks.create({ url, events }), (w) => `Webhook ${w.webhookId} created.`)
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
          <p className="muted small">Verify the <code>webhook-signature</code> header of every delivery with it (Standard Webhooks, HMAC-SHA256).</p>
          <CopyField label="Signing secret" value={created.secret} testId="new-webhook-secret" />
        </SecretOnce>
      )}
      <section className="card" aria-labelledby="create-webhook-heading">
        <h2 id="create-webhook-heading">Add an endpoint</h2>
        <form onSubmit={create}>
          <div className="field">
            <label htmlFor={ids.url}>Endpoint URL</label>
            <input id={ids.url} name="url" type="url" required placeholder="https://example.com/webhooks/wishlist" aria-describedby={ids.urlHelp} className="wide" />
            <p id={ids.urlHelp} className="muted small">
              We POST signed JSON to it; any 2xx answer counts as delivered, others are retried for about a day.
            </p>
          </div>
          <fieldset className="events">
            <legend>Events</legend>
            {EVENTS.map((ev) => (
              <label key={ev.name} className="checkbox-line">
                <input type="checkbox" name="events" value={ev.name} defaultChecked={ev.name.startsWith('wishlist.item')} />
                <span>
                  <code>{ev.name}</code> <span className="muted small">{ev.help}</span>
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
        <h2 id="endpoints-heading">Endpoints</h2>
        <LoadState loading={loading && !data} error={error} />
        {data && data.webhooks.length === 0 && <p>No endpoints yet.</p>}
        {data?.webhooks.map((w) => (
          <EndpointCard key={w.webhookId} endpoint={w} onDeleted={reload} />
        ))}
      </section>
    </>
  )
}

function EndpointCard({ endpoint, onDeleted }: { endpoint: Endpoint; onDeleted(): void }) {
  const { session } = useSession()
  const { client } = session
  const { data, loading, error, reload } = useLoad(() => client.webhooks.deliveries(endpoint.webhookId), [client, endpoint.webhookId])
  const { busy, message, run } = useAction()
  const [confirmElement, confirm] = useConfirm()
  const headingId = useId()

  const sendTest = async () => {
    const result = await run(
      () => client.webhooks.test(endpoint.webhookId),
      (r) =>
        r.delivered
          ? `Test delivered: the endpoint answered ${r.delivery.lastStatusCode} in ${r.durationMs} ms.`
          : `Test not delivered${r.delivery.lastStatusCode ? `: the endpoint answered ${r.delivery.lastStatusCode}` : ''}${r.error ? ` (${r.error})` : ''}.`,
    )
    if (result) reload()
  }

  const remove = async () => {
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
    if (await run(() => client.webhooks.delete(endpoint.webhookId), 'Endpoint deleted.')) onDeleted()
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
        <button type="button" onClick={reload} disabled={loading}>
          Refresh deliveries
        </button>
        <button type="button" className="danger" onClick={remove} disabled={busy}>
          Delete…
        </button>
      </div>
      <Announcer message={message} />
      <h4>Recent deliveries</h4>
      <LoadState loading={loading && !data} error={error} />
      {data && data.deliveries.length === 0 && <p className="muted">No deliveries yet.</p>}
      {data && data.deliveries.length > 0 && (
        <div className="table-wrap">
          <table data-testid="deliveries">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">
                  HTTP
                </th>
                <th scope="col" className="num">
                  Attempts
                </th>
                <th scope="col">Next retry</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {data.deliveries.slice(0, 20).map((d) => (
                <tr key={d.id}>
                  <td>
                    <code>{d.event}</code>
                  </td>
                  <td>
                    <span className={`status ${d.status}`}>{d.status}</span>
                  </td>
                  <td className="num">{d.lastStatusCode ?? '—'}</td>
                  <td className="num">{d.attempts}</td>
                  <td>{d.status === 'pending' ? <When iso={d.nextAttemptAt} empty="now" /> : '—'}</td>
                  <td>
                    <When iso={d.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {confirmElement}
    </article>
  )
}
