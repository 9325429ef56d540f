/** OpenAPI metadata of the storefront assets (plugins/openapi.ts). */
import type { OperationDocs } from '../../lib/http-schemas.js'

export const storefrontOperations: OperationDocs = {
  'GET /widget.js': {
    operationId: 'getWidgetScript',
    summary: 'The storefront widget script',
    description:
      'The embeddable widget (one script tag; see packages/widget/README.md in the repository), gzipped for clients that accept it, with an `ETag`. No credentials; not rate limited.',
    responses: { 200: 'The script' },
  },
}
