/**
 * Shopify's App Bridge, when Shopify admin embeds the dashboard: the server puts Shopify's
 * `app-bridge.js` first in the page's `<head>` (only for a request Shopify signed), which
 * defines the `shopify` global. What the dashboard uses of it is typed here (no package: the
 * script comes from Shopify's CDN and keeps itself up to date).
 */
import { type ReactNode, useEffect, useRef } from 'react'

/** The part of App Bridge's `shopify` global the dashboard uses. */
export interface AppBridge {
  /** A fresh session token of the merchant's shop (a one-minute JWT signed by Shopify). */
  idToken(): Promise<string>
  /** The contextual save bar of Shopify admin, for a `<ui-save-bar>` of the page. */
  saveBar: { show(id: string): Promise<void>; hide(id: string): Promise<void> }
}

/** App Bridge, when the page was served with it (embedded in Shopify admin). */
export function appBridge(): AppBridge | undefined {
  const shopify = (window as { shopify?: Partial<AppBridge> }).shopify
  return typeof shopify?.idToken === 'function' ? (shopify as AppBridge) : undefined
}

/**
 * Shows Shopify admin's save bar `id` (a `<ui-save-bar>` of the page) while there are unsaved
 * changes, and hides it once there are none or the page goes; nothing outside Shopify admin.
 */
export function useSaveBar(id: string, unsaved: boolean): void {
  const shown = useRef(false)
  useEffect(() => {
    const saveBar = appBridge()?.saveBar
    if (!saveBar || unsaved === shown.current) return
    shown.current = unsaved
    void (unsaved ? saveBar.show(id) : saveBar.hide(id))
  }, [id, unsaved])
  useEffect(
    () => () => {
      if (shown.current) void appBridge()?.saveBar.hide(id)
    },
    [id],
  )
}

// App Bridge's web components: Shopify admin renders them (its navigation, its save bar); the
// page only declares them.
declare module 'react' {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- React's own JSX namespace, augmented
  namespace JSX {
    interface IntrinsicElements {
      'ui-nav-menu': { children?: ReactNode }
      'ui-save-bar': { id: string; children?: ReactNode }
    }
  }
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- React's own type parameter, repeated as it must be
  interface ButtonHTMLAttributes<T> {
    /** Inside `<ui-save-bar>`: `primary` is the Save button, the one without a variant Discard. */
    variant?: 'primary'
  }
}
