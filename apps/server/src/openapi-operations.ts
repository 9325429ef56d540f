/**
 * The operation docs of every module (each kept in the module's `*.schemas.ts`) and the
 * outbound webhook events: app.ts hands them to plugins/openapi.ts, with the configured
 * platforms' (`Platform.operations`).
 */
import type { OperationDocs } from './lib/http-schemas.js'
import { adminOperations } from './modules/admin/admin.schemas.js'
import { analyticsOperations } from './modules/analytics/analytics.schemas.js'
import { authOperations } from './modules/auth/auth.schemas.js'
import { eventsOperations } from './modules/events/events.schemas.js'
import { channelsOperations } from './modules/notifications/channels.schemas.js'
import { contactsOperations } from './modules/notifications/contacts.schemas.js'
import { opsOperations } from './modules/ops/ops.schemas.js'
import { privacyOperations } from './modules/privacy/privacy.schemas.js'
import { invitationsOperations } from './modules/reviews/invitations.schemas.js'
import { reviewsOperations } from './modules/reviews/reviews.schemas.js'
import { storefrontOperations } from './modules/storefront/storefront.schemas.js'
import { webhookEventsDocument, webhooksOperations } from './modules/webhooks/webhooks.schemas.js'
import { wishlistsOperations } from './modules/wishlists/wishlists.schemas.js'

export const operationDocs: OperationDocs = {
  ...opsOperations,
  ...authOperations,
  ...adminOperations,
  ...webhooksOperations,
  ...channelsOperations,
  ...contactsOperations,
  ...eventsOperations,
  ...wishlistsOperations,
  ...analyticsOperations,
  ...privacyOperations,
  ...reviewsOperations,
  ...invitationsOperations,
  ...storefrontOperations,
}

export const webhookEvents = webhookEventsDocument
