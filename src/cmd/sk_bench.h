/* sk_bench: `skinner bench`, the kernel and clip benchmarks (docs/kernel.md, docs/clips.md). */
#ifndef SK_BENCH_H
#define SK_BENCH_H

/* Runs `skinner bench` with its arguments (argv[0] is "bench"); the exit status. */
int sk_bench_main(int argc, char **argv);
/* Runs `skinner bench --clips` (the same argv, --clips among them); the exit status. */
int sk_bench_clips_main(int argc, char **argv);

#endif
