/**
 * The guest's wishlist page, a chunk the first script loads when the page has a
 * `[data-wishlist-guest-list]` container (the Shopify app proxy's wishlist page renders a
 * logged-in shopper's list itself; a guest's list lives under the browser's guest id).
 * Renders the same markup as the server-rendered list: each item with image, title and price
 * (from Shopify's `/products/{handle}.js`, or the ids when the product is unknown), add to
 * cart, remove, then "add all to cart" (plain `POST /cart/add` forms) and share. A gift
 * list's item shows its quantity, note and purchased state; the cart forms add the saved
 * quantity, and "add all to cart" leaves out what was already purchased. A load, remove or
 * share that fails says so in text, with the reason, in the page's language.
 */
import { type Kit, type Mount, register } from './kit.js'
import { enPage } from './strings.generated.js'

interface Item {
  productId: string
  variantId: string | null
  handle?: string
  quantity?: number
  note?: string | null
  purchasedAt?: string | null
}
interface Product {
  title: string
  handle: string
  featured_image?: string | null
  variants: Array<{ id: number; price: number; available?: boolean; featured_image?: { src?: string } | null }>
}
interface ShopifyGlobal {
  currency?: { active?: string }
  routes?: { root?: string }
}

const mountPage: Mount = (kit: Kit, host: HTMLElement) => {
  kit.english(enPage)
  void fill(kit, host)
}

