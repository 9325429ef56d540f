/**
 * The visible text of the pages the service renders for shoppers (the wishlist page, the
 * shared page, the review form of an invitation and their notices), in the storefront
 * languages: English, French, German, Spanish, Italian, Dutch, Portuguese (Brazil) and
 * Japanese. `{title}` is a product title filled in where the text is used.
 *
 * Liquid pages choose the language in Liquid, from the shop's `request.locale.iso_code`
 * (`liquidStrings`); the service's own HTML page from `?locale=` or `Accept-Language`
 * (`negotiateLocale`). `pageStrings` and `liquidStrings` take per-language overrides that
 * win over these texts: the shop's `storefront_strings` setting (`storefrontStrings` checks
 * it). The theme extension's texts are the merchant's to change in its block settings.
 */
export const PAGE_LOCALES = ['en', 'fr', 'de', 'es', 'it', 'nl', 'pt-BR', 'ja'] as const
export type PageLocale = (typeof PAGE_LOCALES)[number]

const en = {
  continueShopping: 'Continue shopping',
  wishlistTitle: 'My wishlist',
  wishlistEmpty: 'Your wishlist is empty.',
  addToCart: 'Add to cart',
  addAllToCart: 'Add all to cart',
  remove: 'Remove',
  removed: 'Removed from your wishlist.',
  share: 'Share this wishlist',
  shareIntro: 'Anyone with this link can see your wishlist:',
  shareUnavailable: 'This wishlist cannot be shared from this shop.',
  unavailable: 'No longer available',
  loading: 'Loading your wishlist…',
  login: 'Log in to keep your wishlist on every device',
  noscript: 'Turn on JavaScript to see what you saved on this device, or log in.',
  previousPage: 'Previous page',
  nextPage: 'Next page',
  pageNumber: 'Page {page}',
  sharedEmpty: 'This wishlist is empty.',
  sharedExpiredTitle: 'This wishlist link has expired',
  sharedExpiredText: 'Ask the person who shared it for a new link.',
  sharedUnknownTitle: 'This wishlist could not be found',
  sharedUnknownText: 'The link may have been mistyped or withdrawn.',
  reviewHeading: 'Review {title}',
  reviewHeadingNoTitle: 'Write a review',
  reviewIntro: 'Thank you for your order. Tell other shoppers what you think.',
  rating: 'Rating',
  star1: '1 star',
  star2: '2 stars',
  star3: '3 stars',
  star4: '4 stars',
  star5: '5 stars',
  reviewTitle: 'Title (optional)',
  reviewBody: 'Your review',
  reviewName: 'Your name',
  reviewEmail: 'E-mail',
  reviewEmailHint: 'Never shown with your review.',
  required: 'required',
  submit: 'Submit review',
  thanksTitle: 'Thank you for your review!',
  thanksPending: 'It will appear on the shop once it has been approved.',
  thanksPublished: 'It is now on the product page.',
  errorsHeading: 'Please correct the following:',
  errorRating: 'Choose a rating from 1 to 5 stars.',
  errorBody: 'Write your review (up to 5,000 characters).',
  errorName: 'Enter your name (up to 100 characters).',
  errorEmail: 'Enter a valid e-mail address.',
  errorTitle: 'The title can be up to 150 characters.',
  errorDuplicate: 'A review of this product was already received from you.',
  invitationUsedTitle: 'This review link has already been used',
  invitationUsedText: 'Your review has been received. Thank you!',
  invitationExpiredTitle: 'This review link has expired',
  invitationExpiredText: 'Review links are valid for 90 days after the order.',
  invitationUnknownTitle: 'This review link is not valid',
  invitationUnknownText: 'Check that the whole link was copied from the e-mail.',
  productMissingTitle: 'This product is no longer available',
  productMissingText: 'The product you were invited to review can no longer be found in the shop.',
}
export type PageStringKey = keyof typeof en
export type PageStrings = Record<PageStringKey, string>

