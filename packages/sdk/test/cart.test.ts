import { expect, test } from 'vitest'
import { toCartLines } from '../src/index.js'

test('one cart line per known variant, in list order, with Shopify GIDs for the Storefront API', () => {
  expect(
    toCartLines([
      { productId: '1', variantId: '11' },
      { productId: '2', variantId: null },
      { productId: '3', variantId: '31', quantity: 2 },
    ]),
  ).toEqual([
    { variantId: '11', merchandiseId: 'gid://shopify/ProductVariant/11', quantity: 1 },
    { variantId: '31', merchandiseId: 'gid://shopify/ProductVariant/31', quantity: 2 },
  ])
})

test('the same variant twice (two lists) is one line with the quantities summed; odd quantities count as 1', () => {
  expect(
    toCartLines([
      { productId: '1', variantId: '11', quantity: 2 },
      { productId: '1', variantId: '11', quantity: 0 },
      { productId: '1', variantId: '11', quantity: 1.5 },
      { productId: '4', variantId: '41', quantity: null },
    ]),
  ).toEqual([
    { variantId: '11', merchandiseId: 'gid://shopify/ProductVariant/11', quantity: 4 },
    { variantId: '41', merchandiseId: 'gid://shopify/ProductVariant/41', quantity: 1 },
  ])
  expect(toCartLines([])).toEqual([])
})
