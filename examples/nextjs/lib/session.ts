/**
 * The logged-in customer. This example has no login of its own: every visitor is the customer
 * named by WISHLIST_CUSTOMER_ID (1001, the demo shop's sample customer, by default). In a real
 * storefront, read it from your session (a cookie, your auth library) and never from the
 * request body: the token route mints a token for whoever this function names.
 */
export async function currentCustomerId(): Promise<string> {
  return process.env.WISHLIST_CUSTOMER_ID || '1001'
}
