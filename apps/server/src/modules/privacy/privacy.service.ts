/**
 * Privacy requests and the shop's export (docs/api.md, "Privacy and export"): everything held about one
 * customer as one JSON document, its erasure in one transaction, and every item of the
 * shop as CSV, streamed in keyset pages (constant memory, no connection held between pages).
 * Both exports go through the export gate (lib/export-gate.ts): two at once per shop, half
 * the connection pool at most for their queries.
 */
import { randomBytes } from 'node:crypto'
import type { Static } from 'typebox'
import { primaryReads, type Reads } from '../../db/replica.js'
import type { Db } from '../../db/types.js'
import { csvRecord } from '../../lib/csv.js'
import { createExportGate, type ExportGate } from '../../lib/export-gate.js'
import { isoMillis, now } from '../../lib/time.js'
import type { Owner, RequestContext } from '../auth/auth.types.js'
import { invitationView, type ReviewUrlOf } from '../reviews/invitations.service.js'
import { normalizeEmail } from '../reviews/purchases.js'
import { adminView } from '../reviews/reviews.service.js'
import { SHARED_PATH } from '../wishlists/share.service.js'
import { DEFAULT_LIST_ID, DEFAULT_LIST_NAME } from '../wishlists/wishlists.schemas.js'
import { applyPendingFacts, applyPendingFactsIn, syncHoldings } from '../analytics/facts.js'
import { eraseCustomerFromWebhooks } from '../webhooks/customer-erasure.js'
import { eraseCustomerFromNotifications } from '../notifications/customer-erasure.js'
import { OWNER_TABLES, type OwnerTable, privacyRepo } from './privacy.repo.js'
import type { ErasedCounts as ErasedCountsSchema } from './privacy.schemas.js'

/** The CLI has no request; it passes `{shop}` alone. */
export type PrivacyContext = Pick<RequestContext, 'shop'>

export interface CustomerRequest {
  /** A bare customer id (already normalized from digits or a GID). */
  customerId: string
  /** An extra address (the merchant's word) whose reviews, purchases and invitations nothing ties to the customer id. */
  email?: string | undefined
}

type ErasedCounts = Static<typeof ErasedCountsSchema>

// The new columns end with two never empty (a row never ends with an empty cell).
export const CSV_HEADER = [
  'customer_id',
  'wishlist_id',
  'list_name',
  'product_id',
  'variant_id',
  'handle',
  'added_at',
  'note',
  'purchased_at',
  'quantity',
  'priority',
] as const

/** Bytes of CSV gathered before one chunk is handed to the response stream. */
const CSV_CHUNK_CHARS = 64 * 1024

