/**
 * SSRF guard for webhook targets (docs/api.md, "Webhooks"). Node skips a socket's `lookup`
 * hook for IP literals, so literals are classified here (WHATWG URL parsing has normalised
 * every IPv4 spelling); names are resolved at delivery by `guardedLookup`, and the socket
 * connects to the checked address (no DNS-rebinding window).
 */
import dns from 'node:dns'
import type { LookupAddress, LookupOptions } from 'node:dns'
import ipaddr from 'ipaddr.js'

/**
 * An IPv6 literal in the WHATWG URL's canonical form (`::127.0.0.1` → `::7f00:1`): ipaddr.js
 * reads any `::a.b.c.d` as IPv4-mapped (`::ffff:a.b.c.d`), so `::8.8.8.8` would pass as 8.8.8.8.
 */
function canonical(address: string): string {
  if (!address.includes(':') || !address.includes('.')) return address
  try {
    return bareHostname(new URL(`http://[${address}]/`))
  } catch {
    return address // a zone index (`fe80::1%eth0`): no IPv4 part to misread
  }
}

/**
 * The range of a valid literal, as ipaddr.js names it, IPv4-mapped IPv6 unwrapped first
 * (process() turns ::ffff:127.0.0.1 into 127.0.0.1 so the IPv4 rules apply to it). ipaddr.js
 * calls the deprecated IPv4-compatible block ::/96 (`::7f00:1`, written `[::127.0.0.1]`)
 * unicast; nothing public lives there, and hosts may route it to IPv4 (loopback included).
 */
function rangeOf(address: string): string {
  const ip = ipaddr.process(canonical(address))
  const range = ip.range()
  if (range === 'unicast' && ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).parts.slice(0, 6).every((p) => p === 0)) return 'ipv4Compatible'
  return range
}

/** True only for globally routable unicast addresses. */
export function isPublicAddress(address: string): boolean {
  return ipaddr.isValid(address) && rangeOf(address) === 'unicast'
}

/** The range name of a literal address (`loopback`, `private`, `linkLocal`, `ipv4Compatible`, …), or null for a name. */
export function addressRange(address: string): string | null {
  return ipaddr.isValid(address) ? rangeOf(address) : null
}

/** `[::1]` → `::1`; a trailing root dot dropped (`localhost.` is `localhost`). */
export function bareHostname(url: URL): string {
  let host = url.hostname
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1)
  return host.endsWith('.') ? host.slice(0, -1) : host
}

const LOCAL_NAMES = /(^|\.)(localhost|localdomain|local|internal)$/i

export interface TargetPolicy {
  allowInsecure: boolean
  allowPrivateTargets: boolean
}

/**
 * What the URL alone shows: scheme, credentials, and a literal or obviously local host.
 * Returns the reason the target is refused, or null when it may be used.
 */
export function refuseTargetUrl(raw: string, policy: TargetPolicy): string | null {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'must be an absolute URL'
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowInsecure)) {
    return policy.allowInsecure ? 'must use https or http' : 'must use https'
  }
  if (url.username !== '' || url.password !== '') return 'must not contain credentials'
  if (policy.allowPrivateTargets) return null
  const host = bareHostname(url)
  if (ipaddr.isValid(host)) {
    return isPublicAddress(host) ? null : `must not point to a ${addressRange(host)} address`
  }
  if (LOCAL_NAMES.test(host) || !host.includes('.')) return 'must not point to a local host name'
  return null
}

export class BlockedAddressError extends Error {
  readonly code = 'EBLOCKEDADDRESS'
  constructor(hostname: string, addresses: string[]) {
    super(`refused: ${hostname} resolves only to non-public addresses (${addresses.join(', ') || 'none'})`)
    this.name = 'BlockedAddressError'
  }
}

/** Resolves a host name to all its addresses (the default is the system resolver). */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>

export const systemResolve: ResolveHost = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true })

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * A `net.connect` lookup hook that resolves, drops every non-public address and hands the
 * socket only the checked ones. Node 20 asks for `all: true` (happy eyeballs) or one address.
 */
export function guardedLookup(resolve: ResolveHost) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname).then(
      (found) => {
        const family = options.family === 4 || options.family === 6 ? options.family : undefined
        const allowed = found.filter((a) => isPublicAddress(a.address) && (family === undefined || a.family === family))
        if (allowed.length === 0) {
          callback(
            new BlockedAddressError(
              hostname,
              found.map((a) => a.address),
            ),
            options.all ? [] : '',
            undefined,
          )
          return
        }
        if (options.all) callback(null, allowed)
        else callback(null, (allowed[0] as LookupAddress).address, (allowed[0] as LookupAddress).family)
      },
      (err: NodeJS.ErrnoException) => callback(err, options.all ? [] : '', undefined),
    )
  }
}