const fr: PageStrings = {
  continueShopping: 'Continuer vos achats',
  wishlistTitle: 'Ma liste d’envies',
  wishlistEmpty: 'Votre liste d’envies est vide.',
  addToCart: 'Ajouter au panier',
  addAllToCart: 'Tout ajouter au panier',
  remove: 'Retirer',
  removed: 'Retiré de votre liste d’envies.',
  share: 'Partager cette liste',
  shareIntro: 'Toute personne ayant ce lien peut voir votre liste :',
  shareUnavailable: 'Cette boutique ne permet pas de partager les listes.',
  unavailable: 'Plus disponible',
  loading: 'Chargement de votre liste…',
  login: 'Connectez-vous pour retrouver votre liste sur tous vos appareils',
  noscript: 'Activez JavaScript pour voir ce que vous avez enregistré sur cet appareil, ou connectez-vous.',
  previousPage: 'Page précédente',
  nextPage: 'Page suivante',
  pageNumber: 'Page {page}',
  sharedEmpty: 'Cette liste est vide.',
  sharedExpiredTitle: 'Ce lien de liste a expiré',
  sharedExpiredText: 'Demandez un nouveau lien à la personne qui l’a partagé.',
  sharedUnknownTitle: 'Cette liste est introuvable',
  sharedUnknownText: 'Le lien est peut-être mal saisi ou a été retiré.',
  reviewHeading: 'Donnez votre avis sur {title}',
  reviewHeadingNoTitle: 'Écrire un avis',
  reviewIntro: 'Merci pour votre commande. Dites aux autres clients ce que vous en pensez.',
  rating: 'Note',
  star1: '1 étoile',
  star2: '2 étoiles',
  star3: '3 étoiles',
  star4: '4 étoiles',
  star5: '5 étoiles',
  reviewTitle: 'Titre (facultatif)',
  reviewBody: 'Votre avis',
  reviewName: 'Votre nom',
  reviewEmail: 'E-mail',
  reviewEmailHint: 'Jamais affiché avec votre avis.',
  required: 'obligatoire',
  submit: 'Envoyer l’avis',
  thanksTitle: 'Merci pour votre avis !',
  thanksPending: 'Il apparaîtra sur la boutique une fois approuvé.',
  thanksPublished: 'Il est maintenant visible sur la page du produit.',
  errorsHeading: 'Veuillez corriger les points suivants :',
  errorRating: 'Choisissez une note de 1 à 5 étoiles.',
  errorBody: 'Rédigez votre avis (5 000 caractères au maximum).',
  errorName: 'Indiquez votre nom (100 caractères au maximum).',
  errorEmail: 'Saisissez une adresse e-mail valide.',
  errorTitle: 'Le titre peut compter 150 caractères au maximum.',
  errorDuplicate: 'Nous avons déjà reçu votre avis sur ce produit.',
  invitationUsedTitle: 'Ce lien d’avis a déjà été utilisé',
  invitationUsedText: 'Votre avis a bien été reçu. Merci !',
  invitationExpiredTitle: 'Ce lien d’avis a expiré',
  invitationExpiredText: 'Les liens d’avis sont valables 90 jours après la commande.',
  invitationUnknownTitle: 'Ce lien d’avis n’est pas valide',
  invitationUnknownText: 'Vérifiez que le lien a été copié en entier depuis l’e-mail.',
  productMissingTitle: 'Ce produit n’est plus disponible',
  productMissingText: 'Le produit que vous étiez invité à évaluer est introuvable dans la boutique.',
}

