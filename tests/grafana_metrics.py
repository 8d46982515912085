#!/usr/bin/env python3
"""docs/grafana-skinnerd.json against the daemon's /metrics: every metric a
panel's query names (skinnerd_*, process_*) is in the exposition of a
running skinnerd (127.0.0.1, a port it picks, stopped here), a histogram's
_bucket/_sum/_count series included, and every label a query groups or
selects by (`by (...)`, `{label=...}`, `{{label}}`) is one that metric
carries; the dashboard is valid JSON whose panels each have a query.

Prints `grafana_metrics: N passed, N failed`; exit 0 or 1."""
import http.client
import json
import os
import re
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from pycheck import Checks  # noqa: E402

SKINNERD = os.environ.get("SKINNERD", os.path.join(TOP, "skinnerd"))
# Labels Prometheus adds to every series it scrapes.
TARGET_LABELS = {"job", "instance"}


def scrape():
    """{metric name: set of label names} of a fresh daemon that answered a few requests."""
    p = subprocess.Popen([SKINNERD, "--listen", "127.0.0.1:0", "--memory-mb", "64"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        port = int(p.stdout.readline().strip().rsplit(":", 1)[1])
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        with open(os.path.join(TOP, "proto", "examples", "skeleton-babylon-page.json"), "rb") as f:
            c.request("PUT", "/v1/skeletons/page", f.read(), {"Content-Type": "application/json"})
        c.getresponse().read()
        c.request("POST", "/v1/skeletons/page/pose", b"{}", {"Content-Type": "application/json"})
        c.getresponse().read()
        c.request("GET", "/metrics")
        text = c.getresponse().read().decode()
        c.close()
    finally:
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=20)
    series = {}
    for line in text.splitlines():
        m = re.match(r"# TYPE (\S+) (\S+)", line)
        if m:
            series.setdefault(m.group(1), set())
            if m.group(2) == "histogram":
                for suffix in ("_bucket", "_sum", "_count"):
                    series.setdefault(m.group(1) + suffix, set())
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? \S+$", line)  # values may hold braces: {id}
        if m:
            labels = set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', m.group(3) or ""))
            series.setdefault(m.group(1), set()).update(labels)
    return series


def queries(dash):
    for panel in dash["panels"]:
        for t in panel.get("targets", []):
            yield panel["title"], t.get("expr", ""), t.get("legendFormat", "")


def main():
    c = Checks("grafana_metrics")
    with open(os.path.join(TOP, "docs", "grafana-skinnerd.json")) as f:
        dash = json.load(f)
    series = scrape()
    c.check("the daemon exports skinnerd_build_info", "skinnerd_build_info" in series)
    for name in ("process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
                 "process_max_fds", "process_start_time_seconds", "process_virtual_memory_bytes"):
        c.check("the daemon exports %s" % name, name in series)
    c.check("the dashboard has panels", len(dash.get("panels", [])) >= 10)
    for panel in dash["panels"]:
        c.check("panel %r has a query" % panel["title"], any(t.get("expr") for t in panel.get("targets", [])))
    for title, expr, legend in queries(dash):
        names = re.findall(r"\b((?:skinnerd|process)_[a-z0-9_]+)", expr)
        c.check("%r names a metric" % title, bool(names))
        labels_ok = set(TARGET_LABELS)
        for n in names:
            c.check("%r: %s is exported" % (title, n), n in series)
            labels_ok |= series.get(n, set())
            if n.endswith("_bucket"):
                labels_ok.add("le")
        used = set(re.findall(r"by \(([^)]*)\)", expr))
        used = {x.strip() for u in used for x in u.split(",")}
        used |= set(re.findall(r"[{,]([a-z_]+)=~?\"", expr))
        used |= set(re.findall(r"\{\{(\w+)\}\}", legend))
        for label in sorted(used - {""}):
            c.check("%r: label %s is on the series it queries" % (title, label), label in labels_ok)
    return c.summary()


if __name__ == "__main__":
    sys.exit(main())
