/* sk_list: an intrusive, circular, doubly linked list, after libuv's
 * src/queue.h.
 *
 * The owner embeds an sk_list node in each element and one more as the
 * list's head; an empty list is a head linked to itself, so insert and
 * remove never test for the ends. sk_list_data turns a node back into its
 * element. No allocation, no state beyond the nodes: the owner's locking
 * (the daemon's loop thread) covers the list.
 *
 * A node is linked or unlinked; sk_list_init and sk_list_remove leave it
 * unlinked (linked to itself), so sk_list_linked tells which, and removing
 * an unlinked node is a no-op. A node zeroed by calloc is neither: call
 * sk_list_init before its first use. */
#ifndef SK_LIST_H
#define SK_LIST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sk_list {
  struct sk_list *next, *prev;
} sk_list;

/* The element of `type` whose member `field` is the node `node`. */
#define sk_list_data(node, type, field) ((type *)((char *)(node) - offsetof(type, field)))

/* Walks `head`'s nodes from first to last into `q` (an sk_list *); the
 * body must not remove `q`. */
#define sk_list_foreach(q, head) for ((q) = (head)->next; (q) != (head); (q) = (q)->next)
/* Last to first. */
#define sk_list_foreach_reverse(q, head) for ((q) = (head)->prev; (q) != (head); (q) = (q)->prev)

static inline void sk_list_init(sk_list *q) { q->next = q->prev = q; }

/* True when the list `head` has no element. */
static inline bool sk_list_empty(const sk_list *head) { return head->next == head; }

/* True when the element node `q` is in a list. */
static inline bool sk_list_linked(const sk_list *q) { return q->next != q; }

/* The first and the last node of `head`: `head` itself when empty. */
static inline sk_list *sk_list_head(const sk_list *head) { return head->next; }
static inline sk_list *sk_list_tail(const sk_list *head) { return head->prev; }

/* Links `q` (unlinked) first in `head`. */
static inline void sk_list_insert_head(sk_list *head, sk_list *q) {
  q->next = head->next;
  q->prev = head;
  q->next->prev = q;
  head->next = q;
}

/* Links `q` (unlinked) last in `head`. */
static inline void sk_list_insert_tail(sk_list *head, sk_list *q) {
  q->next = head;
  q->prev = head->prev;
  q->prev->next = q;
  head->prev = q;
}

/* Unlinks `q` from its list and leaves it unlinked. */
static inline void sk_list_remove(sk_list *q) {
  q->prev->next = q->next;
  q->next->prev = q->prev;
  sk_list_init(q);
}

#endif
