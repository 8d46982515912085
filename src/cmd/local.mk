# src/cmd/: the programs and the offline tools (src/cmd/README.md).
EXTRA_DIST += src/cmd/README.md
noinst_LTLIBRARIES += src/cmd/libsktools.la
src_cmd_libsktools_la_SOURCES = \
	src/cmd/sk_bench.c src/cmd/sk_bench.h src/cmd/sk_bench_clips.c src/cmd/sk_bench_mix.c \
	src/cmd/sk_bench_mix.h src/cmd/sk_bench_ops.c src/cmd/sk_bench_ops.h src/cmd/sk_bench_time.h \
	src/cmd/sk_eval.c src/cmd/sk_eval.h src/cmd/sk_outfile.c src/cmd/sk_outfile.h src/cmd/sk_shot.c \
	src/cmd/sk_shot_events.c src/cmd/sk_shot_events.h src/cmd/sk_shot_root.c src/cmd/sk_shot_root.h \
	src/cmd/sk_shot_int.h src/cmd/sk_usda.c src/cmd/sk_usda.h \
	src/cmd/sk_shot.h src/cmd/sk_retarget_cmd.c src/cmd/sk_retarget_cmd.h
src_cmd_libsktools_la_CPPFLAGS = $(SK_CPPFLAGS) $(SK_INC_cmd)
src_cmd_libsktools_la_CFLAGS = $(WING_CFLAGS)
