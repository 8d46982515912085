#!/usr/bin/env python3
"""Instructions per bone of one exact-kernel group, by class, counted by
single-stepping it under gdb (these VMs have no performance counters, and
valgrind does not run AVX-512). Not a test.

  python3 tests/bench/kernel_icount.py /tmp/kernel_group [bones=65] [poses=8] [function=group_avx512]

The binary is tests/bench/kernel_group.c's. 8 poses = one group that does
not prefetch; 64 poses steps the first group, which prefetches the next
block. Takes about 30 s for 65 bones."""
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter

GDB_SCRIPT = r'''
import gdb
gdb.execute("set pagination off")
gdb.execute("break *'%(fn)s'")
gdb.execute("run %(nb)s %(np)s 0 > /dev/null")
ret = int(gdb.parse_and_eval("*(unsigned long *)$sp"))
with open("%(out)s", "w") as f:
    n = 0
    while True:
        pc = int(gdb.parse_and_eval("$pc"))
        if pc == ret:
            break
        f.write("%%x\n" %% pc)
        gdb.execute("stepi", to_string=True)
        n += 1
        if n > 5000000:
            break
gdb.execute("kill")
'''


def classify(op, arg):
    if re.match(r"vf(n)?m(add|sub)|vmulpd|vaddpd|vsubpd", op):
        return "fp"
    if op.startswith("vcvt"):
        return "convert"
    if re.match(r"vunpck|vperm|vinsert|vshuf", op):
        return "shuffle"
    if op.startswith("vbroadcast"):
        return "broadcast"
    if op.startswith("vmov") and "(" in arg.split(",")[-1]:
        return "store"
    if op.startswith("vmov") and "(" in arg:
        return "load"
    if op.startswith("v"):
        return "vector other"
    if op.startswith("prefetch"):
        return "prefetch"
    return "integer/branch"


def main():
    binary = sys.argv[1]
    nb = int(sys.argv[2]) if len(sys.argv) > 2 else 65
    np_ = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    fn = sys.argv[4] if len(sys.argv) > 4 else "group_avx512"
    # The disassembly first: the function's full name (GCC may suffix it,
    # .constprop.0) and where it starts, to map the run's addresses (the
    # executable is position independent) onto objdump's.
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary], capture_output=True, text=True).stdout
    ops, start, name, inside = {}, None, None, False
    for line in dis.splitlines():
        m = re.match(r"([0-9a-f]+) <(%s(\.[^>]*)?)>:" % re.escape(fn), line)
        if m and start is None:
            inside, start, name = True, int(m.group(1), 16), m.group(2)
            continue
        if inside and not line.strip():
            inside = False
        m = re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)", line) if inside else None
        if m:
            ops[int(m.group(1), 16)] = (m.group(2), m.group(3))
    if start is None:
        sys.exit("kernel_icount: no function %s in %s" % (fn, binary))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "pcs")
        script = os.path.join(tmp, "trace.py")
        with open(script, "w") as f:
            f.write(GDB_SCRIPT % {"fn": name, "nb": nb, "np": np_, "out": out})
        r = subprocess.run(["gdb", "-q", "-batch", "-x", script, binary], capture_output=True, text=True, check=False)
        if not os.path.exists(out):
            sys.exit("kernel_icount: gdb failed:\n" + r.stdout + r.stderr)
        pcs = [int(x, 16) for x in open(out).read().split()]
    if not pcs:
        sys.exit("kernel_icount: no trace of %s" % name)
    base = pcs[0] - start
    counts = Counter(classify(*ops[pc - base]) for pc in pcs if pc - base in ops)
    folded = sum(1 for pc in pcs if pc - base in ops and "1to8" in ops[pc - base][1])
    print("%s, %d bones x %d poses: %.1f instructions per bone" % (name, nb, np_, len(pcs) / nb))
    for k, v in counts.most_common():
        print("  %-16s %6.1f" % (k, v / nb))
    print("  (fp with a folded {1to8} broadcast: %.1f)" % (folded / nb))


if __name__ == "__main__":
    main()
