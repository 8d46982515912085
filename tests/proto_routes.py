#!/usr/bin/env python3
"""The routes agree in three places: every row of the daemon's route table
(src/daemon/sk_routes.c, k_routes) with each method it takes is a path and
operation of proto/openapi.yaml (the preview page's /ui rows excepted: not
API), every operation of proto/openapi.yaml is a row of proto/README.md's
route table, and every route named there is in the contract.

Prints `proto_routes: N passed, N failed`; exit 0 or 1."""
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from pycheck import Checks  # noqa: E402

METHODS = ("get", "put", "post", "patch", "delete")


def contract_ops():
    spec = yaml.safe_load(open(os.path.join(TOP, "proto", "openapi.yaml")))
    return {(m.upper(), path) for path, item in spec["paths"].items() for m in item if m in METHODS}


def table_ops():
    """(METHOD, path) of every row of k_routes, HEAD and OPTIONS left out (every GET takes HEAD)."""
    text = open(os.path.join(TOP, "src", "daemon", "sk_routes.c")).read()
    body = text.split("static const sk_route k_routes[] = {", 1)[1].split("};", 1)[0]
    ops = set()
    for row in re.findall(r"^\s*\{SK_ROUTE_\w+,\s*(\"[^\"]*\"),\s*(true|false),\s*([^,]+),", body, re.M):
        path, per_id, methods = row[0].strip('"'), row[1] == "true", row[2]
        if per_id:
            path = "/v1/skeletons/{id}" + path
        if path.endswith("/animations/"):
            path += "{clip}"
        elif path == "/schemas/":
            path += "{name}"
        for m in re.findall(r"M\((\w+)\)", methods):
            if m.lower() in METHODS:
                ops.add((m, path))
    return ops


def readme_ops():
    """(METHOD, path) named in the first column of proto/README.md's route table."""
    text = open(os.path.join(TOP, "proto", "README.md")).read()
    ops = set()
    for line in text.splitlines():
        if line.startswith("| `"):
            first = line.split("|")[1]
            ops.update(re.findall(r"`(GET|PUT|POST|PATCH|DELETE) (/[^`\s]*)`", first))
    return ops


def main():
    c = Checks("proto_routes")
    contract, table, readme = contract_ops(), table_ops(), readme_ops()
    c.check("the route table parses (%d operations)" % len(table), len(table) >= 15)
    for op in sorted(table):
        if op[1].startswith("/ui"):
            continue
        c.check("%s %s (sk_routes.c) is in proto/openapi.yaml" % op, op in contract)
    for op in sorted(contract):
        c.check("%s %s (openapi.yaml) is a route of skinnerd" % op, op in table)
        c.check("%s %s (openapi.yaml) is in proto/README.md's table" % op, op in readme)
    for op in sorted(readme - contract):
        c.check("%s %s (proto/README.md) is in proto/openapi.yaml" % op, False)
    return c.summary()


if __name__ == "__main__":
    sys.exit(main())
