import { readdirSync, readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'
import { en as first, enForm, enNotify, enPage, LOCALES } from '../src/strings.js'

/** Every English text: the first script's and its chunks' (the wishlist page's, the review form's, the notification form's). */
const en = { ...first, ...enPage, ...enForm, ...enNotify }

const here = dirname(fileURLToPath(import.meta.url))

/** A locale file's table, read from its source (the file registers itself with the first script when run). */
function tableOf(tag: string): Record<string, string> {
  const source = readFileSync(resolve(here, `../src/locales/${tag}.ts`), 'utf8')
  return Object.fromEntries([...source.matchAll(/^ {2}'([\w.]+)': '((?:[^'\\]|\\.)*)',$/gm)].map((m) => [m[1], m[2]]))
}
const base = (key: string) => key.replace(/\.(zero|one|two|few|many|other)$/, '')

test('every shipped language has a locale file', () => {
  expect(
    readdirSync(resolve(here, '../src/locales'))
      .filter((f) => f !== 'define.ts')
      .sort(),
  ).toEqual([...LOCALES].map((l) => `${l}.ts`).sort())
})

test.each([...LOCALES])('%s translates every string, with the plural forms its language uses', (tag) => {
  const table = tableOf(tag)
  const rules = new Intl.PluralRules(tag)
  for (const key of Object.keys(en)) {
    if (key.endsWith('.other')) {
      // Every category the language uses for whole numbers has its form (or falls back to other).
      for (const n of [0, 1, 2, 5, 21])
        expect(table[`${base(key)}.${rules.select(n)}`] ?? table[key], `${tag} ${key} for ${n}`).toBeTruthy()
    } else if (!/\.(one|few|many|two|zero)$/.test(key)) expect(table[key], `${tag} ${key}`).toBeTruthy()
  }
  for (const key of Object.keys(table)) expect(Object.keys(en).map(base), `${tag} has an unknown key ${key}`).toContain(base(key))
  // The placeholders survive translation.
  for (const [key, value] of Object.entries(table)) {
    const wanted = (en[key] ?? en[`${base(key)}.other`] ?? '').match(/\{\w+\}/g) ?? []
    for (const p of wanted) expect(value, `${tag} ${key}`).toContain(p)
  }
})
