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
