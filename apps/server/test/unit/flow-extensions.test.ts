/**
 * The wishlist's Shopify Flow extensions (extensions/wishlist-flow-*, docs/shopify.md "Shopify
 * Flow") as Shopify CLI checks them before a deploy, and the channel's trigger map
 * (modules/notifications/flow.ts) held equal to them: what the service sends is what the
 * deployed triggers declare. Every payload the channel builds passes the emulator's copy of
 * Flow's checks, which refuse what Flow refuses.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'smol-toml'
import { describe, expect, it } from 'vitest'
import { NOTIFICATION_SIGNALS, type NotificationMessage, type NotificationSignal } from '../../src/modules/notifications/channel.js'
import {
  FLOW_PAYLOAD_MAX_BYTES,
  FLOW_TRIGGER_FIELD_TYPES,
  FLOW_TRIGGER_TITLES,
  FLOW_TRIGGERS,
  flowPayload,
  flowTriggerSignal,
} from '../../src/modules/notifications/flow.js'
import { FLOW_LIFECYCLE_PATH } from '../../src/platforms/shopify/flow-lifecycle.routes.js'
import { sampleMessage } from '../helpers/notification-rows.js'
import { EXTENSIONS_DIR, FLOW_PAYLOAD_LIMIT_BYTES, flowTriggerDefinitions, flowUserErrors } from '../helpers/shopify-emulator.js'

type Json = Record<string, unknown>
const toml = (folder: string) => parse(readFileSync(join(EXTENSIONS_DIR, folder, 'shopify.extension.toml'), 'utf8')) as Json
const flowFolders = readdirSync(EXTENSIONS_DIR).filter((f) => f.startsWith('wishlist-flow-'))
const triggerFolders = flowFolders.filter((f) => f !== 'wishlist-flow-lifecycle')
const definitions = flowTriggerDefinitions()

/** Shopify CLI's rules of an extension handle. */
const HANDLE = /^[a-zA-Z0-9-]{1,30}$/
/** Shopify CLI's rule of a trigger field key: letters and spaces. */
const FIELD_KEY = /^[a-zA-Z\s]+$/
const REFERENCES = ['customer_reference', 'order_reference', 'product_reference', 'company_reference', 'company_contact_reference']

const message = (signal: NotificationSignal, product: Partial<NotificationMessage['product']> = {}): NotificationMessage =>
  sampleMessage(signal, { product })

describe('the Flow trigger extensions, as Shopify CLI checks them', () => {
  it('are one folder per signal, each one flow_trigger extension whose handle is its folder', () => {
    expect(triggerFolders.sort()).toEqual(
      Object.values(FLOW_TRIGGERS)
        .map((t) => t.handle)
        .sort(),
    )
    for (const folder of triggerFolders) {
      const extensions = toml(folder).extensions as Json[]
      expect(extensions, folder).toHaveLength(1)
      const ext = extensions[0]!
      expect({ folder, type: ext.type, handle: ext.handle }).toEqual({ folder, type: 'flow_trigger', handle: folder })
      expect(HANDLE.test(String(ext.handle)) && !String(ext.handle).startsWith('-') && !String(ext.handle).endsWith('-')).toBe(true)
      expect(typeof ext.name === 'string' && ext.name.length > 0, folder).toBe(true)
      expect(typeof ext.description === 'string' && ext.description.length > 0, folder).toBe(true)
    }
  })

  it('declare only field types Flow takes on a trigger, references without a key, other fields keyed with letters and spaces', () => {
    for (const folder of triggerFolders) {
      const fields = (toml(folder).settings as { fields: Json[] }).fields
      expect(fields.length, folder).toBeGreaterThan(0)
      for (const field of fields) {
        const where = `${folder} ${JSON.stringify(field)}`
        expect(FLOW_TRIGGER_FIELD_TYPES, where).toContain(field.type)
        if (REFERENCES.includes(String(field.type))) {
          // Shopify CLI takes no other property on a commerce object field.
          expect(
            Object.keys(field).filter((k) => !['type', 'description', 'required'].includes(k)),
            where,
          ).toEqual([])
        } else {
          expect(FIELD_KEY.test(String(field.key)), where).toBe(true)
          expect(
            Object.keys(field).filter((k) => !['type', 'key', 'name', 'description', 'required'].includes(k)),
            where,
          ).toEqual([])
        }
      }
      const keys = definitions.get(folder)!.fields.map((f) => f.key)
      expect(new Set(keys).size, folder).toBe(keys.length)
    }
  })

  it('reference the Shopify customer and product on every trigger', () => {
    for (const folder of triggerFolders) {
      const keys = definitions.get(folder)!.fields.map((f) => `${f.key}:${f.type}`)
      expect(keys, folder).toEqual(expect.arrayContaining(['customer_id:customer_reference', 'product_id:product_reference']))
    }
  })

  it("are exactly the channel's trigger map: handles, payload keys, types, in order", () => {
    for (const signal of NOTIFICATION_SIGNALS) {
      const trigger = FLOW_TRIGGERS[signal]
      const deployed = definitions.get(trigger.handle)
      expect(deployed, signal).toBeDefined()
      expect({ signal, fields: trigger.fields }).toEqual({ signal, fields: deployed!.fields })
    }
  })

  it("name each trigger as the channel's titles do, for callbacks that name a trigger by its name", () => {
    const names = Object.fromEntries([...definitions.values()].map((d) => [d.name, flowTriggerSignal(d.handle)]))
    expect(names).toEqual(FLOW_TRIGGER_TITLES)
    for (const [name, signal] of Object.entries(FLOW_TRIGGER_TITLES)) expect(flowTriggerSignal(name)).toBe(signal)
  })

  it("has the lifecycle callback extension at the service's route, and the app asks for the scope customer references need", () => {
    const [lifecycle] = toml('wishlist-flow-lifecycle').extensions as Json[]
    expect(lifecycle?.type).toBe('flow_trigger_lifecycle_callback')
    const url = new URL(String(lifecycle?.url))
    expect([url.protocol, url.pathname]).toEqual(['https:', FLOW_LIFECYCLE_PATH])
    const app = parse(readFileSync(join(EXTENSIONS_DIR, '..', 'shopify.app.toml.example'), 'utf8')) as { access_scopes: { scopes: string } }
    expect(app.access_scopes.scopes.split(',')).toContain('read_customers')
  })

  it('uses the payload limit the emulator holds Flow to', () => {
    expect(FLOW_PAYLOAD_MAX_BYTES).toBe(FLOW_PAYLOAD_LIMIT_BYTES)
  })
})

