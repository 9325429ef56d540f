/**
 * The site icon served at `/favicon.ico` (browsers ask for it on every origin they visit):
 * a 16 × 16 red heart, built once as an ICO file holding one 32-bit bitmap (1,150 bytes).
 */
const HEART = [
  '................',
  '................',
  '...###....###...',
  '..#####..#####..',
  '.##############.',
  '.##############.',
  '.##############.',
  '.##############.',
  '..############..',
  '...##########...',
  '....########....',
  '.....######.....',
  '......####......',
  '.......##.......',
  '................',
  '................',
]

export function faviconIco(): Buffer {
  const size = 16
  const pixels = size * size * 4
  const mask = size * 4 // 1 bit per pixel, rows padded to 32 bits
  const image = 40 + pixels + mask
  const out = Buffer.alloc(6 + 16 + image)
  // ICONDIR: reserved, type 1 (icon), one image.
  out.writeUInt16LE(0, 0)
  out.writeUInt16LE(1, 2)
  out.writeUInt16LE(1, 4)
  // ICONDIRENTRY: 16 × 16, no palette, 1 plane, 32 bpp, its size and offset.
  out.writeUInt8(size, 6)
  out.writeUInt8(size, 7)
  out.writeUInt16LE(1, 10)
  out.writeUInt16LE(32, 12)
  out.writeUInt32LE(image, 14)
  out.writeUInt32LE(22, 18)
  // BITMAPINFOHEADER: the height counts the XOR bitmap and the AND mask.
  out.writeUInt32LE(40, 22)
  out.writeInt32LE(size, 26)
  out.writeInt32LE(size * 2, 30)
  out.writeUInt16LE(1, 34)
  out.writeUInt16LE(32, 36)
  out.writeUInt32LE(pixels + mask, 42)
  // Rows bottom-up, BGRA; the AND mask stays all zero (the alpha channel decides).
  for (let row = 0; row < size; row++) {
    const line = HEART[size - 1 - row] ?? ''
    for (let col = 0; col < size; col++) {
      if (line[col] !== '#') continue
      const at = 62 + (row * size + col) * 4
      out.writeUInt32BE(0x3333ddff, at) // B 0x33, G 0x33, R 0xdd, A 0xff
    }
  }
  return out
}
