/**
 * Every visible string of the widget and its chunks, in English. Keys ending in a plural
 * category (`.one`, `.other`, …: Intl.PluralRules) are chosen by count. Placeholders:
 * {title}, {count}, {rating}, {url}. A locale chunk (locales/*.ts) gives the same keys in
 * another language; a merchant overrides any key with a JSON `data-strings` attribute.
 */
export type Strings = Record<string, string>

export const en: Strings = {
  'heart.add': 'Add {title} to wishlist',
  'heart.remove': 'Remove {title} from wishlist',
  'heart.product': 'this product',
  'count.announce.one': '{count} item in your wishlist',
  'count.announce.other': '{count} items in your wishlist',
  'reviews.none': 'No reviews yet',
  'reviews.count.one': '{count} review',
  'reviews.count.other': '{count} reviews',
  'reviews.rated': 'Rated {rating} out of 5',
  'reviews.verified': 'Verified purchase',
  'reviews.reply': 'Reply from the shop',
  'reviews.helpful': 'Helpful',
  'reviews.helpfulCount.one': '{count} person found this helpful',
  'reviews.helpfulCount.other': '{count} people found this helpful',
  'form.open': 'Write a review',
  'form.heading': 'Write a review',
  'form.rating': 'Rating',
  'form.star.one': '{count} star',
  'form.star.other': '{count} stars',
  'form.title': 'Title (optional)',
  'form.body': 'Your review',
  'form.name': 'Your name',
  'form.email': 'E-mail',
  'form.submit': 'Submit review',
  'form.sending': 'Sending…',
  'form.thanks': 'Thank you for your review!',
  'form.pending': 'It will appear once the shop has approved it.',
  'form.fix': 'Please correct the fields marked below.',
  'form.required': 'Please fill in this field.',
  'form.invalid': 'Please check this field.',
  'form.duplicate': 'You have already reviewed this product.',
  'form.failed': 'Your review could not be sent. Please try again.',
  'page.title': 'My wishlist',
  'page.empty': 'Your wishlist is empty.',
  'page.addToCart': 'Add to cart',
  'page.addAllToCart': 'Add all to cart',
  'page.remove': 'Remove',
  'page.removeLabel': 'Remove {title} from wishlist',
  'page.share': 'Share',
  'page.shared': 'Share this link: {url}',
  'page.copied': 'Link copied',
  'page.unavailable': 'No longer available',
  'page.loading': 'Loading your wishlist…',
  'page.login': 'Log in to keep your wishlist on every device.',
  'page.failed': 'Your wishlist could not be loaded.',
  'page.shareFailed': 'The share link could not be made.',
}

/** The languages shipped as chunks (`widget-locale-<tag>.js`); English is built in. */
export const LOCALES = ['fr', 'de', 'es', 'it', 'nl', 'pt-BR', 'ja'] as const
