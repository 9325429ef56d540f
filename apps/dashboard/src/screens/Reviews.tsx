/** Review moderation: the queue (pending first), filters, approve, reject, reply, delete. */
import type { AdminReviewPage, AdminReviewQuery } from 'wishlist-service-sdk'
import { type FormEvent, useEffect, useId, useRef, useState } from 'react'
import { Announcer, LoadState, type RunOptions, Stars, useAction, useConfirm, useFocusRescue, useLoad, useSession, When } from '../ui.js'

type Status = NonNullable<AdminReviewQuery['status']>
type AdminReview = AdminReviewPage['data'][number]
const PER_PAGE = 20
/** What the API accepts as a product id: digits, or a platform GID of a product. */
const PRODUCT_ID_PATTERN = '[0-9]{1,32}|gid://[A-Za-z]+/Product/[0-9]{1,32}'

/** Runs a moderation call; resolves true when it succeeded (the list is then reloaded). */
type Act = (label: string, fn: () => Promise<unknown>, options?: Pick<RunOptions, 'onError'>) => Promise<boolean>

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
  // A review that leaves the list (deleted, or moderated out of the status filter) takes its
  // focused button along: focus moves to the summary line.
  const rescue = useFocusRescue<HTMLParagraphElement>([data])
  const pages = data ? Math.max(1, Math.ceil(data.total / PER_PAGE)) : 1
  const pastEnd = data !== undefined && !loading && filters.page > pages

  // After the last reviews of the last page leave, the page asked for is past the end: show
  // the new last page (page 1 when nothing is left) rather than an empty one.
  useEffect(() => {
    if (pastEnd) setFilters((f) => ({ ...f, page: pages }))
  }, [pastEnd, pages])

  const applyFilters = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget)
    setFilters({ status: String(form.get('status') ?? '') as Status | '', productId: String(form.get('product') ?? '').trim(), page: 1 })
  }

  const act: Act = async (label, fn, options = {}) => {
    const done = await run(
      async () => {
        await fn()
        return true
      },
      label,
      {
        ...options,
        // Deleted elsewhere: the reload drops it from the list.
        onNotFound: () => {
          rescue.arm()
          reload()
          return 'That review no longer exists (it was deleted elsewhere); the list was reloaded.'
        },
      },
    )
    if (!done) return false
    rescue.arm()
    reload()
    return true
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
          <input
            id={ids.product}
            name="product"
            pattern={PRODUCT_ID_PATTERN}
            title="The product's number (digits), or its platform GID such as gid://shopify/Product/123"
            spellCheck={false}
            defaultValue={filters.productId}
            className="mono product-filter"
          />
        </div>
        <button>Apply filters</button>
      </form>
      <Announcer message={message} testId="reviews-status" />
      <LoadState loading={loading && !data} error={error} />
      {data && (
        <p role="status" className="muted" ref={rescue.target} tabIndex={-1} data-testid="reviews-summary">
          {pastEnd || data.page > pages
            ? ''
            : data.total === 0
              ? filters.status || filters.productId
                ? 'No reviews match.'
                : 'No reviews yet.'
              : `${data.total} review${data.total === 1 ? '' : 's'}; page ${data.page} of ${pages}.`}
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

function ReviewItem({ review: r, busy, onAct, onDelete }: { review: AdminReview; busy: boolean; onAct: Act; onDelete(): void }) {
  const { session } = useSession()
  const admin = session.client.reviews.admin
  const [replying, setReplying] = useState(false)
  const [draft, setDraft] = useState('')
  const [replyError, setReplyError] = useState<string | undefined>()
  const replyId = useId()
  const headingId = useId()
  const textRef = useRef<HTMLTextAreaElement>(null)
  // Approve, Reject and Remove reply go away once they have acted: focus moves to the
  // Reply / Edit reply button, which is always there.
  const rescue = useFocusRescue<HTMLButtonElement>([r])

  useEffect(() => {
    if (replying) textRef.current?.focus()
  }, [replying])

  // The box opens with the current reply when there is one (editing), empty otherwise: its
  // text is state set on each opening, so a removed reply is not offered again.
  const openReply = () => {
    setDraft(r.replyBody ?? '')
    setReplyError(undefined)
    setReplying(true)
  }
  const closeReply = () => {
    setReplying(false)
    setReplyError(undefined)
    rescue.target.current?.focus()
  }

  const moderate = async (label: string, fn: () => Promise<unknown>) => {
    if (await onAct(label, fn)) rescue.arm()
  }

  const sendReply = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const body = draft.trim()
    if (!body) {
      setReplyError('Not published: the reply is empty (spaces alone are not a reply). Write some text first.')
      textRef.current?.focus()
      return
    }
    setReplyError(undefined)
    // On failure the box stays open with the text, and the error shows under it.
    const ok = await onAct(`Reply to review ${r.id} saved.`, () => admin.reply(r.id, body), {
      onError: (text) => {
        setReplyError(`Not published: ${text}`)
        return true
      },
    })
    if (ok) closeReply()
    else textRef.current?.focus()
  }

  return (
    <li className="card review" aria-labelledby={headingId} data-testid={`review-${r.id}`}>
      <div className="review-head">
        <span className={`status ${r.status}`}>{r.status}</span>
        <Stars rating={r.rating} />
        <span className={r.verifiedPurchase ? 'badge' : 'badge unverified'} data-testid="verification">
          {r.verifiedPurchase
            ? `verified purchase: ${r.verifiedBy === 'invitation' ? 'review invitation' : "customer's order"}`
            : 'not verified'}
        </span>
      </div>
      <h3 id={headingId}>{r.title || <span className="muted">(no title)</span>}</h3>
      <p className="review-body">{r.body}</p>
      <p className="muted small">
        {r.customerName}
        {r.customerEmail ? ` <${r.customerEmail}>` : ''} · product <span className="mono">{r.productId}</span> · <When iso={r.createdAt} />{' '}
        · {r.helpfulCount} found it helpful
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
          <button
            type="button"
            className="primary"
            disabled={busy}
            onClick={() => moderate(`Review ${r.id} approved.`, () => admin.approve(r.id))}
          >
            Approve
          </button>
        )}
        {r.status !== 'rejected' && (
          <button type="button" disabled={busy} onClick={() => moderate(`Review ${r.id} rejected.`, () => admin.reject(r.id))}>
            Reject
          </button>
        )}
        <button
          type="button"
          ref={rescue.target}
          aria-expanded={replying}
          aria-controls={replyId}
          onClick={() => (replying ? closeReply() : openReply())}
        >
          {r.replyBody ? 'Edit reply' : 'Reply'}
        </button>
        {r.replyBody && (
          <button type="button" disabled={busy} onClick={() => moderate(`Reply to review ${r.id} removed.`, () => admin.deleteReply(r.id))}>
            Remove reply
          </button>
        )}
        <button type="button" className="danger" disabled={busy} onClick={onDelete}>
          Delete…
        </button>
      </div>
      <form id={replyId} hidden={!replying} onSubmit={sendReply} className="reply-form" noValidate>
        <label htmlFor={`${replyId}-text`}>Public reply to {r.customerName}</label>
        <textarea
          id={`${replyId}-text`}
          ref={textRef}
          name="reply"
          rows={3}
          maxLength={5000}
          required
          value={draft}
          onChange={(e) => setDraft(e.currentTarget.value)}
          aria-invalid={replyError ? true : undefined}
          aria-describedby={`${replyId}-error`}
        />
        <p id={`${replyId}-error`} role="alert" className={replyError ? 'msg error' : 'msg'}>
          {replyError ?? ''}
        </p>
        <div className="row">
          <button className="primary" disabled={busy}>
            Publish reply
          </button>
          <button type="button" onClick={closeReply}>
            Cancel
          </button>
        </div>
      </form>
    </li>
  )
}
