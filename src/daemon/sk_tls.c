#include "sk_tls.h"

#include <stdlib.h>
#include <string.h>

#define CHAIN_MAX 16

typedef struct gen {
  struct gen *older;
  gnutls_pcert_st pcert[CHAIN_MAX];
  unsigned npcert;
  gnutls_privkey_t key;
} gen;

struct sk_tls {
  char *cert_path, *key_path; /* owned */
  gen *cur;                   /* newest first; every generation kept, see sk_tls.h */
  unsigned generations;
};

static void gen_free(gen *g) {
  for (unsigned i = 0; i < g->npcert; i++)
    gnutls_pcert_deinit(&g->pcert[i]);
  if (g->key != NULL)
    gnutls_privkey_deinit(g->key);
  free(g);
}

/* DER of the public key in `pub`, compared with the one derived from `key`. */
static int key_matches(gnutls_pubkey_t cert_pub, gnutls_privkey_t key) {
  gnutls_pubkey_t kpub;
  if (gnutls_pubkey_init(&kpub) < 0)
    return 0;
  gnutls_datum_t a = {NULL, 0}, b = {NULL, 0};
  int same = gnutls_pubkey_import_privkey(kpub, key, 0, 0) >= 0 &&
             gnutls_pubkey_export2(kpub, GNUTLS_X509_FMT_DER, &a) >= 0 &&
             gnutls_pubkey_export2(cert_pub, GNUTLS_X509_FMT_DER, &b) >= 0 && a.size == b.size &&
             memcmp(a.data, b.data, a.size) == 0;
  gnutls_free(a.data);
  gnutls_free(b.data);
  gnutls_pubkey_deinit(kpub);
  return same;
}

static int gen_load(const char *cert_path, const char *key_path, gen **out, sk_error *err) {
  *out = NULL;
  gen *g = calloc(1, sizeof *g);
  if (g == NULL)
    return sk_error_set(err, SK_ENOMEM, NULL, "out of memory");
  gnutls_datum_t c = {NULL, 0}, k = {NULL, 0};
  int rc = 0;
  if (gnutls_load_file(cert_path, &c) < 0) {
    rc = sk_error_set(err, SK_EIO, NULL, "%s: cannot read the certificate", cert_path);
    goto done;
  }
  if (gnutls_load_file(key_path, &k) < 0) {
    rc = sk_error_set(err, SK_EIO, NULL, "%s: cannot read the key", key_path);
    goto done;
  }
  g->npcert = CHAIN_MAX;
  int grc = gnutls_pcert_list_import_x509_raw(g->pcert, &g->npcert, &c, GNUTLS_X509_FMT_PEM, 0);
  if (grc < 0 || g->npcert == 0) {
    g->npcert = 0;
    rc = sk_error_set(err, SK_EFORMAT, NULL, "%s: not a PEM certificate chain: %s", cert_path,
                      gnutls_strerror(grc));
    goto done;
  }
  if ((grc = gnutls_privkey_init(&g->key)) < 0 ||
      (grc = gnutls_privkey_import_x509_raw(g->key, &k, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
    rc = sk_error_set(err, SK_EFORMAT, NULL, "%s: not a PEM private key: %s", key_path, gnutls_strerror(grc));
    goto done;
  }
  if (!key_matches(g->pcert[0].pubkey, g->key)) {
    rc = sk_error_set(err, SK_EFORMAT, NULL, "%s does not match the certificate in %s", key_path, cert_path);
    goto done;
  }
done:
  if (k.data != NULL) {
    memset(k.data, 0, k.size); /* key material back to the heap cleared */
    gnutls_free(k.data);
  }
  gnutls_free(c.data);
  if (rc != 0) {
    gen_free(g);
    return rc;
  }
  *out = g;
  return 0;
}

int sk_tls_create(const char *cert_path, const char *key_path, sk_tls **out, sk_error *err) {
  *out = NULL;
  sk_tls *t = calloc(1, sizeof *t);
  if (t == NULL || (t->cert_path = strdup(cert_path)) == NULL || (t->key_path = strdup(key_path)) == NULL) {
    sk_tls_destroy(t);
    return sk_error_set(err, SK_ENOMEM, NULL, "out of memory");
  }
  int rc = gen_load(cert_path, key_path, &t->cur, err);
  if (rc != 0) {
    sk_tls_destroy(t);
    return rc;
  }
  t->generations = 1;
  *out = t;
  return 0;
}

int sk_tls_reload(sk_tls *t, sk_error *err) {
  gen *g;
  int rc = gen_load(t->cert_path, t->key_path, &g, err);
  if (rc != 0)
    return rc;
  g->older = t->cur;
  t->cur = g;
  t->generations++;
  return 0;
}

void sk_tls_current(const sk_tls *t, gnutls_pcert_st **pcert, unsigned *npcert, gnutls_privkey_t *key) {
  *pcert = t->cur->pcert;
  *npcert = t->cur->npcert;
  *key = t->cur->key;
}

int sk_tls_check_priorities(const char *priorities, sk_error *err) {
  gnutls_priority_t p;
  const char *at = NULL;
  int grc = gnutls_priority_init(&p, priorities, &at);
  if (grc < 0)
    return sk_error_set(err, SK_EINVAL, NULL, "not a GnuTLS priority string: %s at \"%.40s\"", gnutls_strerror(grc),
                        at != NULL ? at : priorities);
  gnutls_priority_deinit(p);
  return 0;
}

unsigned sk_tls_generation(const sk_tls *t) { return t->generations; }

void sk_tls_destroy(sk_tls *t) {
  if (t == NULL)
    return;
  while (t->cur != NULL) {
    gen *g = t->cur;
    t->cur = g->older;
    gen_free(g);
  }
  free(t->cert_path);
  free(t->key_path);
  free(t);
}
