/** API keys: list, create (the secret is shown once) and revoke. */
import type { CreatedApiKey, CreateApiKeyInput } from 'wishlist-service-sdk'
import { type FormEvent, useId, useState } from 'react'
import {
  Announcer,
  CopyField,
  LoadState,
  SecretOnce,
  Table,
  useAction,
  useConfirm,
  useFocusRescue,
  useLoad,
  useSession,
  When,
} from '../ui.js'

type Scope = NonNullable<CreateApiKeyInput['scope']>

export function ApiKeys() {
  const { session, signOut } = useSession()
  const { client } = session
  const { data, loading, error, reload } = useLoad(() => client.admin.apiKeys(), [client])
  const { busy, message, run } = useAction()
  const [confirmElement, confirm] = useConfirm()
  const [created, setCreated] = useState<CreatedApiKey | null>(null)
  // A revoked key's row (and its focused button) goes: focus moves to the list's heading.
  const rescue = useFocusRescue<HTMLHeadingElement>([data])
  const ids = { name: useId(), scope: useId(), scopeHelp: useId() }

  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const formElement = e.currentTarget
    const form = new FormData(formElement)
    const name = String(form.get('name') ?? '').trim()
    const scope = String(form.get('scope')) as Scope
    const key = await run(
      () => client.admin.createApiKey({ ...(name ? { name } : {}), scope }),
      (k) => `Key ${k.keyId} created.`,
    )
    if (key) {
      formElement.reset()
      setCreated(key)
      reload()
    }
  }

  const revoke = async (keyId: string, name: string) => {
    const own = keyId === session.keyId
    const ok = await confirm({
      title: `Revoke ${name || keyId}?`,
      body: (
        <>
          <p>
            Key <code>{keyId}</code> and every token minted from it stop working at once. Backends that use it must switch to another key.
          </p>
          {own && (
            <p>
              <strong>This dashboard is signed in with this key: you will be signed out.</strong>
            </p>
          )}
        </>
      ),
      confirmLabel: 'Revoke key',
      danger: true,
    })
    if (!ok) return
    const done = await run(() => client.admin.deleteApiKey(keyId), `Key ${keyId} revoked.`, {
      onNotFound: () => {
        rescue.arm()
        reload()
        return `Key ${keyId} no longer exists (it was revoked elsewhere); the list was reloaded.`
      },
    })
    if (done && own) signOut(`You revoked the key this dashboard was signed in with (${keyId}). Sign in with another admin key.`)
    else if (done) {
      rescue.arm()
      reload()
    }
  }

  return (
    <>
      <Announcer message={message} testId="keys-status" />
      {created && (
        <SecretOnce
          title={`New ${created.scope} key${created.name ? `: ${created.name}` : ''}`}
          onDone={() => setCreated(null)}
          testId="new-key"
        >
          <CopyField label="Key id" value={created.keyId} testId="new-key-id" />
          <CopyField label="Secret" value={created.secret} testId="new-key-secret" />
        </SecretOnce>
      )}
      <section className="card" aria-labelledby="create-key-heading">
        <h2 id="create-key-heading">Create a key</h2>
        <form onSubmit={create} className="grid-form">
          <div className="field">
            <label htmlFor={ids.name}>Name</label>
            <input id={ids.name} name="name" maxLength={100} placeholder="e.g. Shop backend" />
          </div>
          <div className="field">
            <label htmlFor={ids.scope}>Scope</label>
            <select id={ids.scope} name="scope" defaultValue="admin" aria-describedby={ids.scopeHelp}>
              <option value="admin">admin</option>
              <option value="customer">customer</option>
            </select>
          </div>
          <p id={ids.scopeHelp} className="muted small span-all">
            <strong>admin</strong>: everything, including this dashboard. <strong>customer</strong>: may only mint customer tokens for your
            storefront's logged-in shoppers.
          </p>
          <button className="primary" disabled={busy}>
            Create key
          </button>
        </form>
      </section>
      <section className="card" aria-labelledby="keys-heading">
        <h2 id="keys-heading" ref={rescue.target} tabIndex={-1}>
          Keys
        </h2>
        <LoadState loading={loading && !data} error={error} />
        {data && (
          <Table
            testId="api-keys"
            label="API keys"
            rows={data.apiKeys}
            rowKey={(k) => k.keyId}
            columns={[
              {
                header: 'Name',
                cell: (k) => (
                  <>
                    {k.name || <span className="muted">unnamed</span>}
                    {k.keyId === session.keyId && <span className="badge">this session</span>}
                  </>
                ),
              },
              { header: 'Key id', cellClass: 'mono', cell: (k) => k.keyId },
              { header: 'Scope', cell: (k) => k.scope },
              { header: 'Created', cell: (k) => <When iso={k.createdAt} /> },
              { header: 'Last used', cell: (k) => <When iso={k.lastUsedAt} empty="never" /> },
              {
                header: 'Actions',
                headerHidden: true,
                cell: (k) => (
                  <button
                    type="button"
                    className="danger small"
                    onClick={() => revoke(k.keyId, k.name ?? '')}
                    aria-label={`Revoke key ${k.name || 'unnamed'} (${k.keyId})`}
                    disabled={busy}
                  >
                    Revoke
                  </button>
                ),
              },
            ]}
          />
        )}
      </section>
      {confirmElement}
    </>
  )
}
