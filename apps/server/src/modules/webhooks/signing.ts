/**
 * Standard Webhooks signing: `webhook-signature: v1,<base64 HMAC-SHA256>` over
 * `{webhook-id}.{webhook-timestamp}.{body}`, computed by the reference `standardwebhooks`
 * package over the exact bytes sent.
 */
import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'

/** `whsec_` + base64 of 32 random bytes: the form the reference libraries decode. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

export interface SignedHeaders {
  'webhook-id': string
  'webhook-timestamp': string
  'webhook-signature': string
}

export function signatureHeaders(secret: string, messageId: string, body: string, at: Date = new Date()): SignedHeaders {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(messageId, at, body),
  }
}