const de: PageStrings = {
  continueShopping: 'Weiter einkaufen',
  wishlistTitle: 'Mein Wunschzettel',
  wishlistEmpty: 'Dein Wunschzettel ist leer.',
  addToCart: 'In den Warenkorb',
  addAllToCart: 'Alle in den Warenkorb',
  remove: 'Entfernen',
  removed: 'Vom Wunschzettel entfernt.',
  share: 'Wunschzettel teilen',
  shareIntro: 'Jeder mit diesem Link kann deinen Wunschzettel sehen:',
  shareUnavailable: 'In diesem Shop können Wunschzettel nicht geteilt werden.',
  unavailable: 'Nicht mehr erhältlich',
  loading: 'Wunschzettel wird geladen…',
  login: 'Melde dich an, um deinen Wunschzettel auf allen Geräten zu sehen',
  noscript: 'Aktiviere JavaScript, um zu sehen, was du auf diesem Gerät gespeichert hast, oder melde dich an.',
  previousPage: 'Vorherige Seite',
  nextPage: 'Nächste Seite',
  pageNumber: 'Seite {page}',
  sharedEmpty: 'Dieser Wunschzettel ist leer.',
  sharedExpiredTitle: 'Dieser Link ist abgelaufen',
  sharedExpiredText: 'Bitte die Person, die ihn geteilt hat, um einen neuen Link.',
  sharedUnknownTitle: 'Dieser Wunschzettel wurde nicht gefunden',
  sharedUnknownText: 'Der Link ist vielleicht falsch geschrieben oder wurde zurückgezogen.',
  reviewHeading: '{title} bewerten',
  reviewHeadingNoTitle: 'Bewertung schreiben',
  reviewIntro: 'Danke für deine Bestellung. Erzähl anderen Kunden, wie du sie findest.',
  rating: 'Bewertung',
  star1: '1 Stern',
  star2: '2 Sterne',
  star3: '3 Sterne',
  star4: '4 Sterne',
  star5: '5 Sterne',
  reviewTitle: 'Titel (optional)',
  reviewBody: 'Deine Bewertung',
  reviewName: 'Dein Name',
  reviewEmail: 'E-Mail',
  reviewEmailHint: 'Wird nie mit deiner Bewertung angezeigt.',
  required: 'Pflichtfeld',
  submit: 'Bewertung senden',
  thanksTitle: 'Danke für deine Bewertung!',
  thanksPending: 'Sie erscheint im Shop, sobald sie freigegeben wurde.',
  thanksPublished: 'Sie ist jetzt auf der Produktseite zu sehen.',
  errorsHeading: 'Bitte korrigiere Folgendes:',
  errorRating: 'Wähle eine Bewertung von 1 bis 5 Sternen.',
  errorBody: 'Schreibe deine Bewertung (höchstens 5.000 Zeichen).',
  errorName: 'Gib deinen Namen ein (höchstens 100 Zeichen).',
  errorEmail: 'Gib eine gültige E-Mail-Adresse ein.',
  errorTitle: 'Der Titel darf höchstens 150 Zeichen haben.',
  errorDuplicate: 'Von dir liegt bereits eine Bewertung dieses Produkts vor.',
  invitationUsedTitle: 'Dieser Bewertungslink wurde bereits verwendet',
  invitationUsedText: 'Deine Bewertung ist angekommen. Danke!',
  invitationExpiredTitle: 'Dieser Bewertungslink ist abgelaufen',
  invitationExpiredText: 'Bewertungslinks gelten 90 Tage nach der Bestellung.',
  invitationUnknownTitle: 'Dieser Bewertungslink ist ungültig',
  invitationUnknownText: 'Prüfe, ob der Link vollständig aus der E-Mail kopiert wurde.',
  productMissingTitle: 'Dieses Produkt ist nicht mehr erhältlich',
  productMissingText: 'Das Produkt, das du bewerten solltest, ist im Shop nicht mehr zu finden.',
}

