/**
 * Privacy requests: the `customers/data_request` notifications Shopify sent (newest first),
 * each with a download of what the service holds about that customer (a JSON file).
 * Only a service running as a Shopify app records them; elsewhere the list answers 404.
 */
import { isWishlistApiError, type PrivacyRequest } from 'wishlist-service-sdk'
import { Announcer, LoadState, Table, useAction, useLoad, useSession, When } from '../ui.js'

/** Saves a JSON document as a file through a temporary object URL. */
function saveJson(fileName: string, value: unknown): void {
  const url = URL.createObjectURL(new Blob([`${JSON.stringify(value, null, 2)}\n`], { type: 'application/json' }))
  const link = document.createElement('a')
  link.href = url
  link.download = fileName
  link.hidden = true
  document.body.append(link)
  link.click()
  link.remove()
  // The download has started from the URL; it can go once the browser has read it.
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}

export function PrivacyRequests() {
  const { session } = useSession()
  const { client } = session
  const { data, loading, error } = useLoad(
    () =>
      client.admin.privacyRequests().catch((err: unknown) => {
        // 404: this service does not run as a Shopify app, so nothing sends these.
        if (isWishlistApiError(err) && err.status === 404) return null
        throw err
      }),
    [client],
  )
  const { busy, message, run } = useAction()

  const download = async (request: PrivacyRequest) => {
    const exported = await run(() => client.admin.privacyRequestExport(request.id), `The export for request ${request.id} was downloaded.`)
    if (exported !== undefined) saveJson(`privacy-request-${request.id}.json`, exported)
  }

  return (
    <>
      <Announcer message={message} testId="privacy-status" />
      <section className="card" aria-labelledby="privacy-heading">
        <h2 id="privacy-heading">Customer data requests</h2>
        <p className="muted">
          When a customer asks your shop for the data held about them, Shopify tells this app. Download the export of each request and send
          it to the customer (or to whoever handles the request for you).
        </p>
        <LoadState loading={loading && data === undefined} error={error} />
        {data === null && <p>Privacy requests arrive from Shopify; this service does not run as a Shopify app, so there are none.</p>}
        {data && data.privacyRequests.length === 0 && <p>No requests yet.</p>}
        {data && data.privacyRequests.length > 0 && (
          <Table
            testId="privacy-requests"
            label="Privacy requests"
            rows={data.privacyRequests}
            rowKey={(r) => r.id}
            columns={[
              { header: 'Received', cell: (r) => <When iso={r.receivedAt} /> },
              { header: 'Customer id', cellClass: 'mono', cell: (r) => r.customerId },
              { header: 'E-mail', cell: (r) => r.email ?? <span className="muted">none</span> },
              {
                header: 'Actions',
                headerHidden: true,
                cell: (r) => (
                  <button
                    type="button"
                    className="small"
                    onClick={() => void download(r)}
                    aria-label={`Download export of request ${r.id} (customer ${r.customerId})`}
                    disabled={busy}
                  >
                    Download export
                  </button>
                ),
              },
            ]}
          />
        )}
      </section>
    </>
  )
}
