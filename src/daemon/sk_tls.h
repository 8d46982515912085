/* sk_tls: the server certificate and key for libmicrohttpd's HTTPS
 * (GnuTLS), swappable while the daemon runs.
 *
 * libmicrohttpd asks for the certificate on every handshake through a
 * GnuTLS retrieve callback (MHD_OPTION_HTTPS_CERT_CALLBACK, installed by
 * sk_http), which answers with sk_tls_current(). sk_tls_reload() loads new
 * files and makes them current for the next handshakes; sessions already
 * established keep theirs. A failed reload keeps the old pair.
 *
 * Every loaded generation stays in memory until sk_tls_destroy(): GnuTLS
 * keeps pointers to the certificate it was handed for the whole session,
 * and there is no hook telling when the last session using a generation is
 * gone. A generation is a few KB and is added only by an operator's
 * SIGHUP with changed files, so this is bounded in practice. Everything
 * runs on the loop thread. */
#ifndef SK_TLS_H
#define SK_TLS_H

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

#include "sk_error.h"

typedef struct sk_tls sk_tls;

/* The protocols and ciphers offered by default (--tls-priorities): TLS 1.3
 * and 1.2 only, and in 1.2 only ephemeral elliptic-curve key exchange
 * (forward secrecy) with AEAD ciphers (AES-GCM, ChaCha20-Poly1305); no
 * TLS 1.0/1.1, no RSA key exchange, no CBC, no SHA-1 MAC. The server's
 * order wins. Built on NORMAL, so GnuTLS's curves and signature
 * algorithms stay its own. */
#define SK_TLS_DEFAULT_PRIORITIES                                                                                     \
  "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:+CHACHA20-POLY1305:"             \
  "-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:%SERVER_PRECEDENCE"

/* Checks a GnuTLS priority string the way libmicrohttpd will use it
 * (gnutls_priority_init). 0, or SK_EINVAL with err->text quoting the part
 * GnuTLS refused. */
int sk_tls_check_priorities(const char *priorities, sk_error *err);

/* Loads a PEM certificate chain and its PEM private key. *out is new.
 * Errors: SK_EIO (unreadable file), SK_EFORMAT (not PEM, or the key does
 * not match the certificate), SK_ENOMEM; err->text names the file. */
int sk_tls_create(const char *cert_path, const char *key_path, sk_tls **out, sk_error *err);

/* Reloads from the paths given at creation. On error the current pair
 * stays and err says why. */
int sk_tls_reload(sk_tls *t, sk_error *err);

/* The current pair, borrowed (valid until sk_tls_destroy). */
void sk_tls_current(const sk_tls *t, gnutls_pcert_st **pcert, unsigned *npcert, gnutls_privkey_t *key);

/* Number of generations loaded so far (1 after create). */
unsigned sk_tls_generation(const sk_tls *t);

/* Frees every generation. NULL is fine. Only after the HTTP server stopped. */
void sk_tls_destroy(sk_tls *t);

#endif