const es: PageStrings = {
  continueShopping: 'Seguir comprando',
  wishlistTitle: 'Mi lista de deseos',
  wishlistEmpty: 'Tu lista de deseos está vacía.',
  addToCart: 'Añadir al carrito',
  addAllToCart: 'Añadir todo al carrito',
  remove: 'Quitar',
  removed: 'Quitado de tu lista de deseos.',
  share: 'Compartir esta lista',
  shareIntro: 'Cualquiera con este enlace puede ver tu lista:',
  shareUnavailable: 'Esta tienda no permite compartir listas.',
  unavailable: 'Ya no está disponible',
  loading: 'Cargando tu lista…',
  login: 'Inicia sesión para tener tu lista en todos tus dispositivos',
  noscript: 'Activa JavaScript para ver lo que guardaste en este dispositivo, o inicia sesión.',
  previousPage: 'Página anterior',
  nextPage: 'Página siguiente',
  pageNumber: 'Página {page}',
  sharedEmpty: 'Esta lista está vacía.',
  sharedExpiredTitle: 'Este enlace de lista ha caducado',
  sharedExpiredText: 'Pide un enlace nuevo a la persona que lo compartió.',
  sharedUnknownTitle: 'No se encontró esta lista',
  sharedUnknownText: 'Puede que el enlace esté mal escrito o que se haya retirado.',
  reviewHeading: 'Opina sobre {title}',
  reviewHeadingNoTitle: 'Escribir una reseña',
  reviewIntro: 'Gracias por tu pedido. Cuéntales a otros clientes qué te parece.',
  rating: 'Valoración',
  star1: '1 estrella',
  star2: '2 estrellas',
  star3: '3 estrellas',
  star4: '4 estrellas',
  star5: '5 estrellas',
  reviewTitle: 'Título (opcional)',
  reviewBody: 'Tu reseña',
  reviewName: 'Tu nombre',
  reviewEmail: 'Correo electrónico',
  reviewEmailHint: 'Nunca se muestra con tu reseña.',
  required: 'obligatorio',
  submit: 'Enviar reseña',
  thanksTitle: '¡Gracias por tu reseña!',
  thanksPending: 'Aparecerá en la tienda cuando se haya aprobado.',
  thanksPublished: 'Ya aparece en la página del producto.',
  errorsHeading: 'Corrige lo siguiente:',
  errorRating: 'Elige una valoración de 1 a 5 estrellas.',
  errorBody: 'Escribe tu reseña (hasta 5000 caracteres).',
  errorName: 'Escribe tu nombre (hasta 100 caracteres).',
  errorEmail: 'Escribe un correo electrónico válido.',
  errorTitle: 'El título puede tener hasta 150 caracteres.',
  errorDuplicate: 'Ya recibimos una reseña tuya de este producto.',
  invitationUsedTitle: 'Este enlace de reseña ya se ha usado',
  invitationUsedText: 'Hemos recibido tu reseña. ¡Gracias!',
  invitationExpiredTitle: 'Este enlace de reseña ha caducado',
  invitationExpiredText: 'Los enlaces de reseña son válidos 90 días después del pedido.',
  invitationUnknownTitle: 'Este enlace de reseña no es válido',
  invitationUnknownText: 'Comprueba que copiaste el enlace completo del correo.',
  productMissingTitle: 'Este producto ya no está disponible',
  productMissingText: 'El producto que te invitamos a valorar ya no se encuentra en la tienda.',
}

const it: PageStrings = {
  continueShopping: 'Continua lo shopping',
  wishlistTitle: 'La mia lista dei desideri',
  wishlistEmpty: 'La tua lista dei desideri è vuota.',
  addToCart: 'Aggiungi al carrello',
  addAllToCart: 'Aggiungi tutto al carrello',
  remove: 'Rimuovi',
  removed: 'Rimosso dalla tua lista dei desideri.',
  share: 'Condividi questa lista',
  shareIntro: 'Chiunque abbia questo link può vedere la tua lista:',
  shareUnavailable: 'Questo negozio non consente di condividere le liste.',
  unavailable: 'Non più disponibile',
  loading: 'Caricamento della lista…',
  login: 'Accedi per ritrovare la tua lista su ogni dispositivo',
  noscript: 'Attiva JavaScript per vedere cosa hai salvato su questo dispositivo, oppure accedi.',
  previousPage: 'Pagina precedente',
  nextPage: 'Pagina successiva',
  pageNumber: 'Pagina {page}',
  sharedEmpty: 'Questa lista è vuota.',
  sharedExpiredTitle: 'Questo link alla lista è scaduto',
  sharedExpiredText: 'Chiedi un nuovo link a chi te l’ha condiviso.',
  sharedUnknownTitle: 'Lista non trovata',
  sharedUnknownText: 'Il link potrebbe essere errato o essere stato ritirato.',
  reviewHeading: 'Recensisci {title}',
  reviewHeadingNoTitle: 'Scrivi una recensione',
  reviewIntro: 'Grazie per il tuo ordine. Racconta agli altri clienti cosa ne pensi.',
  rating: 'Valutazione',
  star1: '1 stella',
  star2: '2 stelle',
  star3: '3 stelle',
  star4: '4 stelle',
  star5: '5 stelle',
  reviewTitle: 'Titolo (facoltativo)',
  reviewBody: 'La tua recensione',
  reviewName: 'Il tuo nome',
  reviewEmail: 'E-mail',
  reviewEmailHint: 'Non viene mai mostrata con la recensione.',
  required: 'obbligatorio',
  submit: 'Invia recensione',
  thanksTitle: 'Grazie per la tua recensione!',
  thanksPending: 'Comparirà nel negozio dopo l’approvazione.',
  thanksPublished: 'Ora è visibile nella pagina del prodotto.',
  errorsHeading: 'Correggi quanto segue:',
  errorRating: 'Scegli una valutazione da 1 a 5 stelle.',
  errorBody: 'Scrivi la tua recensione (massimo 5.000 caratteri).',
  errorName: 'Inserisci il tuo nome (massimo 100 caratteri).',
  errorEmail: 'Inserisci un indirizzo e-mail valido.',
  errorTitle: 'Il titolo può avere al massimo 150 caratteri.',
  errorDuplicate: 'Abbiamo già ricevuto una tua recensione di questo prodotto.',
  invitationUsedTitle: 'Questo link di recensione è già stato usato',
  invitationUsedText: 'La tua recensione è stata ricevuta. Grazie!',
  invitationExpiredTitle: 'Questo link di recensione è scaduto',
  invitationExpiredText: 'I link di recensione sono validi 90 giorni dopo l’ordine.',
  invitationUnknownTitle: 'Questo link di recensione non è valido',
  invitationUnknownText: 'Controlla di aver copiato l’intero link dall’e-mail.',
  productMissingTitle: 'Questo prodotto non è più disponibile',
  productMissingText: 'Il prodotto da recensire non si trova più nel negozio.',
}

