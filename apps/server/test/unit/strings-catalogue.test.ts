/**
 * The shopper-facing texts (strings/ at the repository's root): one catalogue from which
 * scripts/build-strings.mjs writes the server's page texts, the widget's tables and chunks
 * and the theme extension's locale files. Checked: every output is what the catalogue makes
 * (a stale one fails), a language missing a key fails, and each language names the wishlist
 * one way and addresses shoppers one way wherever they read it.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PAGE_LOCALES, PAGE_STRINGS } from '../../src/lib/page-strings.js'

const ROOT = join(import.meta.dirname, '..', '..', '..', '..')
const SCRIPT = join(ROOT, 'scripts', 'build-strings.mjs')
const temp = mkdtempSync(join(tmpdir(), 'wishlist-strings-'))
afterAll(() => rmSync(temp, { recursive: true, force: true }))

const check = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, '--check', ...args], { encoding: 'utf8' })

/** A copy of the catalogue with `edit` applied to one language's file. */
function catalogueWith(name: string, tag: string, edit: (source: string) => string): string {
  const dir = join(temp, name)
  cpSync(join(ROOT, 'strings'), dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n')
  const file = join(dir, `${tag}.ts`)
  const before = readFileSync(file, 'utf8')
  const after = edit(before)
  expect(after, 'the edit changed the file').not.toBe(before)
  writeFileSync(file, after)
  return dir
}

/** A language's widget table, as the widget ships it. */
function widgetTable(tag: string): Record<string, string> {
  const file = tag === 'en' ? 'strings.generated.ts' : `locales/${tag}.ts`
  const source = readFileSync(join(ROOT, 'packages', 'widget', 'src', file), 'utf8')
  return Object.fromEntries(
    [...source.matchAll(/^ {2}'([\w.]+)': '((?:[^'\\]|\\.)*)',$/gm)].map((m) => [m[1], m[2]!.replace(/\\(.)/g, '$1')]),
  )
}
const extensionTable = (tag: string) =>
  JSON.parse(readFileSync(join(ROOT, 'extensions', 'wishlist', 'locales', `${tag === 'en' ? 'en.default' : tag}.json`), 'utf8')) as {
    wishlist: { launcher: { label: string }; review_form: { open: string } }
  }

describe('the generated files', () => {
  it('are what the catalogue makes (run `node scripts/build-strings.mjs` after editing strings/)', () => {
    const run = check()
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    expect(run.stdout).toMatch(/17 outputs up to date/)
  })

  it('are reported stale, by path, when the catalogue changed and they were not regenerated', () => {
    const dir = catalogueWith('stale', 'fr', (s) => s.replace("'form.open': 'Écrire un avis'", "'form.open': 'Donner mon avis'"))
    const run = check('--strings', dir)
    expect(run.status).toBe(1)
    expect(run.stderr).toContain('packages/widget/src/locales/fr.ts')
    expect(run.stderr).toContain('extensions/wishlist/locales/fr.json')
    expect(run.stderr).not.toContain('de.ts')
  })

  it('are not written when a language misses a key or loses a placeholder: each problem is named', () => {
    const dir = catalogueWith('missing', 'de', (s) =>
      s
        .replace(/^ {4}'form\.rating': .*\n/m, '')
        .replace("wishlistEmpty: 'Ihre Wunschliste ist leer.'", "wishlistEmpty: ''")
        .replace("'{title} zur Wunschliste hinzufügen'", "'Zur Wunschliste hinzufügen'"),
    )
    const run = check('--strings', dir)
    expect(run.status).toBe(1)
    expect(run.stderr).toContain('de: widget.form.rating is missing')
    expect(run.stderr).toContain('de: pages.wishlistEmpty is missing')
    expect(run.stderr).toContain('de: widget.heart.add lost {title}')
  })
})

describe('one wording per language, wherever the shopper reads it', () => {
  it.each([...PAGE_LOCALES])('%s: the pages, the widget and the theme extension name the wishlist alike', (tag) => {
    const title = PAGE_STRINGS[tag].wishlistTitle
    expect(widgetTable(tag)['page.title']).toBe(title)
    expect(extensionTable(tag).wishlist.launcher.label).toBe(title)
    expect(extensionTable(tag).wishlist.review_form.open).toBe(widgetTable(tag)['form.open'])
  })

  it('French says "liste d’envies", never "liste de souhaits"', () => {
    const all = [...Object.values(PAGE_STRINGS.fr), ...Object.values(widgetTable('fr'))]
    expect(PAGE_STRINGS.fr.wishlistTitle).toBe('Ma liste d’envies')
    expect(widgetTable('fr')['heart.add']).toBe('Ajouter {title} à la liste d’envies')
    expect(all.filter((t) => /souhait/i.test(t))).toEqual([])
  })

  it('German addresses shoppers formally ("Sie", "Ihre"), never with "du", and says "Wunschliste"', () => {
    const all = [...Object.values(PAGE_STRINGS.de), ...Object.values(widgetTable('de'))]
    expect(all.filter((t) => /\b(du|dich|dir|dein\w*|deine\w*)\b|Wunschzettel/i.test(t))).toEqual([])
    expect(PAGE_STRINGS.de.login).toBe('Melden Sie sich an, um Ihre Wunschliste auf allen Geräten zu sehen')
    expect(widgetTable('de')['page.title']).toBe('Meine Wunschliste')
  })
})
