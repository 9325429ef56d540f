/**
 * The embedded admin's setup guide (docs/shopify.md, "The setup guide"): its schema and
 * operation doc.
 */
import { Type } from 'typebox'
import { type OperationDocs, Timestamp } from '../../lib/http-schemas.js'

export const PlatformSetup = Type.Object(
  {
    catalog: Type.Object(
      {
        state: Type.Union([Type.Literal('not_started'), Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')], {
          description: '`not_started` until the service knows a product of the shop; `done` once it knows some',
        }),
        products: Type.Integer({ minimum: 0, description: 'Products the service knows of the shop' }),
        updatedAt: Type.Union([Timestamp, Type.Null()], { description: 'When the newest of them was last updated; null with none' }),
      },
      { additionalProperties: false },
    ),
    plan: Type.Object(
      {
        current: Type.Union([Type.Literal('free'), Type.Literal('starter'), Type.Literal('growth'), Type.Literal('scale')], {
          description: "The shop's plan",
        }),
        subscription: Type.Null({ description: "The shop's Shopify app subscription; none yet" }),
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

export const setupOperations: OperationDocs = {
  'GET /v1/admin/platform-setup': {
    operationId: 'getPlatformSetup',
    summary: "Where the shop's setup stands (the embedded admin's setup guide)",
    description:
      "Shopify app mode, admin tokens and Shopify session tokens of a `*.myshopify.com` shop (another shop: 404 NOT_FOUND). The three steps of the embedded admin's setup guide: the catalog (the products the service knows, from Shopify's product webhooks), the plan, and the theme editor link that turns the app embed on.",
    responses: { 200: "Where the shop's setup stands" },
    examples: {
      200: {
        ok: true,
        data: {
          catalog: { state: 'done', products: 42, updatedAt: '2026-11-28T09:30:00.000Z' },
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