const nl: PageStrings = {
  continueShopping: 'Verder winkelen',
  wishlistTitle: 'Mijn verlanglijst',
  wishlistEmpty: 'Je verlanglijst is leeg.',
  addToCart: 'In winkelwagen',
  addAllToCart: 'Alles in winkelwagen',
  remove: 'Verwijderen',
  removed: 'Van je verlanglijst verwijderd.',
  share: 'Deze verlanglijst delen',
  shareIntro: 'Iedereen met deze link kan je verlanglijst zien:',
  shareUnavailable: 'In deze winkel kunnen verlanglijsten niet worden gedeeld.',
  unavailable: 'Niet meer beschikbaar',
  loading: 'Je verlanglijst wordt geladen…',
  login: 'Log in om je verlanglijst op al je apparaten te zien',
  noscript: 'Zet JavaScript aan om te zien wat je op dit apparaat hebt bewaard, of log in.',
  previousPage: 'Vorige pagina',
  nextPage: 'Volgende pagina',
  pageNumber: 'Pagina {page}',
  sharedEmpty: 'Deze verlanglijst is leeg.',
  sharedExpiredTitle: 'Deze link naar de verlanglijst is verlopen',
  sharedExpiredText: 'Vraag degene die hem deelde om een nieuwe link.',
  sharedUnknownTitle: 'Deze verlanglijst is niet gevonden',
  sharedUnknownText: 'De link is misschien verkeerd getypt of ingetrokken.',
  reviewHeading: 'Beoordeel {title}',
  reviewHeadingNoTitle: 'Schrijf een review',
  reviewIntro: 'Bedankt voor je bestelling. Vertel andere klanten wat je ervan vindt.',
  rating: 'Beoordeling',
  star1: '1 ster',
  star2: '2 sterren',
  star3: '3 sterren',
  star4: '4 sterren',
  star5: '5 sterren',
  reviewTitle: 'Titel (optioneel)',
  reviewBody: 'Je review',
  reviewName: 'Je naam',
  reviewEmail: 'E-mail',
  reviewEmailHint: 'Wordt nooit bij je review getoond.',
  required: 'verplicht',
  submit: 'Review versturen',
  thanksTitle: 'Bedankt voor je review!',
  thanksPending: 'Hij verschijnt in de winkel zodra hij is goedgekeurd.',
  thanksPublished: 'Hij staat nu op de productpagina.',
  errorsHeading: 'Verbeter het volgende:',
  errorRating: 'Kies een beoordeling van 1 tot 5 sterren.',
  errorBody: 'Schrijf je review (maximaal 5.000 tekens).',
  errorName: 'Vul je naam in (maximaal 100 tekens).',
  errorEmail: 'Vul een geldig e-mailadres in.',
  errorTitle: 'De titel mag maximaal 150 tekens hebben.',
  errorDuplicate: 'We hebben al een review van jou over dit product ontvangen.',
  invitationUsedTitle: 'Deze reviewlink is al gebruikt',
  invitationUsedText: 'Je review is ontvangen. Bedankt!',
  invitationExpiredTitle: 'Deze reviewlink is verlopen',
  invitationExpiredText: 'Reviewlinks zijn 90 dagen na de bestelling geldig.',
  invitationUnknownTitle: 'Deze reviewlink is niet geldig',
  invitationUnknownText: 'Controleer of de hele link uit de e-mail is gekopieerd.',
  productMissingTitle: 'Dit product is niet meer beschikbaar',
  productMissingText: 'Het product dat je mocht beoordelen, is niet meer in de winkel te vinden.',
}

