/**
 * Form posts of the pages that work with no script (the review form of an invitation, the
 * app proxy's wishlist page): `application/x-www-form-urlencoded`, 64 KiB at most, as a
 * plain object of each field's first value. Added to a route plugin's own scope, beside the
 * JSON-only parsers of plugins/body-parsing.ts.
 */
import type { FastifyInstance } from 'fastify'

const FORM_BODY_LIMIT = 64 * 1024

export function acceptFormBodies(app: FastifyInstance): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_request, body, done) => {
      const out: Record<string, string> = {}
      for (const [k, v] of new URLSearchParams(body as string)) if (!(k in out)) out[k] = v
      done(null, out)
    },
  )
}
