/** The storefront's products. A real shop reads them from its commerce platform. */
export interface Product {
  id: string
  handle: string
  title: string
  price: string
}

export const PRODUCTS: readonly Product[] = [
  { id: '7001', handle: 'classic-leather-bag', title: 'Classic leather bag', price: '€149' },
  { id: '7002', handle: 'linen-shirt', title: 'Linen shirt', price: '€59' },
  { id: '7003', handle: 'wool-scarf', title: 'Wool scarf', price: '€35' },
  { id: '7004', handle: 'ceramic-mug', title: 'Ceramic mug', price: '€18' },
  { id: '7005', handle: 'rain-jacket', title: 'Rain jacket', price: '€120' },
]

/** The product's title, or its id when the catalog does not know it. */
export const productTitle = (productId: string): string => PRODUCTS.find((p) => p.id === productId)?.title ?? `Product ${productId}`
