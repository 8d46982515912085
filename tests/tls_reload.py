#!/usr/bin/env python3
"""HTTPS end to end (issue 11): skinnerd with --tls-cert/--tls-key and
--tokens, certificates made at test time with the openssl CLI.

1. a client that trusts certificate A gets /healthz over TLS; plain HTTP on
   the TLS port gets no answer; bearer tokens work over TLS (401, then 200);
2. certificate B replaces A on disk, SIGHUP: new handshakes present B, and a
   keep-alive connection opened under A keeps working;
3. a broken certificate file, SIGHUP: B stays, the daemon says why;
4. SIGTERM: exit 0.

Exit 0 when every check passes, 1 otherwise, 77 (skip) without openssl.
"""
import http.client
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

TOKEN = "tls-reader-0123456789abcdef"
failures = []


def check(cond, what):
    print("%s - %s" % ("ok" if cond else "not ok", what))
    if not cond:
        failures.append(what)


def make_cert(d, name):
    cert, key = os.path.join(d, name + ".crt"), os.path.join(d, name + ".key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cert, key


def der_of(pem_path):
    with open(pem_path) as f:
        return ssl.PEM_cert_to_DER_cert(f.read())


def context(cafile):
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.check_hostname = True
    return ctx


def peer_der(port, cafile):
    """The certificate a fresh handshake presents (verified against cafile)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        with context(cafile).wrap_socket(s, server_hostname="localhost") as t:
            return t.getpeercert(binary_form=True)


def get(conn, path, token=None):
    headers = {"Host": "localhost"}
    if token:
        headers["Authorization"] = "Bearer " + token
    conn.request("GET", path, headers=headers)
    r = conn.getresponse()
    r.read()
    return r.status


def replace(src, dst):
    """Copies src over dst atomically: the daemon never reads half a file."""
    shutil.copyfile(src, dst + ".new")
    os.replace(dst + ".new", dst)


def main():
    binary = os.environ.get("SKINNERD", "./skinnerd")
    if shutil.which("openssl") is None:
        print("# SKIP: openssl not found")
        return 77
    d = tempfile.mkdtemp(prefix="sk_tls_")
    try:
        cert_a, key_a = make_cert(d, "a")
        cert_b, key_b = make_cert(d, "b")
        live_cert, live_key = os.path.join(d, "live.crt"), os.path.join(d, "live.key")
        replace(cert_a, live_cert)
        replace(key_a, live_key)
        tokens = os.path.join(d, "tokens")
        with open(tokens, "w") as f:
            f.write("%s read\n" % TOKEN)
        log = open(os.path.join(d, "log"), "w+")
        p = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--tls-cert", live_cert, "--tls-key", live_key,
                              "--tokens", tokens], stdout=subprocess.PIPE, stderr=log)
        try:
            line = p.stdout.readline()
            m = re.match(rb"listening on 127\.0\.0\.1:(\d+)\s*$", line)
            if not m:
                print("not ok - skinnerd did not start: %r" % line)
                return 1
            port = int(m.group(1))

            check(peer_der(port, cert_a) == der_of(cert_a), "the first handshake presents certificate A")
            ka = http.client.HTTPSConnection("localhost", port, timeout=10, context=context(cert_a))
            # "localhost" resolves to 127.0.0.1 here; the name is what the certificate is checked against
            check(get(ka, "/healthz") == 200, "GET /healthz over TLS: 200")
            check(get(ka, "/v1/skeletons") == 401, "no token over TLS: 401")
            check(get(ka, "/v1/skeletons", TOKEN) == 200, "read token over TLS: 200")

            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
                try:
                    data = s.recv(100)
                except (ConnectionResetError, socket.timeout):
                    data = b""
                check(not data.startswith(b"HTTP/1.1 200"), "plain HTTP on the TLS port gets no answer")

            replace(cert_b, live_cert)
            replace(key_b, live_key)
            p.send_signal(signal.SIGHUP)
            deadline = time.time() + 10
            seen = None
            while time.time() < deadline:
                try:
                    seen = peer_der(port, cert_b)
                    break
                except ssl.SSLError:
                    time.sleep(0.05)  # still A until the reload runs
            check(seen == der_of(cert_b), "after SIGHUP new handshakes present certificate B")
            check(get(ka, "/healthz") == 200, "the keep-alive connection opened under A still works")
            check(get(ka, "/v1/skeletons", TOKEN) == 200, "and still carries requests with a token")

            with open(live_cert, "w") as f:
                f.write("-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n")
            p.send_signal(signal.SIGHUP)
            time.sleep(0.5)
            check(peer_der(port, cert_b) == der_of(cert_b), "a broken certificate file keeps certificate B")
            log.flush()
            log.seek(0)
            text = log.read()
            check("keeping the previous certificate" in text and live_cert in text,
                  "the daemon says why it kept the certificate")
            check(get(ka, "/healthz") == 200, "the keep-alive connection survives both reloads")
            ka.close()
        finally:
            p.send_signal(signal.SIGTERM)
            try:
                rc = p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = p.wait()
        check(rc == 0, "SIGTERM: exit 0 (got %s)" % rc)
        if failures:
            log.seek(0)
            sys.stdout.write("# daemon log:\n" + "".join("# " + l for l in log.readlines()))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print("tls_reload: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
