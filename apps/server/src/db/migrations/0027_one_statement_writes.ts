import { type Kysely, sql } from 'kysely'
import type { Backend } from '../types.js'

/**
 * PostgreSQL: each wishlist write (add, remove, PATCH, move) as one function, so a write is
 * one round trip to the database (one statement, its own transaction) instead of a
 * transaction of seven or eight (modules/wishlists/wishlists.repo.ts calls them;
 * docs/architecture.md, "Storage"). They do what the transaction of the SQLite path does
 * (wishlists.service.ts), in the same order and under the same owner-row lock: the same
 * tests run against both. They answer a status instead of raising for the refusals the API
 * names, and only before anything was written (an owner row is created only when the list
 * is the default one, which needs no row), so a refused write leaves nothing behind.
 *
 * `p_given` (jsonb): the item fields the request gave, by column name (`variant_id`,
 * `handle`, `metadata` as its JSON text, `quantity`, `note`, `priority`): on insert, the
 * absent ones take their defaults; on update, only the present ones are set.
 *
 * The events' payloads are built here as JSON.stringify builds them in TypeScript (the same
 * keys in the same order, no spaces); the outbox row is written only when an active
 * endpoint of the shop takes the event, as outbox.ts decides. A write that emits several
 * events (a removal by handle) numbers their ids after the one given: `<id>`, `<id>-2`, ….
 *
 * SQLite runs the TypeScript transaction (in process, a round trip costs nothing): nothing to install.
 */
