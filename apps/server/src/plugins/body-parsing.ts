/**
 * How the API reads request bodies (docs/architecture.md, "A request, in order"): JSON only,
 * as bytes (invalid UTF-8 and other charsets refused, not decoded to U+FFFD), parsed once and
 * scanned once for its depth and for text a backend cannot store (NUL, lone surrogates),
 * which preValidation refuses with the path and query's; any other content type is 415. A
 * route that reads its body otherwise (Shopify's webhooks, form posts) replaces the parsers in
 * its own scope. Registered on the root instance (fastify-plugin) before every route.
 */
import { isUtf8 } from 'node:buffer'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { AppError, invalid } from '../lib/errors.js'
import { findUnstorableText, MAX_JSON_DEPTH, scanBody, type UnstorableText } from '../lib/text.js'

/** The `charset` parameter of a Content-Type, when there is one. */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i
/** A JSON body is UTF-8: no charset, or `utf-8` / `utf8` in any case. */
export function utf8Charset(contentType: string | undefined): boolean {
  if (contentType === undefined || contentType.length === 16) return true // exactly `application/json`
  const charset = CHARSET.exec(contentType)?.[1]
  return charset === undefined || /^utf-?8$/i.test(charset)
}

export const bodyParsingPlugin = fp(
  async (app: FastifyInstance) => {
    // What the JSON parser's one scan of a body found unstorable (rare: set only then).
    const unstorableBodies = new WeakMap<FastifyRequest, UnstorableText>()
    app.addHook('preValidation', (request, _reply, done) => {
      // The path and the query string can only carry a NUL percent-encoded (an HTTP parser
      // refuses a raw one; inject() does not), so their decoded values are searched only then.
      const url = request.url
      const inUrl =
        url.includes('%00') || url.includes('\u0000')
          ? (findUnstorableText(request.params, 'params') ?? findUnstorableText(request.query, 'query'))
          : null
      const found = inUrl ?? unstorableBodies.get(request)
      if (found === undefined || found === null) return done()
      done(invalid([found]))
    })

    // Only JSON bodies: Fastify's built-in text/plain parser would let a text body reach
    // schema validation instead of the documented 415. A route that takes no body ignores a
    // Content-Type sent with an empty one (HTTP wrappers that set `application/json` on every
    // call); a route that takes a body still answers INVALID_JSON or 415 for it.
    app.removeContentTypeParser(['text/plain', 'application/json'])
    const parseJson = app.getDefaultJsonParser('error', 'error')
    const takesNoBody = (request: FastifyRequest, length: number) => length === 0 && request.routeOptions.schema?.body === undefined
    // Bytes, not a string: invalid UTF-8 is refused instead of being decoded to U+FFFD.
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
      if (takesNoBody(request, body.length)) return done(null, undefined)
      if (!utf8Charset(request.headers['content-type']))
        return done(new AppError('UNSUPPORTED_MEDIA_TYPE', 'JSON bodies must be UTF-8 (charset=utf-8 or none)'), undefined)
      if (!isUtf8(body)) return done(new AppError('INVALID_JSON', 'The request body is not valid UTF-8'), undefined)
      parseJson(request, body.toString('utf8'), (err, value) => {
        if (err) return done(err, undefined)
        // One scan per body: its depth, and text a backend cannot store (refused in preValidation).
        const scan = scanBody(value)
        if (scan === 'too deep')
          return done(new AppError('INVALID_JSON', `The request body nests deeper than ${MAX_JSON_DEPTH} levels`), undefined)
        if (scan !== null) unstorableBodies.set(request, scan)
        done(null, value)
      })
    })
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body: Buffer, done) =>
      takesNoBody(request, body.length)
        ? done(null, undefined)
        : done(new AppError('UNSUPPORTED_MEDIA_TYPE', 'Request bodies must be application/json'), undefined),
    )
  },
  { name: 'body-parsing' },
)
