import { createHash } from 'node:crypto'
import ipaddr from 'ipaddr.js'

/**
 * The address a per-client limit counts: an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as
 * its IPv4, any other IPv6 address by its /64 (one subscriber's network: a client picks
 * addresses within it at will).
 */
export function clientAddressKey(ip: string): string {
  // IPv4, what nearly every request carries, needs no parsing.
  if (!ip.includes(':') || !ipaddr.isValid(ip)) return ip
  const address = ipaddr.process(ip)
  if (address.kind() === 'ipv4') return address.toString()
  return `${(address as ipaddr.IPv6).parts
    .slice(0, 4)
    .map((p) => p.toString(16))
    .join(':')}::/64`
}

/** A stored stand-in for a client address: counts per address without keeping it readable. */
export const pseudonymousAddress = (ip: string): string =>
  createHash('sha256')
    .update(`client\u0000${clientAddressKey(ip)}`)
    .digest('base64url')
    .slice(0, 22)
