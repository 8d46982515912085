# src/anim/: clips, sampling, layers, blends and additive (src/anim/README.md).
EXTRA_DIST += src/anim/README.md
noinst_LTLIBRARIES += src/anim/libskanim.la
src_anim_libskanim_la_SOURCES = \
	src/anim/sk_anim.c src/anim/sk_anim.h src/anim/sk_anim_late.c src/anim/sk_anim_memo.c src/anim/sk_anim_nodes.c src/anim/sk_anim_memo.h src/anim/sk_anim_math.h src/anim/sk_banim_add.c \
	src/anim/sk_banim_add.h src/anim/sk_banim_blend.c src/anim/sk_banim_blend.h \
	src/anim/sk_banim_blend_int.h src/anim/sk_banim_blend_run.c src/anim/sk_layers.c \
	src/anim/sk_layers.h src/anim/sk_sample.c src/anim/sk_sample.h src/anim/sk_sample_build.c \
	src/anim/sk_sample_int.h src/anim/sk_sample_lanes.h src/anim/sk_rootmotion.c src/anim/sk_rootmotion.h \
	src/anim/sk_retarget.c src/anim/sk_retarget.h src/anim/sk_rootmotion_int.h src/anim/sk_rootmotion_inplace.c \
	src/anim/sk_blendin.c src/anim/sk_blendin.h src/anim/sk_events.c src/anim/sk_events.h
src_anim_libskanim_la_CPPFLAGS = $(SK_CPPFLAGS) $(SK_INC_anim)
src_anim_libskanim_la_CFLAGS = $(WING_CFLAGS)
