/**
 * Exact money arithmetic (docs/api.md, "Conversions"): amounts are integers of a currency's
 * minor unit (cents, yen, fils) held as BigInt while computed, never binary floating point.
 * Minor-unit digits follow ISO 4217; a code not listed below has 2.
 */

/** ISO 4217 currencies whose minor unit is not 2 digits. */
const MINOR_DIGITS: Record<string, number> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
}

export const minorDigits = (currency: string): number => MINOR_DIGITS[currency] ?? 2

/** Decimal places of a unit price the intake takes (docs/api.md, "Platform events"). */
export const PRICE_SCALE = 6

/** A non-negative decimal string (at most PRICE_SCALE decimals) in millionths, exactly. */
export function toMicros(price: string): bigint {
  const [int = '0', frac = ''] = price.split('.')
  return BigInt(int + frac.padEnd(PRICE_SCALE, '0').slice(0, PRICE_SCALE))
}

/**
 * A line's amount in the currency's minor units: unit price × quantity, exactly, then
 * rounded half up to the minor unit (a price finer than the currency, such as "0.125" EUR).
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
