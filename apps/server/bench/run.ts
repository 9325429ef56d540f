/** `npm run bench`: bounded, loopback-only scenarios; each prints its own figures. */
import { benchWebhookDelivery } from './webhook-delivery.js'

await benchWebhookDelivery()