const ptBR: PageStrings = {
  continueShopping: 'Continuar comprando',
  wishlistTitle: 'Minha lista de desejos',
  wishlistEmpty: 'Sua lista de desejos está vazia.',
  addToCart: 'Adicionar ao carrinho',
  addAllToCart: 'Adicionar tudo ao carrinho',
  remove: 'Remover',
  removed: 'Removido da sua lista de desejos.',
  share: 'Compartilhar esta lista',
  shareIntro: 'Qualquer pessoa com este link pode ver sua lista:',
  shareUnavailable: 'Esta loja não permite compartilhar listas.',
  unavailable: 'Não está mais disponível',
  loading: 'Carregando sua lista…',
  login: 'Entre na sua conta para ver sua lista em todos os dispositivos',
  noscript: 'Ative o JavaScript para ver o que você salvou neste dispositivo, ou entre na sua conta.',
  previousPage: 'Página anterior',
  nextPage: 'Próxima página',
  pageNumber: 'Página {page}',
  sharedEmpty: 'Esta lista está vazia.',
  sharedExpiredTitle: 'Este link da lista expirou',
  sharedExpiredText: 'Peça um novo link a quem compartilhou.',
  sharedUnknownTitle: 'Esta lista não foi encontrada',
  sharedUnknownText: 'O link pode ter sido digitado errado ou retirado.',
  reviewHeading: 'Avalie {title}',
  reviewHeadingNoTitle: 'Escrever uma avaliação',
  reviewIntro: 'Obrigado pelo seu pedido. Conte aos outros clientes o que você achou.',
  rating: 'Nota',
  star1: '1 estrela',
  star2: '2 estrelas',
  star3: '3 estrelas',
  star4: '4 estrelas',
  star5: '5 estrelas',
  reviewTitle: 'Título (opcional)',
  reviewBody: 'Sua avaliação',
  reviewName: 'Seu nome',
  reviewEmail: 'E-mail',
  reviewEmailHint: 'Nunca é exibido com a sua avaliação.',
  required: 'obrigatório',
  submit: 'Enviar avaliação',
  thanksTitle: 'Obrigado pela sua avaliação!',
  thanksPending: 'Ela aparecerá na loja depois de aprovada.',
  thanksPublished: 'Ela já está na página do produto.',
  errorsHeading: 'Corrija o seguinte:',
  errorRating: 'Escolha uma nota de 1 a 5 estrelas.',
  errorBody: 'Escreva sua avaliação (até 5.000 caracteres).',
  errorName: 'Informe seu nome (até 100 caracteres).',
  errorEmail: 'Informe um e-mail válido.',
  errorTitle: 'O título pode ter até 150 caracteres.',
  errorDuplicate: 'Já recebemos uma avaliação sua deste produto.',
  invitationUsedTitle: 'Este link de avaliação já foi usado',
  invitationUsedText: 'Recebemos sua avaliação. Obrigado!',
  invitationExpiredTitle: 'Este link de avaliação expirou',
  invitationExpiredText: 'Os links de avaliação valem por 90 dias após o pedido.',
  invitationUnknownTitle: 'Este link de avaliação não é válido',
  invitationUnknownText: 'Verifique se o link inteiro foi copiado do e-mail.',
  productMissingTitle: 'Este produto não está mais disponível',
  productMissingText: 'O produto que você foi convidado a avaliar não está mais na loja.',
}

