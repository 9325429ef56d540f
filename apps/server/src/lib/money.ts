/**
 * Exact money arithmetic (docs/api.md, "Conversions"): amounts are integers of a currency's
 * minor unit (cents, yen, fils) held as BigInt while computed, never binary floating point.
 * Minor-unit digits follow ISO 4217; a code not listed below has 2. Not Intl's (CLDR's)
 * display digits, which are 0 for HUF, IDR, COP and IQD where ISO 4217 has 2 or 3: prices
 * that platforms send in those currencies with decimals stay valid, and the amounts the
 * service writes use the same digits as the prices it takes.
 */

/** ISO 4217 currencies whose minor unit is not 2 digits. */
const MINOR_DIGITS: Record<string, number> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
}

export const minorDigits = (currency: string): number => MINOR_DIGITS[currency] ?? 2

/**
 * The ISO 4217 codes in use (list one of the standard: currencies, funds and precious metals),
 * without XTS and XXX (testing, no currency): what a shop's `currency` setting may be.
 */
export const CURRENCY_CODES: readonly string[] = [
  ...'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP BYN BZD'.split(' '),
  ...'CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP'.split(' '),
  ...'GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW'.split(' '),
  ...'KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN'.split(' '),
  ...'NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL'.split(' '),
  ...'SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES'.split(' '),
  ...'VND VUV WST XAF XAG XAU XBA XBB XBC XBD XCD XCG XDR XOF XPD XPF XPT XSU XUA YER ZAR ZMW ZWG ZWL'.split(' '),
]

const CURRENCY_SET = new Set(CURRENCY_CODES)

/** Whether `code` is one of CURRENCY_CODES (exactly: three capital letters). */
export const isCurrencyCode = (code: string): boolean => CURRENCY_SET.has(code)

/** Decimal places of a unit price the intake takes (docs/api.md, "Platform events"). */
export const PRICE_SCALE = 6

/**
 * An order line's bounds (docs/api.md, "Platform events"): a unit price has at most 9
 * integer digits and at most its currency's minor-unit digits (999,999,999.99 USD,
 * 999,999,999 JPY, 999,999,999.999 KWD), a quantity at most 10,000. A line is then at most
 * 10^17 minor units (a 4-digit currency), an order of 1,000 lines 10^20: past 64-bit
 * integers, hence the stored sums' two parts below.
 */
export const MAX_PRICE_INTEGER_DIGITS = 9
export const MAX_LINE_QUANTITY = 10_000
/** The most minor-unit digits of any currency (CLF, UYW): what a price string may carry before its currency is known. */
export const MAX_MINOR_DIGITS = 4

/**
 * Why a line's unit price does not fit its currency (a non-zero decimal past its minor unit,
 * or 10^9 or more), or null when it fits. A JSON number holds what its shortest decimal form shows.
 */
export function linePriceProblem(price: string | number, currency: string): string | null {
  const digits = minorDigits(currency)
  const allowed = digits === 0 ? `${currency} takes no decimals` : `${currency} takes at most ${digits} decimal${digits === 1 ? '' : 's'}`
  let text: string
  if (typeof price === 'number') {
    if (!Number.isFinite(price) || price < 0) return 'must be a non-negative number'
    text = String(price)
    // Exponent form: below 1e-6 (never an amount of any currency unless 0) or 1e21 and over.
    if (text.includes('e'))
      return price === 0 ? null : price >= 1 ? `must be below 1000000000 (${allowed})` : `has too many decimals: ${allowed}`
  } else text = price
  const [int = '', frac = ''] = text.split('.')
  if (int.replace(/^0+(?=\d)/, '').length > MAX_PRICE_INTEGER_DIGITS) return `must be below 1000000000 (${allowed})`
  // Zeros past the minor unit change nothing ("1500.00" JPY is 1500 yen, as platforms write it).
  if (frac.replace(/0+$/, '').length > digits) return `has too many decimals: ${allowed}`
  return null
}

/**
 * Stored sums of minor units (analytics_revenue_daily, analytics_product_revenue) in two
 * integer columns, `amount_high` × 10^12 + `amount`, with 0 ≤ `amount` < 10^12: each part
 * fits a 64-bit integer on both backends, and the database adds rows exactly (a carry from
 * `amount` into `amount_high`; modules/analytics/analytics.repo.ts). `amount_high` stops at
 * AMOUNT_HIGH_MAX (a sum of 10^26 minor units and more stays at that ceiling), so a sum of
 * 90,000 rows' parts still fits 64 bits on SQLite.
 */
export const AMOUNT_LOW_BASE = 1_000_000_000_000n
export const AMOUNT_HIGH_MAX = 99_999_999_999_999n

/** A non-negative sum of minor units as its two stored parts (JS numbers: both are below 2^53). */
export function splitAmount(total: bigint): { amount: number; amount_high: number } {
  if (total <= 0n) return { amount: 0, amount_high: 0 }
  const high = total / AMOUNT_LOW_BASE
  if (high > AMOUNT_HIGH_MAX) return { amount: Number(AMOUNT_LOW_BASE - 1n), amount_high: Number(AMOUNT_HIGH_MAX) }
  return { amount: Number(total % AMOUNT_LOW_BASE), amount_high: Number(high) }
}

/**
 * A whole number as the database answered it (a JS number, a bigint, or text such as
 * "123", or "1.0e+23" from a row an older version stored as a float), as a BigInt: floats
 * are truncated, anything else is 0. Reads never fail on a stored value.
 */
export function storedInteger(value: unknown): bigint {
  if (typeof value === 'bigint') return value
  if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return BigInt(value.trim())
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN
  return Number.isFinite(n) ? BigInt(Math.trunc(n)) : 0n
}

/** A stored sum from its two parts (each as the database answered it). */
export const joinAmount = (high: unknown, low: unknown): bigint => storedInteger(high) * AMOUNT_LOW_BASE + storedInteger(low)

/** A non-negative decimal string (at most PRICE_SCALE decimals) in millionths, exactly. */
export function toMicros(price: string): bigint {
  const [int = '0', frac = ''] = price.split('.')
  return BigInt(int + frac.padEnd(PRICE_SCALE, '0').slice(0, PRICE_SCALE))
}

/**
 * A line's amount in the currency's minor units: unit price × quantity, exactly. The intake
 * takes no price finer than its currency (`linePriceProblem`), so the rounding half up to
 * the minor unit here changes nothing for its lines (the demo seed's prices too).
 */
export function lineMinorUnits(priceMicros: bigint, quantity: number, currency: string): bigint {
  const total = priceMicros * BigInt(quantity)
  const divisor = 10n ** BigInt(PRICE_SCALE - minorDigits(currency))
  return (total + divisor / 2n) / divisor
}

/** Minor units as the currency writes them: `"20.00"` EUR, `"1500"` JPY, `"1.250"` KWD. */
export function formatMinorUnits(amount: bigint, currency: string): string {
  const digits = minorDigits(currency)
  const negative = amount < 0n
  const text = (negative ? -amount : amount).toString().padStart(digits + 1, '0')
  const out = digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`
  return negative ? `-${out}` : out
}
