/* sk_bench_ops: rows of `skinner bench --clips` for the Bone API over HTTP. */
#ifndef SK_BENCH_OPS_H
#define SK_BENCH_OPS_H

#include <stdbool.h>

/* Prints the per-frame cost of a Fox Walk frame range with and without
 * foot IK (text rows, or JSON array members: `first` says no leading
 * comma). Fox.glb is read from `dir`. 0, or 2 when it cannot be loaded. */
int sk_bench_ops_fox(const char *dir, bool quick, bool json, bool first);

#endif