const ja: PageStrings = {
  continueShopping: '買い物を続ける',
  wishlistTitle: 'ほしい物リスト',
  wishlistEmpty: 'ほしい物リストは空です。',
  addToCart: 'カートに追加',
  addAllToCart: 'すべてカートに追加',
  remove: '削除',
  removed: 'ほしい物リストから削除しました。',
  share: 'このリストを共有',
  shareIntro: 'このリンクを知っている人はリストを見ることができます：',
  shareUnavailable: 'このショップではリストを共有できません。',
  unavailable: '販売終了',
  loading: 'リストを読み込んでいます…',
  login: 'ログインすると、どの端末でもリストを見られます',
  noscript: 'この端末に保存した商品を見るには JavaScript を有効にするか、ログインしてください。',
  previousPage: '前のページ',
  nextPage: '次のページ',
  pageNumber: '{page}ページ',
  sharedEmpty: 'このリストは空です。',
  sharedExpiredTitle: 'このリストのリンクは有効期限が切れています',
  sharedExpiredText: '共有した人に新しいリンクを頼んでください。',
  sharedUnknownTitle: 'リストが見つかりません',
  sharedUnknownText: 'リンクが間違っているか、取り消された可能性があります。',
  reviewHeading: '{title}のレビュー',
  reviewHeadingNoTitle: 'レビューを書く',
  reviewIntro: 'ご注文ありがとうございました。ほかのお客様に感想を教えてください。',
  rating: '評価',
  star1: '星1つ',
  star2: '星2つ',
  star3: '星3つ',
  star4: '星4つ',
  star5: '星5つ',
  reviewTitle: 'タイトル（任意）',
  reviewBody: 'レビュー',
  reviewName: 'お名前',
  reviewEmail: 'メールアドレス',
  reviewEmailHint: 'レビューと一緒に表示されることはありません。',
  required: '必須',
  submit: 'レビューを送信',
  thanksTitle: 'レビューありがとうございます！',
  thanksPending: '承認後にショップに表示されます。',
  thanksPublished: '商品ページに掲載されました。',
  errorsHeading: '次の項目を修正してください：',
  errorRating: '1〜5の星で評価を選んでください。',
  errorBody: 'レビューを入力してください（5,000文字以内）。',
  errorName: 'お名前を入力してください（100文字以内）。',
  errorEmail: '有効なメールアドレスを入力してください。',
  errorTitle: 'タイトルは150文字以内です。',
  errorDuplicate: 'この商品のレビューはすでに受け付けています。',
  invitationUsedTitle: 'このレビューリンクは使用済みです',
  invitationUsedText: 'レビューを受け付けました。ありがとうございます！',
  invitationExpiredTitle: 'このレビューリンクは有効期限が切れています',
  invitationExpiredText: 'レビューリンクの有効期間はご注文から90日です。',
  invitationUnknownTitle: 'このレビューリンクは無効です',
  invitationUnknownText: 'メールのリンクがすべてコピーされているか確認してください。',
  productMissingTitle: 'この商品は販売を終了しました',
  productMissingText: 'レビューをお願いした商品がショップに見つかりません。',
}

export const PAGE_STRINGS: Record<PageLocale, PageStrings> = { en, fr, de, es, it, nl, 'pt-BR': ptBR, ja }

/** Merchant overrides: per language, any key; unknown languages and keys are ignored. */
export type StringOverrides = Partial<Record<string, Partial<Record<string, string>>>>

/** The shop's `storefront_strings` setting, as stored: shipped languages and known keys only. */
export type StorefrontStrings = Partial<Record<PageLocale, Partial<Record<PageStringKey, string>>>>

export const PAGE_STRING_KEYS = Object.keys(en) as PageStringKey[]
/** The longest override, in characters (code points). */
export const MAX_OVERRIDE_LENGTH = 500

/**
 * A `storefront_strings` value checked: `null` (no overrides), or an object keyed by shipped
 * language whose values are objects keyed by known string keys, each a text of 1..500
 * characters once trimmed that both backends store (no NUL, no lone surrogate). Texts are
 * stored trimmed; languages left with no text are dropped, and nothing left is `null`.
 * The problems found, each with its path under `root`, when it is not.
 */
