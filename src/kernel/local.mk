# src/kernel/: the batch kernels (src/kernel/README.md).
EXTRA_DIST += src/kernel/README.md
noinst_LTLIBRARIES += src/kernel/libskkernel.la
src_kernel_libskkernel_la_SOURCES = \
	src/kernel/sk_kernel.c src/kernel/sk_kernel.h src/kernel/sk_kernel_f32.c \
	src/kernel/sk_kernel_group.h src/kernel/sk_kernel_impl.h src/kernel/sk_kernel_lanes.h \
	src/kernel/sk_kernel_lanes_f32.h src/kernel/sk_kernel_rows.h src/kernel/sk_kernel_store.h
src_kernel_libskkernel_la_CPPFLAGS = $(SK_CPPFLAGS) $(SK_INC_kernel)
src_kernel_libskkernel_la_CFLAGS = $(WING_CFLAGS)
