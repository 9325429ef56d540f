/**
 * The embedded admin's setup guide (docs/shopify.md, "The setup guide"): its schema and
 * operation doc.
 */
import { Type } from 'typebox'
import { type OperationDocs, Timestamp } from '../../lib/http-schemas.js'
import { ShopifySubscription } from './billing.schemas.js'

/** Where the shop's catalog stands: what the service knows, and its sync from Shopify. */
export const CatalogStatus = Type.Object(
  {
    state: Type.Union([Type.Literal('not_started'), Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')], {
      description:
        "The catalog sync's state: `not_started` until its first run, `running` while the service reads the shop's products from Shopify, then `done` or `failed` (with `sync.error`)",
    }),
    products: Type.Integer({ minimum: 0, description: 'Products the service knows of the shop' }),
    updatedAt: Type.Union([Timestamp, Type.Null()], { description: 'When the newest of them was last updated; null with none' }),
    sync: Type.Union(
      [
        Type.Object(
          {
            productsRead: Type.Integer({ minimum: 0, description: 'Products read from Shopify so far by the current (or last) run' }),
            productsChanged: Type.Integer({
              minimum: 0,
              description: 'Of those, the products it added or brought up to date (0 when the catalog already held them)',
            }),
            startedAt: Timestamp,
            finishedAt: Type.Union([Timestamp, Type.Null()], { description: 'Null while it runs' }),
            error: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed (`failed`); null otherwise' }),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'The current or last run of the catalog sync; null before the first' },
    ),
  },
  { additionalProperties: false },
)

export const PlatformSetup = Type.Object(
  {
    catalog: CatalogStatus,
    plan: Type.Object(
      {
        current: Type.Union([Type.Literal('free'), Type.Literal('starter'), Type.Literal('growth'), Type.Literal('scale')], {
          description: "The shop's plan",
        }),
        subscription: Type.Union([ShopifySubscription, Type.Null()], {
          description:
            "The shop's newest Shopify app subscription, as last confirmed (the plan page: `GET /v1/platforms/shopify/billing`); null before the first",
        }),
      },
      { additionalProperties: false },
    ),
    appEmbed: Type.Object(
      {
        editorUrl: Type.Union([Type.String({ format: 'uri' }), Type.Null()], {
          description:
            "The shop's theme editor with the wishlist's app embed ready to turn on (`https://{shop}/admin/themes/current/editor?context=apps&activateAppId={SHOPIFY_API_KEY}/app-embed`); null while SHOPIFY_API_KEY is unset",
        }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
)

const SYNCED_CATALOG = {
  state: 'done',
  products: 42,
  updatedAt: '2026-11-28T09:30:00.000Z',
  sync: {
    productsRead: 42,
    productsChanged: 42,
    startedAt: '2026-11-28T09:29:58.000Z',
    finishedAt: '2026-11-28T09:30:00.000Z',
    error: null,
  },
}

export const setupOperations: OperationDocs = {
  'POST /v1/admin/platform-setup/catalog-sync': {
    operationId: 'syncShopifyCatalog',
    summary: "Reads the shop's catalog from Shopify again (the setup guide's catalog sync)",
    description:
      "Shopify app mode, admin tokens and Shopify session tokens of a `*.myshopify.com` shop (another shop: 404 NOT_FOUND). Starts the catalog sync in the background and answers 202 with its state: every product's id, handle, title and variants (price, inventory) read from Shopify's Admin API in one bulk operation and written as the products webhooks write them. A product the service already holds as Shopify has it, or holds newer (a later webhook), is left as it is: a second sync changes nothing and signals nothing; a product first seen only sets its baseline. While a sync runs, a second request answers the running one. Needs the shop's Admin API access, granted when the merchant first opens the app in Shopify admin: without it, 403 FORBIDDEN. Follow it with `GET /v1/admin/platform-setup` (`catalog`).",
    responses: { 202: 'The sync started, or the one already running' },
    examples: {
      202: {
        ok: true,
        data: {
          state: 'running',
          products: 0,
          updatedAt: null,
          sync: { productsRead: 0, productsChanged: 0, startedAt: '2026-11-28T09:29:58.000Z', finishedAt: null, error: null },
        },
      },
    },
  },
  'GET /v1/admin/platform-setup': {
    operationId: 'getPlatformSetup',
    summary: "Where the shop's setup stands (the embedded admin's setup guide)",
    description:
      "Shopify app mode, admin tokens and Shopify session tokens of a `*.myshopify.com` shop (another shop: 404 NOT_FOUND). The three steps of the embedded admin's setup guide: the catalog (the products the service knows and its sync from Shopify, which runs after the shop's first token exchange and on demand: `POST /v1/admin/platform-setup/catalog-sync`), the plan, and the theme editor link that turns the app embed on.",
    responses: { 200: "Where the shop's setup stands" },
    examples: {
      200: {
        ok: true,
        data: {
          catalog: SYNCED_CATALOG,
          plan: { current: 'free', subscription: null },
          appEmbed: {
            editorUrl:
              'https://example.myshopify.com/admin/themes/current/editor?context=apps&activateAppId=0123456789abcdef0123456789abcdef/app-embed',
          },
        },
      },
    },
  },
}