export function storefrontStrings(value: unknown, root: string): { ok: true; value: StorefrontStrings | null } | { ok: false; details: { path: string; message: string }[] } {
  const details: { path: string; message: string }[] = []
  const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
  if (value === null) return { ok: true, value: null }
  if (!isRecord(value)) return { ok: false, details: [{ path: root, message: 'must be an object keyed by language, or null' }] }
  const out: StorefrontStrings = {}
  for (const [locale, texts] of Object.entries(value)) {
    const at = `${root}.${locale}`
    if (!(PAGE_LOCALES as readonly string[]).includes(locale)) {
      details.push({ path: at, message: `is not a language of the pages; one of: ${PAGE_LOCALES.join(', ')}` })
      continue
    }
    if (!isRecord(texts)) {
      details.push({ path: at, message: 'must be an object keyed by string key' })
      continue
    }
    const own: Partial<Record<PageStringKey, string>> = {}
    for (const [key, text] of Object.entries(texts)) {
      const path = `${at}.${key}`
      if (!(PAGE_STRING_KEYS as string[]).includes(key)) details.push({ path, message: 'is not a known string key (docs/api.md lists them)' })
      else if (typeof text !== 'string') details.push({ path, message: 'must be a string' })
      else if (text.includes('\u0000')) details.push({ path, message: 'must not contain the NUL character (U+0000)' })
      else if (!text.isWellFormed()) details.push({ path, message: 'must be well-formed Unicode (no lone surrogate such as \\ud800)' })
      else {
        const trimmed = text.trim()
        const length = [...trimmed].length
        if (length < 1 || length > MAX_OVERRIDE_LENGTH) details.push({ path, message: `must be 1..${MAX_OVERRIDE_LENGTH} characters once trimmed` })
        else own[key as PageStringKey] = trimmed
      }
    }
    if (Object.keys(own).length > 0) out[locale as PageLocale] = own
  }
  if (details.length > 0) return { ok: false, details }
  return { ok: true, value: Object.keys(out).length === 0 ? null : out }
}

/** A supported language for a page locale such as `fr`, `fr-CA`, `pt-BR`, `pt-PT` (→ `en`: only Brazilian Portuguese ships). */
export function supportedLocale(raw: string | undefined | null): PageLocale {
  if (!raw) return 'en'
  const tag = raw.trim().toLowerCase()
  if (tag === 'pt-br' || tag === 'pt') return 'pt-BR'
  const lang = tag.split(/[-_]/)[0] ?? ''
  return (PAGE_LOCALES as readonly string[]).includes(lang) && lang !== 'pt' ? (lang as PageLocale) : 'en'
}

/** The best supported language of an `Accept-Language` header (by q-value, then order); `en` when none. */
export function negotiateLocale(acceptLanguage: string | undefined): PageLocale {
  if (!acceptLanguage) return 'en'
  const ranked = acceptLanguage
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';')
      const q = Number(params.find((p) => p.trim().startsWith('q='))?.trim().slice(2) ?? '1')
      return { tag: tag.trim(), q: Number.isFinite(q) ? q : 0, index }
    })
    .filter((r) => r.tag !== '' && r.tag !== '*' && r.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
  for (const r of ranked) {
    const l = r.tag.toLowerCase()
    if (l === 'pt-br' || l === 'pt' || (PAGE_LOCALES as readonly string[]).includes(l.split('-')[0] ?? '')) {
      if (l.startsWith('pt') && l !== 'pt' && l !== 'pt-br') continue
      return supportedLocale(r.tag)
    }
  }
  return 'en'
}

/** The texts of one language with the merchant's overrides applied (blank overrides are ignored). */
export function pageStrings(locale: PageLocale, overrides: StringOverrides = {}): PageStrings {
  const own = overrides[locale] ?? {}
  const out = { ...PAGE_STRINGS[locale] }
  for (const key of Object.keys(out) as PageStringKey[]) {
    const v = own[key]
    if (typeof v === 'string' && v.trim() !== '') out[key] = v
  }
  return out
}

/** `{title}` filled in. */
export function fill(text: string, values: Record<string, string>): string {
  return text.replace(/\{(\w+)\}/g, (m, name: string) => values[name] ?? m)
}
