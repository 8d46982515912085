# src/base/: errors, checksums, number printing, the memory budget, the spare threads (src/base/README.md).
EXTRA_DIST += src/base/README.md
noinst_LTLIBRARIES += src/base/libskbase.la
src_base_libskbase_la_SOURCES = \
	src/base/sk_base64.c src/base/sk_base64.h src/base/sk_budget.c src/base/sk_budget.h src/base/sk_buf.c src/base/sk_buf.h src/base/sk_cpu.c \
	src/base/sk_cpu.h src/base/sk_error.c src/base/sk_error.h src/base/sk_hash.c src/base/sk_hash.h src/base/sk_near.c src/base/sk_near.h \
	src/base/sk_list.h src/base/sk_numfmt.c src/base/sk_numfmt.h src/base/sk_numfmt_avx2.c src/base/sk_numfmt_f64.c src/base/sk_numfmt_int.h \
	src/base/sk_threads.c src/base/sk_threads.h
src_base_libskbase_la_CPPFLAGS = $(SK_CPPFLAGS) $(SK_INC_base)
src_base_libskbase_la_CFLAGS = $(WING_CFLAGS)
