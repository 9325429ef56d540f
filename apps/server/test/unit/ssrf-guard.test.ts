import { describe, expect, it } from 'vitest'
import { guardedLookup, isPublicAddress, refuseTargetUrl } from '../../src/modules/webhooks/ssrf-guard.js'

const strict = { allowInsecure: false, allowPrivateTargets: false }
const devHttp = { allowInsecure: true, allowPrivateTargets: false }

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '192.0.2.1',
    '198.18.0.1',
    '240.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '2001:db8::1',
    '64:ff9b::7f00:1',
    '2002:7f00:1::1',
    // IPv4-compatible IPv6 (::/96), in either spelling, whatever the IPv4 part.
    '::7f00:1',
    '::127.0.0.1',
    '::a00:1',
    '::8.8.8.8',
    '::808:808',
    '0:0:0:0:0:0:8.8.8.8',
  ])('refuses %s', (ip) => {
    expect(isPublicAddress(ip)).toBe(false)
  })

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('accepts %s', (ip) => {
    expect(isPublicAddress(ip)).toBe(true)
  })

  it('refuses what is not an address', () => {
    expect(isPublicAddress('example.com')).toBe(false)
  })
})

describe('refuseTargetUrl', () => {
  it.each([
    'https://127.0.0.1/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::1]:8443/',
    'https://2130706433/',
    'https://0x7f.0.0.1/',
    'https://0177.0.0.1/',
    'https://127.1/',
    'https://localhost/',
    'https://LOCALHOST./',
    'https://api.localhost/',
    'https://metadata.google.internal/',
    'https://169.254.169.254/latest/meta-data/',
    'https://10.0.0.8/',
    'https://[fd00::1]/',
    'https://[::127.0.0.1]/',
    'https://[::8.8.8.8]/',
    'https://0/',
    'https://intranet/',
  ])('refuses %s', (url) => {
    expect(refuseTargetUrl(url, strict)).toEqual(expect.stringMatching(/^must not point to/))
  })

  it('requires https unless insecure targets are allowed', () => {
    expect(refuseTargetUrl('http://hooks.example.com/', strict)).toBe('must use https')
    expect(refuseTargetUrl('http://hooks.example.com/', devHttp)).toBeNull()
    expect(refuseTargetUrl('ftp://hooks.example.com/', devHttp)).toBe('must use https or http')
  })

  it('refuses credentials and relative URLs', () => {
    expect(refuseTargetUrl('https://a:b@hooks.example.com/', strict)).toBe('must not contain credentials')
    expect(refuseTargetUrl('/hook', strict)).toBe('must be an absolute URL')
  })

  it('accepts public names and addresses', () => {
    expect(refuseTargetUrl('https://hooks.example.com/wishlist?x=1', strict)).toBeNull()
    expect(refuseTargetUrl('https://8.8.8.8/', strict)).toBeNull()
    expect(refuseTargetUrl('https://[2606:4700:4700::1111]/', strict)).toBeNull()
  })

  it('lets development and tests bypass the address rules, not the scheme rule', () => {
    const bypass = { allowInsecure: false, allowPrivateTargets: true }
    expect(refuseTargetUrl('https://127.0.0.1/', bypass)).toBeNull()
    expect(refuseTargetUrl('http://127.0.0.1/', bypass)).toBe('must use https')
  })
})

describe('guardedLookup', () => {
  const lookup = (answers: Record<string, { address: string; family: number }[]>) => guardedLookup(async (host) => answers[host] ?? [])
  const run = (fn: ReturnType<typeof lookup>, host: string, all: boolean) =>
    new Promise<{ err: Error | null; address: unknown; family?: number | undefined }>((resolve) =>
      fn(host, { all }, (err, address, family) => resolve({ err, address, family })),
    )

  it('hands the socket only public addresses', async () => {
    const fn = lookup({
      'mixed.example': [
        { address: '10.0.0.1', family: 4 },
        { address: '93.184.216.34', family: 4 },
      ],
    })
    expect(await run(fn, 'mixed.example', true)).toMatchObject({ err: null, address: [{ address: '93.184.216.34', family: 4 }] })
    expect(await run(fn, 'mixed.example', false)).toMatchObject({ err: null, address: '93.184.216.34', family: 4 })
  })

  it('fails when a name resolves only to private addresses (DNS rebinding to loopback)', async () => {
    const fn = lookup({
      'rebind.example': [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ],
    })
    const res = await run(fn, 'rebind.example', true)
    expect(res.err?.message).toMatch(/non-public/)
  })
})
