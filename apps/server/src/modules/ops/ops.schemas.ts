/** OpenAPI metadata of the health endpoints (plugins/openapi.ts). */
import type { OperationDocs } from '../../lib/http-schemas.js'

export const opsOperations: OperationDocs = {
  'GET /healthz': {
    operationId: 'getHealth',
    summary: 'Liveness',
    description: 'The process is up. Not rate limited; no credentials.',
    responses: { 200: 'The process is up' },
    examples: { 200: { ok: true, data: { status: 'ok' } } },
  },
  'GET /readyz': {
    operationId: 'getReadiness',
    summary: 'Readiness',
    description:
      'The database (`sqlite` or `postgres`) and Redis (`ok`, or `not configured`) answer. 503 UNAVAILABLE when one does not. `replica`: the read replica (DATABASE_REPLICA_URL) is `serving`, `behind` (more than REPLICA_MAX_LAG_MS behind), `down` or `not configured`; it never makes the service unready (its reads go to the primary meanwhile). Not rate limited; no credentials.',
    responses: { 200: 'Ready' },
    examples: { 200: { ok: true, data: { database: 'sqlite', redis: 'not configured', replica: 'not configured' } } },
  },
}
