#!/usr/bin/env python3
"""HTTPS under the same limits as plain HTTP (issue 31), against the real
skinnerd with a throwaway RSA certificate made by the openssl CLI:

1. --max-per-ip 8: of 40 TLS connections from one address, 8 are admitted
   (before: 40, the certificate callback took the cap's option slot);
   another address is still served;
2. --max-connections 64 held by 64 TLS clients that finished their
   handshake and send nothing: a new TLS client is answered within 2.5 s
   (before: 10.3 s, the header timeout; a TLS connection was never idle);
3. --idle-timeout 1: a silent TLS connection is closed within 3 s, a TLS
   keep-alive client that keeps sending requests is not;
4. protocols and ciphers: TLS 1.0 and 1.1 refused (the client allows them),
   plain RSA key exchange and CBC refused, TLS 1.2 with ECDHE and AES-GCM
   accepted, TLS 1.3 accepted;
5. --tls-priorities overrides the default (TLS 1.2 only: 1.3 refused),
   and a bad string stops the start with exit 2, naming the option.

Exit 0 when every check passes, 1 otherwise, 77 (skip) without openssl.
"""
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

failures = []
GET = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"


def check(cond, what):
    print("%s - %s" % ("ok" if cond else "not ok", what))
    if not cond:
        failures.append(what)


def make_cert(d):
    cert, key = os.path.join(d, "c.crt"), os.path.join(d, "c.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cert, key


class Daemon:
    def __init__(self, binary, cert, key, extra, logpath):
        self.log = open(logpath, "w+")
        self.p = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key] + extra,
                                  stdout=subprocess.PIPE, stderr=self.log)
        line = self.p.stdout.readline()
        m = re.match(rb"listening on 127\.0\.0\.1:(\d+)\s*$", line)
        if not m:
            self.stop()
            raise RuntimeError("skinnerd did not start: %r" % line)
        self.port = int(m.group(1))

    def stop(self):
        self.p.terminate()
        try:
            rc = self.p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
        check(rc == 0, "SIGTERM: exit 0 (got %s)" % rc)


def ctx():
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    c.check_hostname = False
    c.verify_mode = ssl.CERT_NONE
    return c


def tls_from(src, port, timeout=5):
    """A TLS connection from address src, handshake done; None when the
    server closed it instead."""
    s = socket.socket()
    s.settimeout(timeout)
    s.bind((src, 0))
    try:
        s.connect(("127.0.0.1", port))
        return ctx().wrap_socket(s, server_hostname="localhost")
    except (OSError, ssl.SSLError):
        s.close()
        return None


def healthz(t):
    """One request on TLS socket t; True on a 200."""
    try:
        t.sendall(GET)
        data = b""
        while b"\r\n\r\n" not in data or not data.endswith(b"}"):
            chunk = t.recv(4096)
            if not chunk:
                break
            data += chunk
        return data.startswith(b"HTTP/1.1 200")
    except (OSError, ssl.SSLError):
        return False


def closed(t, wait_s):
    """True when the server closed t within wait_s."""
    t.settimeout(wait_s)
    try:
        return t.recv(1) == b""
    except socket.timeout:
        return False
    except (OSError, ssl.SSLError):
        return True


def per_ip(d):
    held = []
    for _ in range(40):
        t = tls_from("127.0.0.2", d.port)
        if t is not None:
            try:
                t.sendall(b"GET /he")  # request bytes: not idle
                held.append(t)
            except (OSError, ssl.SSLError):
                t.close()
    time.sleep(0.3)
    alive = [t for t in held if not closed(t, 0.05)]
    print("# --max-per-ip 8 with TLS: %d of 40 connections from one address admitted" % len(alive))
    check(len(alive) == 8, "--max-per-ip 8 with TLS admits 8 of 40 connections from one address")
    other = tls_from("127.0.0.3", d.port)
    check(other is not None and healthz(other), "another address is served meanwhile")
    for t in held + [other]:
        if t is not None:
            t.close()