export async function up(db: Kysely<unknown>, backend: Backend): Promise<void> {
  if (backend !== 'postgres') return

  await sql`
    CREATE FUNCTION wishlist_item_payload(p_owner_type text, p_owner_id text, p_product text, p_variant text, p_list text)
    RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT '{"customerId":'
        || CASE WHEN p_owner_type = 'customer' THEN to_json(p_owner_id)::text ELSE 'null,"guestId":' || to_json(p_owner_id)::text END
        || ',"productId":' || to_json(p_product)::text
        || ',"variantId":' || coalesce(to_json(p_variant)::text, 'null')
        || ',"wishlistId":' || to_json(p_list)::text || '}'
    $$
  `.execute(db)

  await sql`
    CREATE FUNCTION wishlist_list_exists(p_shop text, p_owner_type text, p_owner_id text, p_list text)
    RETURNS boolean LANGUAGE sql STABLE AS $$
      SELECT p_list = 'default' OR EXISTS (
        SELECT 1 FROM wishlist_lists l
        WHERE l.shop_id = p_shop AND l.owner_type = p_owner_type AND l.owner_id = p_owner_id AND l.id = p_list)
    $$
  `.execute(db)

  await sql`
    CREATE FUNCTION wishlist_list_count(p_shop text, p_owner_type text, p_owner_id text, p_list text)
    RETURNS bigint LANGUAGE sql STABLE AS $$
      SELECT count(*) FROM wishlist_items i
      WHERE i.shop_id = p_shop AND i.owner_type = p_owner_type AND i.owner_id = p_owner_id AND i.list_id = p_list
    $$
  `.execute(db)

  // Locks the owner's row until the transaction ends (writers of one owner take turns); false when it has none.
  await sql`
    CREATE FUNCTION wishlist_lock_owner(p_shop text, p_owner_type text, p_owner_id text)
    RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM wishlist_owners o
        WHERE o.shop_id = p_shop AND o.owner_type = p_owner_type AND o.owner_id = p_owner_id FOR UPDATE;
      RETURN FOUND;
    END $$
  `.execute(db)

  // The given fields set on a present item (none given: only whether it is present); true when it is.
  await sql`
    CREATE FUNCTION wishlist_set_item_fields(
      p_shop text, p_owner_type text, p_owner_id text, p_list text, p_product text, p_given jsonb)
    RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      IF p_given = '{}'::jsonb THEN
        PERFORM 1 FROM wishlist_items i
          WHERE i.shop_id = p_shop AND i.owner_type = p_owner_type AND i.owner_id = p_owner_id
            AND i.list_id = p_list AND i.product_id = p_product;
      ELSE
        UPDATE wishlist_items i SET
            variant_id = CASE WHEN p_given ? 'variant_id' THEN p_given->>'variant_id' ELSE i.variant_id END,
            handle = CASE WHEN p_given ? 'handle' THEN p_given->>'handle' ELSE i.handle END,
            metadata = CASE WHEN p_given ? 'metadata' THEN p_given->>'metadata' ELSE i.metadata END,
            quantity = CASE WHEN p_given ? 'quantity' THEN (p_given->>'quantity')::integer ELSE i.quantity END,
            note = CASE WHEN p_given ? 'note' THEN p_given->>'note' ELSE i.note END,
            priority = CASE WHEN p_given ? 'priority' THEN p_given->>'priority' ELSE i.priority END
          WHERE i.shop_id = p_shop AND i.owner_type = p_owner_type AND i.owner_id = p_owner_id
            AND i.list_id = p_list AND i.product_id = p_product;
      END IF;
      RETURN FOUND;
    END $$
  `.execute(db)

  // Add: 'list_not_found', 'item_limit', or 'ok' with the item as read and the list's count.
  await sql`
    CREATE FUNCTION wishlist_add_item(
      p_shop text, p_owner_type text, p_owner_id text, p_list text, p_product text,
      p_given jsonb, p_at bigint, p_limit integer, p_event_id text)
    RETURNS TABLE (status text, created boolean, product_id text, variant_id text, handle text, metadata text,
      added_at bigint, quantity integer, note text, priority text, purchased_at bigint, n bigint)
    LANGUAGE plpgsql AS $$
    DECLARE
      v_count integer;
      v_created boolean := false;
    BEGIN
      SELECT o.item_count INTO v_count FROM wishlist_owners o
        WHERE o.shop_id = p_shop AND o.owner_type = p_owner_type AND o.owner_id = p_owner_id FOR UPDATE;
      IF NOT FOUND THEN
        -- Only the default list exists for an owner without a row.
        IF p_list <> 'default' THEN
          status := 'list_not_found';
          RETURN NEXT;
          RETURN;
        END IF;
        -- Concurrent first writes meet on the primary key; the conflict branch locks the row.
        INSERT INTO wishlist_owners AS o (shop_id, owner_type, owner_id, item_count, created_at, updated_at)
          VALUES (p_shop, p_owner_type, p_owner_id, 0, p_at, p_at)
          ON CONFLICT (shop_id, owner_type, owner_id) DO UPDATE SET item_count = o.item_count
          RETURNING o.item_count INTO v_count;
      ELSIF NOT wishlist_list_exists(p_shop, p_owner_type, p_owner_id, p_list) THEN
        status := 'list_not_found';
        RETURN NEXT;
        RETURN;
      END IF;

      IF v_count < p_limit THEN
        INSERT INTO wishlist_items AS i (shop_id, owner_type, owner_id, list_id, product_id, variant_id, handle, metadata,
            added_at, quantity, note, priority)
          VALUES (p_shop, p_owner_type, p_owner_id, p_list, p_product, p_given->>'variant_id', p_given->>'handle',
            p_given->>'metadata', p_at, coalesce((p_given->>'quantity')::integer, 1), p_given->>'note',
            coalesce(p_given->>'priority', 'normal'))
          ON CONFLICT DO NOTHING;
        v_created := FOUND;
      END IF;

      IF NOT v_created THEN
        -- Absent at the limit (present, it was updated).
        IF NOT wishlist_set_item_fields(p_shop, p_owner_type, p_owner_id, p_list, p_product, p_given) THEN
          status := 'item_limit';
          RETURN NEXT;
          RETURN;
        END IF;
      ELSE
        UPDATE wishlist_owners o SET item_count = o.item_count + 1, updated_at = p_at
          WHERE o.shop_id = p_shop AND o.owner_type = p_owner_type AND o.owner_id = p_owner_id;
      END IF;

      SELECT 'ok', v_created, i.product_id, coalesce(i.variant_id, c.default_variant_id), i.handle, i.metadata, i.added_at,
          i.quantity, i.note, i.priority, i.purchased_at, wishlist_list_count(p_shop, p_owner_type, p_owner_id, p_list)
        INTO status, created, product_id, variant_id, handle, metadata, added_at, quantity, note, priority, purchased_at, n
        FROM wishlist_items i
        LEFT JOIN catalog_products c ON c.shop_id = i.shop_id AND c.product_id = i.product_id
        WHERE i.shop_id = p_shop AND i.owner_type = p_owner_type AND i.owner_id = p_owner_id
          AND i.list_id = p_list AND i.product_id = p_product;

      IF v_created THEN
        INSERT INTO outbox (shop_id, id, event, payload, occurred_at, created_at, dispatched)
          SELECT p_shop, p_event_id, 'wishlist.item.added',
              wishlist_item_payload(p_owner_type, p_owner_id, p_product, variant_id, p_list), p_at, p_at, 0
            WHERE EXISTS (SELECT 1 FROM webhook_endpoints e
              WHERE e.shop_id = p_shop AND e.disabled_at IS NULL AND strpos(e.events, '"wishlist.item.added"') > 0);
        INSERT INTO analytics_inbox (shop_id, type, owner_type, owner_id, product_id, occurred_at)
          VALUES (p_shop, 'add', p_owner_type, p_owner_id, p_product, p_at);
      END IF;
      RETURN NEXT;
    END $$
  `.execute(db)

  // Remove (by product ids and/or handles): 'list_not_found', or 'ok' with how many and the list's count.
  await sql`
    CREATE FUNCTION wishlist_remove_items(
      p_shop text, p_owner_type text, p_owner_id text, p_list text, p_products text[], p_handles text[],
      p_at bigint, p_event_id text)
    RETURNS TABLE (status text, removed integer, n bigint)
    LANGUAGE plpgsql AS $$
    DECLARE
      v_owner boolean;
      v_products text[];
      v_variants text[];
    BEGIN
      v_owner := wishlist_lock_owner(p_shop, p_owner_type, p_owner_id);
      IF NOT wishlist_list_exists(p_shop, p_owner_type, p_owner_id, p_list) THEN
        status := 'list_not_found';
        RETURN NEXT;
        RETURN;
      END IF;
      status := 'ok';
      IF NOT v_owner THEN
        removed := 0;
        n := 0;
        RETURN NEXT;
        RETURN;
      END IF;

      -- By product id alone (the DELETE route): an index lookup per id; with handles, the list's items are scanned.
      IF cardinality(p_handles) = 0 THEN
        WITH gone AS (
          DELETE FROM wishlist_items i
            WHERE i.shop_id = p_shop AND i.owner_type = p_owner_type AND i.owner_id = p_owner_id AND i.list_id = p_list
              AND i.product_id = ANY (p_products)
            RETURNING i.product_id, i.variant_id
        )
        SELECT coalesce(array_agg(gone.product_id ORDER BY gone.product_id), '{}'), array_agg(gone.variant_id ORDER BY gone.product_id)
          INTO v_products, v_variants FROM gone;
      ELSE
        WITH gone AS (
          DELETE FROM wishlist_items i
            WHERE i.shop_id = p_shop AND i.owner_type = p_owner_type AND i.owner_id = p_owner_id AND i.list_id = p_list
              AND (i.product_id = ANY (p_products) OR i.handle = ANY (p_handles))
            RETURNING i.product_id, i.variant_id
        )
        SELECT coalesce(array_agg(gone.product_id ORDER BY gone.product_id), '{}'), array_agg(gone.variant_id ORDER BY gone.product_id)
          INTO v_products, v_variants FROM gone;
      END IF;
      removed := cardinality(v_products);

      IF removed > 0 THEN
        WITH named AS (
          SELECT g.product_id, coalesce(g.variant_id, c.default_variant_id) AS variant_id, g.k
            FROM unnest(v_products, v_variants) WITH ORDINALITY AS g (product_id, variant_id, k)
            LEFT JOIN catalog_products c ON c.shop_id = p_shop AND c.product_id = g.product_id
        ), events AS (
          INSERT INTO outbox (shop_id, id, event, payload, occurred_at, created_at, dispatched)
            SELECT p_shop, CASE WHEN named.k = 1 THEN p_event_id ELSE p_event_id || '-' || named.k END, 'wishlist.item.removed',
                wishlist_item_payload(p_owner_type, p_owner_id, named.product_id, named.variant_id, p_list), p_at, p_at, 0
              FROM named
              WHERE EXISTS (SELECT 1 FROM webhook_endpoints e
                WHERE e.shop_id = p_shop AND e.disabled_at IS NULL AND strpos(e.events, '"wishlist.item.removed"') > 0)
        )
        INSERT INTO analytics_inbox (shop_id, type, owner_type, owner_id, product_id, occurred_at)
          SELECT p_shop, 'remove', p_owner_type, p_owner_id, named.product_id, p_at FROM named ORDER BY named.k;
        UPDATE wishlist_owners o SET item_count = o.item_count - removed, updated_at = p_at
          WHERE o.shop_id = p_shop AND o.owner_type = p_owner_type AND o.owner_id = p_owner_id;
      END IF;
      n := wishlist_list_count(p_shop, p_owner_type, p_owner_id, p_list);
      RETURN NEXT;
    END $$
  `.execute(db)

  // PATCH (the item by product id, or by handle when p_product is null): 'list_not_found', 'not_found', or 'ok' with the item.
  await sql`
    CREATE FUNCTION wishlist_patch_item(
      p_shop text, p_owner_type text, p_owner_id text, p_list text, p_product text, p_handle text, p_given jsonb)
    RETURNS TABLE (status text, product_id text, variant_id text, handle text, metadata text,
      added_at bigint, quantity integer, note text, priority text, purchased_at bigint)
    LANGUAGE plpgsql AS $$
    DECLARE
      v_owner boolean;
      v_product text := p_product;
    BEGIN
      v_owner := wishlist_lock_owner(p_shop, p_owner_type, p_owner_id);
      IF NOT wishlist_list_exists(p_shop, p_owner_type, p_owner_id, p_list) THEN
        status := 'list_not_found';
        RETURN NEXT;
        RETURN;
      END IF;
      IF v_owner AND v_product IS NULL THEN
        SELECT i.product_id INTO v_product FROM wishlist_items i
          WHERE i.shop_id = p_shop AND i.owner_type = p_owner_type AND i.owner_id = p_owner_id
            AND i.list_id = p_list AND i.handle = p_handle
          ORDER BY i.product_id LIMIT 1;
      END IF;
      IF NOT v_owner OR v_product IS NULL
          OR NOT wishlist_set_item_fields(p_shop, p_owner_type, p_owner_id, p_list, v_product, p_given) THEN
        status := 'not_found';
        RETURN NEXT;
        RETURN;
      END IF;
      RETURN QUERY
        SELECT 'ok', i.product_id, coalesce(i.variant_id, c.default_variant_id), i.handle, i.metadata, i.added_at,
            i.quantity, i.note, i.priority, i.purchased_at
          FROM wishlist_items i
          LEFT JOIN catalog_products c ON c.shop_id = i.shop_id AND c.product_id = i.product_id
          WHERE i.shop_id = p_shop AND i.owner_type = p_owner_type AND i.owner_id = p_owner_id
            AND i.list_id = p_list AND i.product_id = v_product;
    END $$
  `.execute(db)

  // Move: 'list_not_found' (from or to), 'item_not_in_list', or 'ok'. A product the target holds already leaves the source.
  await sql`
    CREATE FUNCTION wishlist_move_item(
      p_shop text, p_owner_type text, p_owner_id text, p_product text, p_from text, p_to text, p_at bigint)
    RETURNS text LANGUAGE plpgsql AS $$
    DECLARE
      v_owner boolean;
    BEGIN
      v_owner := wishlist_lock_owner(p_shop, p_owner_type, p_owner_id);
      IF NOT wishlist_list_exists(p_shop, p_owner_type, p_owner_id, p_from)
          OR NOT wishlist_list_exists(p_shop, p_owner_type, p_owner_id, p_to) THEN
        RETURN 'list_not_found';
      END IF;
      IF NOT v_owner OR NOT EXISTS (SELECT 1 FROM wishlist_items i
          WHERE i.shop_id = p_shop AND i.owner_type = p_owner_type AND i.owner_id = p_owner_id
            AND i.list_id = p_from AND i.product_id = p_product) THEN
        RETURN 'item_not_in_list';
      END IF;
      IF EXISTS (SELECT 1 FROM wishlist_items i
          WHERE i.shop_id = p_shop AND i.owner_type = p_owner_type AND i.owner_id = p_owner_id
            AND i.list_id = p_to AND i.product_id = p_product) THEN
        DELETE FROM wishlist_items i
          WHERE i.shop_id = p_shop AND i.owner_type = p_owner_type AND i.owner_id = p_owner_id
            AND i.list_id = p_from AND i.product_id = p_product;
        UPDATE wishlist_owners o SET item_count = o.item_count - 1, updated_at = p_at
          WHERE o.shop_id = p_shop AND o.owner_type = p_owner_type AND o.owner_id = p_owner_id;
      ELSE
        UPDATE wishlist_items i SET list_id = p_to
          WHERE i.shop_id = p_shop AND i.owner_type = p_owner_type AND i.owner_id = p_owner_id
            AND i.list_id = p_from AND i.product_id = p_product;
      END IF;
      RETURN 'ok';
    END $$
  `.execute(db)
}