describe("the channel's payloads against Flow's checks (the emulator's)", () => {
  it('pass for every signal: every declared key, each of its type, references as numeric ids', () => {
    for (const signal of NOTIFICATION_SIGNALS) {
      const payload = flowPayload(message(signal))
      expect({ signal, errors: flowUserErrors(definitions, FLOW_TRIGGERS[signal].handle, payload) }).toEqual({ signal, errors: [] })
      expect(payload.customer_id).toBe(7001234567890)
      expect(payload.product_id).toBe(8123456789012)
      expect(payload['Variant ID']).toBe('45012345678901')
      expect(payload['Opt out URL']).toBe('https://wishlist.example.com/proxy/notifications/opt-out?token=abc')
    }
    expect(flowPayload(message('price_drop'))).toMatchObject({ Price: 29.9, 'Previous price': 39, Currency: 'EUR' })
    expect(flowPayload(message('low_stock'))).toMatchObject({ 'Inventory quantity': 3 })
  })

  it('send unknown text as empty, and cannot fire a trigger whose decimal, URL or reference it lacks', () => {
    const unknown = flowPayload(message('back_in_stock', { variantId: null, url: null, currency: null }))
    expect(unknown).toMatchObject({ 'Variant ID': '', 'Product URL': '', Currency: '' })
    expect(flowUserErrors(definitions, 'wishlist-flow-back-in-stock', unknown)).toEqual([])
    expect(() => flowPayload(message('price_drop', { previousPrice: null }))).toThrow(/Previous price/)
    expect(() => flowPayload({ ...message('reminder'), optOutUrl: '/relative' })).toThrow(/Opt out URL/)
    expect(() => flowPayload({ ...message('reminder'), shopper: { customerId: 'guest-1', email: '' } })).toThrow(/customer_id/)
    // A GID is Shopify's id too.
    expect(flowPayload({ ...message('reminder'), shopper: { customerId: 'gid://shopify/Customer/42', email: '' } }).customer_id).toBe(42)
  })

  it('are refused by the emulator as Flow refuses them: unknown handle or key, missing key, wrong type, too large', () => {
    const handle = 'wishlist-flow-price-drop'
    const good = flowPayload(message('price_drop'))
    expect(flowUserErrors(definitions, 'wishlist-flow-nope', good)[0]?.field).toEqual(['handle'])
    expect(flowUserErrors(definitions, handle, { ...good, Colour: 'red' }).map((e) => e.field)).toEqual([['payload', 'Colour']])
    const { Price: _price, ...missing } = good
    expect(flowUserErrors(definitions, handle, missing).map((e) => e.message)).toEqual(['Price is missing'])
    expect(flowUserErrors(definitions, handle, { ...good, Price: '29.90' }).map((e) => e.message)).toEqual(['Price must be a number'])
    expect(flowUserErrors(definitions, handle, { ...good, customer_id: '7001234567890' }).map((e) => e.field)).toEqual([
      ['payload', 'customer_id'],
    ])
    expect(flowUserErrors(definitions, handle, { ...good, 'Opt out URL': 'not a url' }).map((e) => e.field)).toEqual([
      ['payload', 'Opt out URL'],
    ])
    expect(flowUserErrors(definitions, handle, { ...good, 'Product URL': 'x'.repeat(FLOW_PAYLOAD_LIMIT_BYTES) })[0]?.message).toMatch(
      /over the 50000 bytes limit/,
    )
    expect(() => flowPayload(message('price_drop', { url: 'x'.repeat(FLOW_PAYLOAD_MAX_BYTES) }))).toThrow(/beyond Flow's 50000/)
  })
})
