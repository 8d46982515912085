#!/usr/bin/env python3
"""The rootMotion analysis kept per skeleton version (sk_rootframes' memo)
against making it per request, over HTTP, alternating rounds in one run.

  python3 tests/bench/rootframes_memo.py [--rounds 6] [--requests 100]

A round sends `requests` single poses {"animation", "time", "rootMotion"}:
  kept: the same options every time (the model's memo answers after the first);
  made: options the memo cannot hold (its 16 slots filled first with others),
        so every request analyses the clip again.
Prints the median per-request time of each and made/kept, PASS when the
ratio is at least 2 (the analysis is the bulk of such a request).
Run from the build directory (SKINNERD, default ./skinnerd)."""
import argparse, os, statistics, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from skinnerd_ops import Daemon  # noqa: E402

DATA = os.path.join(os.environ.get("SK_TEST_DATA", "tests"), "data")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--asset", default="mannequiny-0.3.0.glb")
    ap.add_argument("--clip", default="walk")
    a = ap.parse_args()
    d = Daemon()
    try:
        d.req("PUT", "/v1/skeletons/m", open(os.path.join(DATA, a.asset), "rb").read(), "model/gltf-binary")
        pose = lambda rm: {"animation": a.clip, "time": 0.25, "rootMotion": rm}  # noqa: E731
        for k in range(16):  # fill the memo
            d.req("POST", "/v1/skeletons/m/pose", pose({"minimumTurn": 0.01 * (k + 1)}))
        kept, made, serial = [], [], 0
        for _ in range(a.rounds):
            for which in ("kept", "made"):
                t0 = time.perf_counter()
                for _ in range(a.requests):
                    serial += 1
                    rm = {"minimumTurn": 0.01} if which == "kept" else {"minimumTurn": 1 + serial * 1e-6}
                    st, _ = d.req("POST", "/v1/skeletons/m/pose", pose(rm))
                    assert st == 200, st
                (kept if which == "kept" else made).append((time.perf_counter() - t0) / a.requests)
    finally:
        d.stop()
    k, m = statistics.median(kept), statistics.median(made)
    ratio = m / k
    print("%s %s: kept %.3f ms, made %.3f ms a request, made/kept %.2f %s" %
          (a.asset, a.clip, k * 1e3, m * 1e3, ratio, "PASS" if ratio >= 2 else "MISS"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
