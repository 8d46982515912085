#!/usr/bin/env python3
"""The docs' cross-references resolve in this tree.

Reads README.md, docs/**/*.md, proto/*.md and man/* and checks:
  - every Markdown link [text](target) to a local file points at one;
  - every repository path they name (docs/..., proto/..., src/..., tests/...,
    man/..., systemd/..., ui/..., tools/...) exists; `x.[ch]` means x.c and
    x.h, a test program `tests/check_x` means tests/check_x.c, paths with a
    placeholder (<id>, NAME, *, {...}, …) or under a build output are skipped;
  - every `docs/x.md`, "Section" (a doc named with a quoted section) names a
    heading of that doc, and every docs/ file named, also in the comments of
    src/, tests/, systemd/, ui/ and tools/.

Prints `docs_links: N passed, N failed`; exit 0 or 1.
"""
import glob
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOTS = ("docs", "proto", "src", "tests", "man", "systemd", "ui", "tools")
PATH_RE = re.compile(r"(?<![\w/.-])((?:%s)/[A-Za-z0-9_./\[\]-]*[A-Za-z0-9_\]/])" % "|".join(ROOTS))
LINK_RE = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
SECTION_RE = re.compile(r"(docs/[a-z0-9_/-]+\.md)`?,?\s+\"([^\"]+)\"")
# Outputs of a build or a run, not files of the tree.
GENERATED = ("tests/ui_browser.out", "tests/ui/node_modules", "tests/oracle/node_modules",
             "src/daemon/sk_ui_files.c", "fuzz-build", "build-san")

passed = failed = 0


def check(what, cond, why=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL - %s: %s" % (what, why))


def exists(path):
    path = path.rstrip("/")
    if os.path.exists(os.path.join(TOP, path)):
        return True
    m = re.fullmatch(r"(.*)\.\[([a-z]+)\]", path)
    if m:
        return all(os.path.exists(os.path.join(TOP, m.group(1) + "." + e)) for e in m.group(2))
    # a test or tool program named without its source's extension
    return any(os.path.exists(os.path.join(TOP, path + e)) for e in (".c", ".py", ".sh", ".mjs", ".in"))


def headings(path):
    text = open(os.path.join(TOP, path), encoding="utf-8").read()
    out = set()
    for line in text.splitlines():
        if line.startswith("#"):
            h = line.lstrip("#").strip()
            out.add(h)
            out.add(h.replace("`", ""))
    # bold run-in headings (**Name.**) count too
    for m in re.finditer(r"\*\*([^*]+?)\.?\*\*", text):
        out.add(m.group(1).strip())
    return out


def sources():
    files = ["README.md"] + sorted(glob.glob(os.path.join(TOP, "docs", "**", "*.md"), recursive=True))
    files += sorted(glob.glob(os.path.join(TOP, "proto", "*.md"))) + sorted(glob.glob(os.path.join(TOP, "man", "*")))
    return [os.path.relpath(f, TOP) if os.path.isabs(f) else f for f in files]


def code_files():
    out = []
    for root in ("src", "tests", "systemd", "ui", "tools"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(TOP, root)):
            dirnames[:] = [d for d in dirnames if d not in ("node_modules", ".deps", ".libs") and not d.endswith(".out")]
            for f in filenames:
                if f.endswith((".c", ".h", ".py", ".sh", ".mjs", ".js", ".in", ".cfg", ".conf", ".mk", ".md")):
                    rel = os.path.relpath(os.path.join(dirpath, f), TOP)
                    if rel != "tests/docs_links.py":
                        out.append(rel)
    return sorted(out)


def main():
    for src in sources():
        text = open(os.path.join(TOP, src), encoding="utf-8").read()
        here = os.path.dirname(src)
        for m in LINK_RE.finditer(text):
            target = m.group(1).split("#")[0]
            if not target or re.match(r"[a-z]+:", target):
                continue
            check("%s links %s" % (src, target), os.path.exists(os.path.join(TOP, here, target)), "no such file")
        for m in PATH_RE.finditer(text):
            path = m.group(1)
            if text[m.end():m.end() + 1] == "<":
                continue  # tests/check_<module>.c: a pattern
            if re.search(r"[<>{}*…]|NAME|/NEW|/OLD", path) or path.startswith(GENERATED):
                continue
            check("%s names %s" % (src, path), exists(path), "no such path")
        for m in SECTION_RE.finditer(text):
            doc, section = m.group(1), " ".join(m.group(2).split())
            if not os.path.exists(os.path.join(TOP, doc)):
                continue  # reported above
            check("%s cites %s, \"%s\"" % (src, doc, section), section in headings(doc), "no such heading")
    for src in code_files():
        try:
            text = open(os.path.join(TOP, src), encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        flat = re.sub(r"\s*\n\s*(?:\*|#|//)?\s*", " ", text)  # citations wrapped in comments
        for m in re.finditer(r"docs/[a-z0-9_/-]+\.md", text):
            check("%s names %s" % (src, m.group(0)), os.path.exists(os.path.join(TOP, m.group(0))), "no such doc")
        for m in SECTION_RE.finditer(flat):
            doc, section = m.group(1), " ".join(m.group(2).split())
            if os.path.exists(os.path.join(TOP, doc)):
                check("%s cites %s, \"%s\"" % (src, doc, section), section in headings(doc), "no such heading")
    print("docs_links: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
