/**
 * The signed opt-out link every notification carries (docs/notifications.md, "Who is notified
 * (consent, opt-out)"): `PUBLIC_BASE_URL/notifications/opt-out/<token>`, where the token
 * names the shop and the owner and is signed with a key of the server's own (HMAC-SHA256,
 * 128 bits kept), so it needs no login and never expires. The key is derived from JWT_SECRET
 * (HKDF-SHA256, its own label): a token of the service's API is never an opt-out token nor
 * the reverse, and every node of a deployment (which shares JWT_SECRET) verifies the links of
 * the others. An opt-out holds for every channel and every e-mail the owner has later.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'
import type { Config } from '../../config.js'
import type { OwnerType } from '../../db/schema.js'
import type { Db } from '../../db/types.js'
import { fill, type PageLocale, type PageStrings } from '../../lib/page-strings.js'
import type { Owner } from '../auth/auth.types.js'
import { escapeHtml, servicePageHtml } from '../../lib/html-text.js'

/** The opt-out page's path (the token follows). */
export const OPT_OUT_PATH = '/notifications/opt-out'

/** The label of the key derived from JWT_SECRET for opt-out links: no other key of the service uses it. */
const KEY_LABEL = 'wishlist notifications opt-out link v1'
const MAC_BYTES = 16

export type OptOutConfig = Pick<Config, 'jwtSecret' | 'publicBaseUrl'>

const keys = new Map<string, Buffer>()
function keyOf(jwtSecret: string): Buffer {
  let key = keys.get(jwtSecret)
  if (key === undefined) {
    key = Buffer.from(hkdfSync('sha256', Buffer.from(jwtSecret, 'utf8'), Buffer.alloc(0), KEY_LABEL, 32))
    keys.set(jwtSecret, key)
  }
  return key
}

const mac = (jwtSecret: string, body: string) => createHmac('sha256', keyOf(jwtSecret)).update(body).digest().subarray(0, MAC_BYTES)

/** The opt-out token of an owner of a shop: `<base64url(shop, owner type, owner id)>.<base64url(mac)>`. */
export function optOutToken(jwtSecret: string, shopId: string, owner: Owner): string {
  const body = Buffer.from(JSON.stringify([shopId, owner.type, owner.id]), 'utf8').toString('base64url')
  return `${body}.${mac(jwtSecret, body).toString('base64url')}`
}

/** The link a notification of the owner carries (`NotificationMessage.optOutUrl`). */
export function optOutUrl(config: OptOutConfig, shopId: string, owner: Owner): string {
  return `${config.publicBaseUrl}${OPT_OUT_PATH}/${optOutToken(config.jwtSecret, shopId, owner)}`
}

/** The shop and owner a token names when its signature holds; undefined otherwise (tampered, truncated, another key's). */
export function readOptOutToken(jwtSecret: string, token: string): { shopId: string; owner: Owner } | undefined {
  const m = /^([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{22})$/.exec(token)
  if (m === null) return undefined
  const [, body = '', sig = ''] = m
  // Compared as text: one signature has one spelling (base64url's unused low bits included).
  const given = Buffer.from(sig, 'utf8')
  const wanted = Buffer.from(mac(jwtSecret, body).toString('base64url'), 'utf8')
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return undefined
  try {
    const value: unknown = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'))
    if (!Array.isArray(value) || value.length !== 3 || !value.every((v) => typeof v === 'string')) return undefined
    const [shopId, type, id] = value as [string, string, string]
    if (type !== 'customer' && type !== 'guest') return undefined
    return { shopId, owner: { type: type as OwnerType, id } }
  } catch {
    return undefined
  }
}

export const optOutsRepo = {
  async isOptedOut(db: Db, shopId: string, owner: Owner): Promise<boolean> {
    const row = await db
      .selectFrom('notification_opt_outs')
      .select('owner_id')
      .where('shop_id', '=', shopId)
      .where('owner_type', '=', owner.type)
      .where('owner_id', '=', owner.id)
      .executeTakeFirst()
    return row !== undefined
  },

  /** Records the opt-out; an owner who opted out before keeps the first time. */
  async optOut(db: Db, shopId: string, owner: Owner, at: number): Promise<void> {
    await db
      .insertInto('notification_opt_outs')
      .values({ shop_id: shopId, owner_type: owner.type, owner_id: owner.id, opted_out_at: at })
      .onConflict((oc) => oc.doNothing())
      .execute()
  },
}

/** What the page shows: the confirm form, the opt-out done, or a link that names nothing. */
export type OptOutPageState = { kind: 'confirm'; shopName: string } | { kind: 'done'; shopName: string } | { kind: 'unknown' }

/** The opt-out page: no script, posts to itself (`action`), in the shopper's language. */
export function optOutPageHtml(state: OptOutPageState, action: string, locale: PageLocale, strings: PageStrings): string {
  const t = (key: keyof PageStrings, shop = '') => escapeHtml(fill(strings[key], { shop }))
  let title: string
  let main: string
  if (state.kind === 'unknown') {
    title = t('optOutUnknownTitle')
    main = `<h1>${title}</h1>\n<p>${t('optOutUnknownText')}</p>`
  } else if (state.kind === 'done') {
    title = t('optOutDoneTitle')
    main = `<h1>${title}</h1>\n<p role="status">${t('optOutDoneText', state.shopName)}</p>`
  } else {
    title = t('optOutTitle')
    main = [
      `<h1>${title}</h1>`,
      `<p>${t('optOutText', state.shopName)}</p>`,
      `<form method="post" action="${escapeHtml(action)}">`,
      `  <button type="submit">${t('optOutConfirm')}</button>`,
      '</form>',
    ].join('\n')
  }
  return servicePageHtml({
    locale,
    title,
    head: [
      '<style>body{font:1rem/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1a1a1a;background:#fff;margin:0}',
      'main{max-width:40rem;margin:2rem auto;padding:0 1.5rem}',
      'button{background:#1a1a1a;color:#fff;border:0;border-radius:4px;font:inherit;min-height:44px;padding:0 1.5rem;cursor:pointer}',
      'button:focus-visible{outline:3px solid #0645ad;outline-offset:2px}</style>',
    ],
    main,
  })
}
