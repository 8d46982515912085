# src/babylon/: Babylon.js's math, Bone and Skeleton, bit for bit (src/babylon/README.md).
EXTRA_DIST += src/babylon/README.md
noinst_LTLIBRARIES += src/babylon/libskbabylon.la
src_babylon_libskbabylon_la_SOURCES = \
	src/babylon/sk_bone.c src/babylon/sk_bone.h src/babylon/sk_ctrl.c src/babylon/sk_ctrl.h \
	src/babylon/sk_fdlibm.c src/babylon/sk_fdlibm.h src/babylon/sk_mat.c src/babylon/sk_mat.h \
	src/babylon/sk_skeleton.c src/babylon/sk_skeleton.h src/babylon/sk_vsin.c src/babylon/sk_vsin.h \
	src/babylon/sk_vsin_lanes.h
src_babylon_libskbabylon_la_CPPFLAGS = $(SK_CPPFLAGS) $(SK_INC_babylon)
src_babylon_libskbabylon_la_CFLAGS = $(WING_CFLAGS)