def silent_clients(d):
    silent = [tls_from("127.0.0.2", d.port, timeout=15) for _ in range(64)]
    opened = sum(t is not None for t in silent)
    time.sleep(0.3)
    t0 = time.time()
    t = tls_from("127.0.0.3", d.port, timeout=15)
    ok = t is not None and healthz(t)
    wait = time.time() - t0
    print("# --max-connections 64 held by %d silent TLS clients: a new client answered in %.2f s" % (opened, wait))
    check(opened == 64, "64 silent TLS clients connected")
    check(ok and wait < 2.5, "a new TLS client is answered within 2.5 s (took %.2f s)" % wait)
    check(closed(silent[0], 1.0), "the oldest silent TLS connection was closed to make room")
    for s in silent + [t]:
        if s is not None:
            s.close()


def idle_timeout(d):
    quiet = tls_from("127.0.0.2", d.port)
    busy = tls_from("127.0.0.2", d.port)
    t0 = time.time()
    answered = 0
    while time.time() - t0 < 3.0:  # the busy one asks every 0.3 s
        answered += healthz(busy)
        time.sleep(0.3)
    check(quiet is not None and closed(quiet, 0.1), "a silent TLS connection is closed by --idle-timeout 1 in 3 s")
    check(answered >= 8 and healthz(busy), "a TLS client asking every 0.3 s keeps its connection (%d)" % answered)
    quiet.close()
    busy.close()


def s_client(port, *args):
    """The protocol openssl s_client negotiated, or None when refused."""
    r = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % port] + list(args),
                       input=b"", stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
    # "New, V, Cipher is C" names the cipher's version; the session's
    # "Protocol :" line, printed up to TLS 1.2, the one negotiated
    m = re.search(rb"^New, (\S+), Cipher is (\S+)", r.stdout, re.M)
    if m is None or m.group(2) == b"(NONE)":
        return None
    p = re.search(rb"^ *Protocol *: *(\S+)", r.stdout, re.M)
    return (p or m).group(1).decode()


def protocols(d):
    weak = "DEFAULT:@SECLEVEL=0"  # so that the client offers them: the server must be the one refusing
    got = {v: s_client(d.port, "-" + v, "-cipher", weak) for v in ("tls1", "tls1_1", "tls1_2", "tls1_3")}
    print("# negotiated: %s" % ", ".join("%s %s" % (k, v or "refused") for k, v in got.items()))
    check(got["tls1"] is None, "TLS 1.0 is refused")
    check(got["tls1_1"] is None, "TLS 1.1 is refused")
    check(got["tls1_2"] is not None, "TLS 1.2 is accepted")
    check(got["tls1_3"] == "TLSv1.3", "TLS 1.3 is accepted")
    for c in ("AES128-SHA", "AES128-GCM-SHA256", "ECDHE-RSA-AES128-SHA"):
        check(s_client(d.port, "-tls1_2", "-cipher", c + ":@SECLEVEL=0") is None, "TLS 1.2 with %s is refused" % c)
    for c in ("ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-CHACHA20-POLY1305"):
        check(s_client(d.port, "-tls1_2", "-cipher", c) is not None, "TLS 1.2 with %s is accepted" % c)


def main():
    binary = os.environ.get("SKINNERD", "./skinnerd")
    if shutil.which("openssl") is None:
        print("# SKIP: openssl not found")
        return 77
    d = tempfile.mkdtemp(prefix="sk_tlslim_")
    try:
        cert, key = make_cert(d)
        log = os.path.join(d, "log")
        for extra, fn in ((["--max-per-ip", "8"], per_ip),
                          (["--max-connections", "64", "--max-per-ip", "0"], silent_clients),
                          (["--idle-timeout", "1"], idle_timeout), ([], protocols)):
            dm = Daemon(binary, cert, key, extra, log)
            try:
                fn(dm)
            finally:
                dm.stop()
        dm = Daemon(binary, cert, key, ["--tls-priorities", "NORMAL:-VERS-ALL:+VERS-TLS1.2"], log)
        try:
            check(s_client(dm.port, "-tls1_3") is None and s_client(dm.port, "-tls1_2") == "TLSv1.2",
                  "--tls-priorities replaces the default (TLS 1.2 only)")
        finally:
            dm.stop()
        r = subprocess.run([binary, "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key,
                            "--tls-priorities", "NORMAL:+NO-SUCH"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=10)
        check(r.returncode == 2 and b"--tls-priorities" in r.stderr and b"+NO-SUCH" in r.stderr,
              "a bad --tls-priorities stops the start, naming it (%d %r)" % (r.returncode, r.stderr[:200]))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print("tls_limits: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
