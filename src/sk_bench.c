/* Placeholder until the batch kernel benchmark lands. */
#include <stdio.h>

int sk_bench_main(int argc, char **argv);

int sk_bench_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "skinner bench: not built yet\n");
  return 1;
}
