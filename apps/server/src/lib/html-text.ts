/**
 * Text written into a page that a template language may render again: the review form is
 * HTML in the service's own page and Liquid inside a shop's theme (platforms/shopify).
 */

/**
 * HTML text that no template reads as code: HTML's specials, `{`, `}` (so no `{{`/`{%` can
 * form), quotes (no string literal can be closed) and line breaks are entities. Line breaks
 * because inside a `{% liquid %}` tag each line is a tag of its own, so a line break in a
 * string literal would end it (a space to the browser either way).
 */
export function inert(text: string): string {
  return text.replace(/[&<>"'{}\r\n\u2028\u2029]/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** HTML text or attribute value of the service's own pages (no template reads them again): HTML's specials as entities. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/**
 * A whole page of the service's own (the review page, the opt-out page): HTML5 in `locale`,
 * sized for phones, never indexed, `head` (its styles) after the title, `main` (already escaped
 * markup) in `<main>`.
 */
export function servicePageHtml(page: { locale: string; title: string; head: string[]; main: string; mainClass?: string }): string {
  return [
    '<!doctype html>',
    `<html lang="${page.locale}">`,
    '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${page.title}</title>`,
    '<meta name="robots" content="noindex">',
    ...page.head,
    '</head>',
    '<body>',
    page.mainClass === undefined ? '<main>' : `<main class="${page.mainClass}">`,
    page.main,
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n')
}