async function fill(kit: Kit, host: HTMLElement): Promise<void> {
  const t = (key: string, vars?: Record<string, string | number>) => kit.t(key, vars, host)
  const doc = document
  const shopify = (window as unknown as { Shopify?: ShopifyGlobal }).Shopify
  const root = (shopify?.routes?.root ?? '/').replace(/\/?$/, '/')
  const currency = shopify?.currency?.active
  const node = <K extends keyof HTMLElementTagNameMap>(tag: K, props: Record<string, string> = {}, text?: string) => {
    const e = doc.createElement(tag)
    for (const [k, v] of Object.entries(props)) e.setAttribute(k, v)
    if (text !== undefined) e.textContent = text
    return e
  }
  const price = (cents: number) =>
    currency
      ? kit.num(cents / 100, { style: 'currency', currency })
      : kit.num(cents / 100, { minimumFractionDigits: 2, maximumFractionDigits: 2 })
  const cartForm = (className: string, lines: Array<[string, string]>, label: string) => {
    const form = node('form', { class: className, method: 'post', action: `${root}cart/add` })
    for (const [name, value] of lines) form.append(node('input', { type: 'hidden', name, value }))
    form.append(node('button', { type: 'submit' }, label))
    return form
  }
  if (!doc.getElementById('wl-page-css')) {
    // Targets a finger can hit (44 px), whatever the theme's button size; the theme styles the rest.
    const style = node('style', { id: 'wl-page-css' })
    // Nothing wider than the screen (a long title, note or link wraps; the link sits in a box as wide as the page).
    style.textContent =
      '[data-wishlist-guest-list] button{min-height:44px;min-width:44px}[data-wishlist-guest-list] .wishlist-page__items{list-style:none;padding:0}' +
      '[data-wishlist-guest-list] .wishlist-page__item{display:flex;flex-wrap:wrap;align-items:center;gap:.5em 1em;padding:.5em 0;border-bottom:1px solid #ddd}' +
      '[data-wishlist-guest-list] .wishlist-page__item>*{min-width:0;max-width:100%;overflow-wrap:anywhere}[data-wishlist-guest-list] img{max-width:100%;height:auto}' +
      '.wishlist-page__purchased{font-weight:bold}.wishlist-page__share-box:not([hidden]){display:flex;flex-wrap:wrap;gap:.5em;align-items:center;max-width:100%}' +
      '.wishlist-page__share-box label{flex:1 1 100%}.wishlist-page__share-url{flex:1 1 12em;min-width:0;max-width:100%;min-height:44px;box-sizing:border-box;font:inherit}'
    doc.head.append(style)
  }
  const status = node('p', { class: 'wishlist-page__status', role: 'status' })
  const done = (...content: Node[]) => {
    host.replaceChildren(...content, status)
    host.setAttribute('aria-busy', 'false')
  }

  let items: Item[]
  try {
    await kit.ready()
    items = (await kit.api<{ items: Item[] }>('GET', '/v1/wishlists/me?limit=200')).items
  } catch (err) {
    // Said in the page and through the assertive live region (a box filled at once is not announced).
    const text = `${t('page.failed')} ${kit.why(err, host)}`
    done(node('p', { class: 'wishlist-page__error' }, text))
    return kit.alert(text)
  }
  if (!items.length) return done(node('p', { class: 'wishlist-page__empty' }, t('page.empty')))

  const products = await Promise.all(
    items.map((item) =>
      item.handle
        ? fetch(`${root}products/${encodeURIComponent(item.handle)}.js`, { headers: { accept: 'application/json' } })
            .then((res) => (res.ok ? (res.json() as Promise<Product>) : undefined))
            .catch(() => undefined)
        : Promise.resolve(undefined),
    ),
  )

  const list = node('ul', { class: 'wishlist-page__items' })
  const addAll = node('div', { class: 'wishlist-page__add-all-box' })
  /** What "add all to cart" adds: product → [variant, saved quantity]; not what was already purchased. */
  const buyable = new Map<string, [string, string]>()
  const renderAddAll = () => {
    const lines = [...buyable.values()].flatMap(([v, quantity]): Array<[string, string]> => [
      ['items[][id]', v],
      ['items[][quantity]', quantity],
    ])
    addAll.replaceChildren(...(lines.length ? [cartForm('wishlist-page__add-all', lines, t('page.addAllToCart'))] : []))
  }

  items.forEach((item, i) => {
    const product = products[i]
    const variant = product?.variants.find((v) => String(v.id) === item.variantId) ?? product?.variants[0]
    const title = product?.title ?? item.handle ?? `#${item.productId}`
    const li = node('li', { class: 'wishlist-page__item', 'data-wishlist-item': '', 'data-product-id': item.productId })
    if (item.handle) li.setAttribute('data-handle', item.handle)
    const link = node('a', {
      class: 'wishlist-page__link',
      href: `${root}products/${encodeURIComponent(product?.handle ?? item.handle ?? '')}`,
    })
    const image = variant?.featured_image?.src ?? product?.featured_image
    if (image)
      link.append(node('img', { class: 'wishlist-page__image', src: image, alt: '', width: '120', height: '120', loading: 'lazy' }))
    link.append(node('span', { class: 'wishlist-page__name' }, title))
    li.append(product ? link : node('span', { class: 'wishlist-page__name' }, title))
    const quantity = String(item.quantity ?? 1)
    li.append(node('span', { class: 'wishlist-page__quantity' }, t('page.quantity', { quantity })))
    if (item.note) li.append(node('span', { class: 'wishlist-page__note' }, t('page.note', { note: item.note })))
    if (item.purchasedAt) {
      li.setAttribute('data-purchased', '')
      li.append(node('span', { class: 'wishlist-page__purchased' }, t('page.purchased')))
    }
    if (variant && variant.available !== false) {
      li.setAttribute('data-variant-id', String(variant.id))
      if (!item.purchasedAt) buyable.set(item.productId, [String(variant.id), quantity])
      li.append(
        node('span', { class: 'wishlist-page__price' }, price(variant.price)),
        cartForm(
          'wishlist-page__add',
          [
            ['id', String(variant.id)],
            ['quantity', quantity],
          ],
          t('page.addToCart'),
        ),
      )
    } else li.append(node('span', { class: 'wishlist-page__unavailable' }, t('page.unavailable')))
    const remove = node(
      'button',
      { type: 'button', class: 'wishlist-page__remove', 'aria-label': t('page.removeLabel', { title }) },
      t('page.remove'),
    )
    remove.addEventListener('click', () => {
      remove.disabled = true
      kit.api('DELETE', `/v1/wishlists/me/items/${encodeURIComponent(item.productId)}`).then(
        () => {
          // Focus goes to the next item's remove button (or the previous one's, or the list's status).
          const next = (li.nextElementSibling ?? li.previousElementSibling)?.querySelector<HTMLElement>('.wishlist-page__remove')
          li.remove()
          buyable.delete(item.productId)
          kit.forget(item.productId)
          renderAddAll()
          if (!list.children.length) list.replaceWith(node('p', { class: 'wishlist-page__empty' }, t('page.empty')))
          status.textContent = t('count.announce', { count: list.children.length })
          if (!next) status.setAttribute('tabindex', '-1')
          ;(next ?? status).focus()
          void kit.refresh()
        },
        (err: unknown) => {
          remove.disabled = false
          status.textContent = `${t('heart.removeFailed', { title })} ${kit.why(err, host)}`
        },
      )
    })
    li.append(remove)
    list.append(li)
  })
  renderAddAll()

  const share = node('button', { type: 'button', class: 'wishlist-page__share' }, t('page.share'))
  // The link goes in a read-only box as wide as the page (a long URL never widens it), with a copy button.
  const shareBox = node('div', { class: 'wishlist-page__share-box', hidden: '' })
  const shareUrl = node('input', { id: 'wishlist-guest-share-url', class: 'wishlist-page__share-url', type: 'text', readonly: '' })
  const copy = node('button', { type: 'button', class: 'wishlist-page__copy' }, t('page.copy'))
  shareBox.append(node('label', { for: shareUrl.id }, t('page.shareLabel')), shareUrl, copy)
  copy.addEventListener('click', () => {
    shareUrl.select()
    const copied = navigator.clipboard?.writeText(shareUrl.value) ?? Promise.reject(new Error('no clipboard'))
    copied.then(
      () => (status.textContent = t('page.copied')),
      () => (status.textContent = t('page.copyFailed')),
    )
  })
  share.addEventListener('click', () => {
    share.disabled = true
    kit
      .api<{ share_url: string }>('GET', '/v1/wishlists/me/share')
      .then(
        (link) => {
          shareUrl.value = link.share_url
          shareBox.hidden = false
          shareUrl.focus()
          shareUrl.select()
        },
        (err: unknown) => (status.textContent = `${t('page.shareFailed')} ${kit.why(err, host)}`),
      )
      .finally(() => (share.disabled = false))
  })
  done(addAll, list, share, shareBox)
}

register('wishlist-page', mountPage)
