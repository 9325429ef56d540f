/**
 * The SDK's hand-written parts cannot drift from the OpenAPI document (openapi.json, which
 * openapi-fresh.test.ts keeps equal to the server's): the error codes are the document's,
 * and each method's result is the document's answer of its operation. The type checks run
 * in `npm run typecheck` (tsconfig.test.json), the value checks here.
 */
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, expectTypeOf, test } from 'vitest'
import type { components } from '../src/generated/openapi.js'
import { CLIENT_ERROR_CODES, type KnownErrorCode, SERVER_ERROR_CODES, type WishlistClient } from '../src/index.js'
import type { AdminReview, Data, Review, ReviewDetail } from '../src/types.js'

const document = JSON.parse(readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), '../openapi.json'), 'utf8')) as {
  components: { schemas: Record<string, { properties: { error: { properties: { code: { anyOf: { enum: string[] }[] } } } } }> }
}
const documentedCodes = (schema: string) =>
  document.components.schemas[schema]?.properties.error.properties.code.anyOf.flatMap((c) => c.enum) ?? []

type DocumentedCode = components['schemas']['ErrorEnvelope']['error']['code']

describe('error codes', () => {
  test('KnownErrorCode is every code the document names, plus the two the SDK gives itself', () => {
    expect([...SERVER_ERROR_CODES].sort()).toEqual(documentedCodes('ErrorEnvelope').sort())
    expect([...SERVER_ERROR_CODES].sort()).toEqual(documentedCodes('ReviewsError').sort())
    expect(SERVER_ERROR_CODES).toEqual(expect.arrayContaining(['REQUEST_TIMEOUT', 'HEADERS_TOO_LARGE', 'METHOD_NOT_ALLOWED']))
    expect(CLIENT_ERROR_CODES.filter((c) => (SERVER_ERROR_CODES as readonly string[]).includes(c))).toEqual([])
    expectTypeOf<DocumentedCode | (typeof CLIENT_ERROR_CODES)[number]>().toEqualTypeOf<KnownErrorCode>()
  })
})

describe("results are the document's answers", () => {
  test('reviews.get is the public view or, for an admin token, the moderation view; reviews.admin.get the moderation view', () => {
    type Get = Awaited<ReturnType<WishlistClient['reviews']['get']>>
    type AdminGet = Awaited<ReturnType<WishlistClient['reviews']['admin']['get']>>
    expectTypeOf<Get>().toEqualTypeOf<Data<'get /api/v1/reviews/{id}'>>()
    expectTypeOf<Get>().toEqualTypeOf<ReviewDetail>()
    expectTypeOf<AdminGet>().toEqualTypeOf<AdminReview>()
    // An admin caller reads the moderation fields without a cast once it narrows on `status`.
    expectTypeOf<Extract<Get, { status: string }>>().toHaveProperty('customerEmail')
    expectTypeOf<AdminReview>().toMatchTypeOf<Get>()
    expectTypeOf<Review>().toMatchTypeOf<Get>()
    expect(true).toBe(true)
  })
})