export function createPrivacyService(deps: {
  db: Db
  reads?: Reads
  publicBaseUrl: string
  reviewUrl: ReviewUrlOf
  exportGate?: ExportGate
}) {
  const { db } = deps
  const reads = deps.reads ?? primaryReads(db)
  const gate = deps.exportGate ?? createExportGate({ connections: 5 })
  const q = <T>(run: () => Promise<T>): Promise<T> => gate.query(run)
  const customer = (id: string): Owner => ({ type: 'customer', id })

  /**
   * The customer's addresses: `all` (those its orders gave, and the merchant's `email`) covers
   * purchases and invitations; reviews carry typed addresses, so they are matched by the
   * merchant's `email` alone (`named`), beside the reviews linked to the customer.
   */
  async function attributedEmails(executor: Db, shopId: string, req: CustomerRequest): Promise<{ all: string[]; named: string[] }> {
    const known = await privacyRepo.emailsOf(executor, shopId, req.customerId)
    const named = req.email ? [normalizeEmail(req.email)].filter(Boolean) : []
    return { all: [...new Set([...known, ...named])].sort(), named }
  }

  return {
    /**
     * Takes one of the shop's two export places (429 RATE_LIMITED with Retry-After when both
     * are taken); the function returned gives it back. Routes hold it for the whole answer.
     */
    enterExport: (shopId: string): Promise<() => void> => gate.enter(shopId),

    /**
     * Everything held about the customer; a customer with nothing held gets the empty
     * structure. One short query after another (one connection at a time, within the
     * exports' share of the pool), built in memory: a slow reader holds no connection.
     * Read from the read replica once it has replayed everything the primary holds (after
     * the pending facts are applied there), else from the primary: the export is as exact as
     * the primary's.
     */
    async exportCustomer(ctx: PrivacyContext, req: CustomerRequest) {
      const shopId = ctx.shop.id
      const owner = customer(req.customerId)
      await q(() => applyPendingFacts(deps.db, shopId)) // the analytics events of the customer's latest writes too
      const { db } = await reads.caughtUp()
      const emails = await q(() => attributedEmails(db, shopId, req))
      const ownerRow = await q(() => privacyRepo.owner(db, shopId, owner))
      const listRows = await q(() => privacyRepo.lists(db, shopId, owner))
      const items = await q(() => privacyRepo.items(db, shopId, owner))
      const links = await q(() => privacyRepo.shareLinks(db, shopId, owner))
      const reviews = await q(() => privacyRepo.reviews(db, shopId, req.customerId, emails.named))
      const votes = await q(() => privacyRepo.votes(db, shopId, req.customerId))
      const purchases = await q(() => privacyRepo.purchases(db, shopId, req.customerId, emails.all))
      const invitations = await q(() => privacyRepo.invitations(db, shopId, req.customerId, emails.all))
      const events = await q(() => privacyRepo.analyticsEvents(db, shopId, owner))
      const contact = await q(() => privacyRepo.notificationContact(db, shopId, owner))
      const optOut = await q(() => privacyRepo.notificationOptOut(db, shopId, owner))
      const notifications = await q(() => privacyRepo.notifications(db, shopId, owner))

      // The default list exists without a row (a row appears when it is renamed).
      const defaultRow = listRows.find((r) => r.id === DEFAULT_LIST_ID)
      const listMeta: { id: string; name: string; created_at: number; updated_at: number }[] = []
      if (ownerRow || defaultRow || items.some((i) => i.list_id === DEFAULT_LIST_ID)) {
        const createdAt = ownerRow?.created_at ?? defaultRow?.created_at ?? 0
        listMeta.push({
          id: DEFAULT_LIST_ID,
          name: defaultRow?.name ?? DEFAULT_LIST_NAME,
          created_at: createdAt,
          updated_at: defaultRow?.updated_at ?? createdAt,
        })
      }
      for (const r of listRows) if (r.id !== DEFAULT_LIST_ID) listMeta.push(r)

      const lists = listMeta.map((l) => {
        const own = items.filter((i) => i.list_id === l.id)
        return {
          wishlistId: l.id,
          name: l.name,
          createdAt: isoMillis(l.created_at),
          updatedAt: isoMillis(l.updated_at),
          itemCount: own.length,
          items: own.map((i) => ({
            productId: i.product_id,
            variantId: i.variant_id,
            handle: i.handle,
            metadata: i.metadata === null ? null : (JSON.parse(i.metadata) as Record<string, unknown>),
            addedAt: isoMillis(i.added_at),
            quantity: i.quantity,
            note: i.note,
            priority: i.priority,
            purchasedAt: i.purchased_at === null ? null : isoMillis(Number(i.purchased_at)),
          })),
        }
      })

      return {
        generatedAt: isoMillis(now()),
        customerId: req.customerId,
        emails: emails.all,
        wishlistOwner: ownerRow
          ? { itemCount: ownerRow.item_count, createdAt: isoMillis(ownerRow.created_at), updatedAt: isoMillis(ownerRow.updated_at) }
          : null,
        lists,
        shareLinks: links.map((s) => ({
          token: s.token,
          shareUrl: `${deps.publicBaseUrl}${SHARED_PATH}${s.token}`,
          wishlistId: s.list_id,
          createdAt: isoMillis(s.created_at),
          expiresAt: isoMillis(s.expires_at),
          revokedAt: s.revoked_at === null ? null : isoMillis(s.revoked_at),
        })),
        reviews: reviews.map((r) => adminView(r)),
        helpfulVotes: votes.map((v) => ({ reviewId: Number(v.review_id), createdAt: isoMillis(v.created_at) })),
        purchases: purchases.map((p) => ({
          productId: p.product_id,
          identity: p.buyer.startsWith('email:') ? ('email' as const) : ('customer' as const),
          customerId: p.customer_id,
          email: p.email,
          createdAt: isoMillis(p.created_at),
        })),
        reviewInvitations: invitations.map((i) => invitationView(i, ctx.shop.domain, deps.reviewUrl)),
        analyticsEvents: events.map((e) => ({
          type: e.type,
          productId: e.product_id === '' ? null : e.product_id,
          occurredAt: isoMillis(e.occurred_at),
        })),
        notificationContact: contact
          ? {
              email: contact.email,
              source: contact.source,
              consentText: contact.consent_text,
              consentedAt: isoMillis(Number(contact.consented_at)),
            }
          : null,
        notificationOptOut: optOut ? { optedOutAt: isoMillis(Number(optOut.opted_out_at)) } : null,
        notifications: notifications.map((n) => ({
          signal: n.signal,
          productId: n.product_id,
          variantId: n.variant_id,
          state: n.state,
          reason: n.reason,
          createdAt: isoMillis(Number(n.created_at)),
          deliveries: n.deliveries.map((d) => ({
            channel: d.channel,
            state: d.state,
            sentAt: d.sent_at === null ? null : isoMillis(Number(d.sent_at)),
          })),
        })),
      }
    },

    /**
     * Erases the customer in ONE transaction: wishlist rows deleted (share links with them, so
     * the public read 404s at once), reviews anonymized, helpful-vote rows, purchases and
     * review invitations deleted, analytics events pseudonymized, webhook events waiting to
     * be sent cancelled or rewritten without them, their notifications and notification
     * contact deleted (with a Klaviyo profile deletion queued when the shop has Klaviyo).
     * Idempotent: a second call counts zeros.
     */
    async eraseCustomer(ctx: PrivacyContext, req: CustomerRequest): Promise<ErasedCounts> {
      const shopId = ctx.shop.id
      const owner = customer(req.customerId)
      const at = now()
      // Not derived from the customer id: nothing maps the pseudonym back to the person.
      const pseudonym = `erased_${randomBytes(12).toString('base64url')}`
      return db.transaction().execute(async (trx) => {
        // Lock the owner row first, as every wishlist writer does, so no add slips in between.
        const ownerRow = await privacyRepo.owner(trx, shopId, owner, { lock: true })
        // Facts still pending would reach the analytics tables after the pseudonymization,
        // under the customer's own id.
        await applyPendingFactsIn(trx, shopId)
        const lists = await privacyRepo.lists(trx, shopId, owner)
        const emails = await attributedEmails(trx, shopId, req)

        const rows: Partial<Record<OwnerTable, number>> = {}
        for (const [table, action] of Object.entries(OWNER_TABLES) as [OwnerTable, 'delete' | 'pseudonymize'][]) {
          rows[table] =
            action === 'delete'
              ? await privacyRepo.deleteOwnerRows(trx, shopId, table, owner)
              : await privacyRepo.pseudonymizeOwnerRows(trx, shopId, table, owner, pseudonym)
        }
        // The customer holds nothing any more: top-products and product stats ("owners that
        // now hold it") drop them, while the daily rollups keep their counts.
        await syncHoldings(trx, shopId, owner.type, owner.id)
        // Releasing those holdings recorded when they ended (attribution's look-back): not kept for an erased customer.
        await privacyRepo.deleteOwnerRows(trx, shopId, 'analytics_releases', owner)
        // Their notifications and contact go; a Klaviyo profile deletion is queued (the opt-out stays).
        await eraseCustomerFromNotifications(trx, shopId, req.customerId, at)
        return {
          wishlists: (ownerRow ? 1 : 0) + lists.filter((l) => l.id !== DEFAULT_LIST_ID).length,
          items: rows.wishlist_items ?? 0,
          shareLinks: rows.share_links ?? 0,
          reviewsAnonymized: await privacyRepo.anonymizeReviews(trx, shopId, req.customerId, emails.named, at),
          helpfulVotes: await privacyRepo.deleteVotes(trx, shopId, req.customerId),
          purchases: await privacyRepo.deleteOrderRows(trx, shopId, 'purchases', req.customerId, emails.all),
          reviewInvitations: await privacyRepo.deleteOrderRows(trx, shopId, 'review_invitations', req.customerId, emails.all),
          analyticsEventsPseudonymized: rows.analytics_events ?? 0,
          webhookDeliveries: await eraseCustomerFromWebhooks(trx, shopId, req.customerId, at),
        }
      })
    },

    /**
     * The shop's items as CSV chunks (header first), generated page by page as the consumer
     * pulls: with `Readable.from()` the next page is read only when the socket drains, and
     * between pages no connection is held. Rows written during the export may or may not be
     * in it (each page is its own query). Guests are not customers: their rows have an
     * empty customer_id. From the read replica when it keeps up as the export starts (it may
     * lag, as the pages themselves do), else the primary; an export stays where it started.
     */
    async *csv(ctx: PrivacyContext): AsyncGenerator<string> {
      let chunk = csvRecord(CSV_HEADER)
      for await (const batch of privacyRepo.exportRows(reads.reader().db, ctx.shop.id, q)) {
        for (const r of batch) {
          chunk += csvRecord([
            r.owner_type === 'customer' ? r.owner_id : '',
            r.list_id,
            r.list_name ?? (r.list_id === DEFAULT_LIST_ID ? DEFAULT_LIST_NAME : ''),
            r.product_id,
            r.variant_id,
            r.handle,
            isoMillis(Number(r.added_at)),
            r.note,
            r.purchased_at === null ? null : isoMillis(Number(r.purchased_at)),
            String(r.quantity),
            r.priority,
          ])
        }
        if (chunk.length >= CSV_CHUNK_CHARS) {
          yield chunk
          chunk = ''
        }
      }
      if (chunk) yield chunk
    },
  }
}

export type PrivacyService = ReturnType<typeof createPrivacyService>
