/** Review moderation: the queue (pending first), filters, approve, reject, reply, delete. */
import type { AdminReviewPage, AdminReviewQuery } from '@wishlist/sdk'
import { type FormEvent, useId, useState } from 'react'
import { Announcer, LoadState, useAction, useConfirm, useLoad, useSession, When } from '../ui.js'

type Status = NonNullable<AdminReviewQuery['status']>
type AdminReview = AdminReviewPage['data'][number]
const PER_PAGE = 20

export function Reviews() {
  const { session } = useSession()
  const { client } = session
  const [filters, setFilters] = useState<{ status: Status | ''; productId: string; page: number }>({ status: '', productId: '', page: 1 })
  const { data, loading, error, reload } = useLoad(
    () =>
      client.reviews.admin.list({
        page: filters.page,
        per_page: PER_PAGE,
        ...(filters.status ? { status: filters.status } : {}),
        ...(filters.productId ? { product_id: filters.productId } : {}),
      }),
    [client, filters],
  )
  const { busy, message, run } = useAction()
  const [confirmElement, confirm] = useConfirm()
  const ids = { status: useId(), product: useId() }

  const applyFilters = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget)
    setFilters({ status: String(form.get('status') ?? '') as Status | '', productId: String(form.get('product') ?? '').trim(), page: 1 })
  }

  const act = async (label: string, fn: () => Promise<unknown>) => {
    if (await run(fn, label)) reload()
  }

  const remove = async (r: AdminReview) => {
    const ok = await confirm({
      title: 'Delete this review?',
      body: (
        <p>
          The review by {r.customerName} on product {r.productId} is deleted for good, and the product's rating is recalculated.
        </p>
      ),
      confirmLabel: 'Delete review',
      danger: true,
    })
    if (ok) await act(`Review ${r.id} deleted.`, () => client.reviews.admin.delete(r.id))
  }

  const pages = data ? Math.max(1, Math.ceil(data.total / PER_PAGE)) : 1

  return (
    <>
      <form className="filters card" onSubmit={applyFilters} aria-label="Filter reviews">
        <div className="field">
          <label htmlFor={ids.status}>Status</label>
          <select id={ids.status} name="status" defaultValue={filters.status}>
            <option value="">All (pending first)</option>
            <option value="pending">Pending</option>
            <option value="approved">Approved</option>
            <option value="rejected">Rejected</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.product}>Product id</label>
          <input id={ids.product} name="product" inputMode="numeric" pattern="[0-9]{1,32}" title="Digits only" defaultValue={filters.productId} className="narrow" />
        </div>
        <button>Apply filters</button>
      </form>
      <Announcer message={message} testId="reviews-status" />
      <LoadState loading={loading && !data} error={error} />
      {data && (
        <p role="status" className="muted">
          {data.total === 0 ? 'No reviews match.' : `${data.total} review${data.total === 1 ? '' : 's'}; page ${data.page} of ${pages}.`}
        </p>
      )}
      <ol className="reviews" aria-busy={loading}>
        {data?.data.map((r) => (
          <ReviewItem key={r.id} review={r} busy={busy} onAct={act} onDelete={() => remove(r)} />
        ))}
      </ol>
      {data && pages > 1 && (
        <nav className="row pager" aria-label="Review pages">
          <button type="button" disabled={filters.page <= 1} onClick={() => setFilters({ ...filters, page: filters.page - 1 })}>
            Previous page
          </button>
          <button type="button" disabled={!data.hasMore} onClick={() => setFilters({ ...filters, page: filters.page + 1 })}>
            Next page
          </button>
        </nav>
      )}
      {confirmElement}
    </>
  )
}

function ReviewItem({ review: r, busy, onAct, onDelete }: { review: AdminReview; busy: boolean; onAct(label: string, fn: () => Promise<unknown>): Promise<void>; onDelete(): void }) {
  const { session } = useSession()
  const admin = session.client.reviews.admin
  const [replying, setReplying] = useState(false)
  const replyId = useId()
  const headingId = useId()

  const sendReply = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const body = String(new FormData(e.currentTarget).get('reply') ?? '').trim()
    if (!body) return
    await onAct(`Reply to review ${r.id} saved.`, () => admin.reply(r.id, body))
    setReplying(false)
  }

  return (
    <li className="card review" aria-labelledby={headingId} data-testid={`review-${r.id}`}>
      <div className="review-head">
        <span className={`status ${r.status}`}>{r.status}</span>
        <span className="stars" aria-label={`${r.rating} of 5 stars`}>
          {'★'.repeat(r.rating)}
          <span className="dim">{'★'.repeat(5 - r.rating)}</span>
        </span>
        {r.verifiedPurchase && <span className="badge">verified purchase</span>}
      </div>
      <h3 id={headingId}>{r.title || <span className="muted">(no title)</span>}</h3>
      <p className="review-body">{r.body}</p>
      <p className="muted small">
        {r.customerName}
        {r.customerEmail ? ` <${r.customerEmail}>` : ''} · product <span className="mono">{r.productId}</span> · <When iso={r.createdAt} /> · {r.helpfulCount} found it helpful
      </p>
      {r.replyBody && (
        <blockquote className="reply">
          <p>
            <strong>Your reply</strong> (<When iso={r.repliedAt} />)
          </p>
          <p>{r.replyBody}</p>
        </blockquote>
      )}
      <div className="row">
        {r.status !== 'approved' && (
          <button type="button" className="primary" disabled={busy} onClick={() => onAct(`Review ${r.id} approved.`, () => admin.approve(r.id))}>
            Approve
          </button>
        )}
        {r.status !== 'rejected' && (
          <button type="button" disabled={busy} onClick={() => onAct(`Review ${r.id} rejected.`, () => admin.reject(r.id))}>
            Reject
          </button>
        )}
        <button type="button" aria-expanded={replying} aria-controls={replyId} onClick={() => setReplying(!replying)}>
          {r.replyBody ? 'Edit reply' : 'Reply'}
        </button>
        {r.replyBody && (
          <button type="button" disabled={busy} onClick={() => onAct(`Reply to review ${r.id} removed.`, () => admin.deleteReply(r.id))}>
            Remove reply
          </button>
        )}
        <button type="button" className="danger" disabled={busy} onClick={onDelete}>
          Delete…
        </button>
      </div>
      <form id={replyId} hidden={!replying} onSubmit={sendReply} className="reply-form">
        <label htmlFor={`${replyId}-text`}>Public reply to {r.customerName}</label>
        <textarea id={`${replyId}-text`} name="reply" rows={3} maxLength={5000} required defaultValue={r.replyBody ?? ''} />
        <div className="row">
          <button className="primary" disabled={busy}>
            Publish reply
          </button>
          <button type="button" onClick={() => setReplying(false)}>
            Cancel
          </button>
        </div>
      </form>
    </li>
  )
}
