# src/engine/: the published model and the pipeline (src/engine/README.md).
EXTRA_DIST += src/engine/README.md
noinst_LTLIBRARIES += src/engine/libskengine.la
src_engine_libskengine_la_SOURCES = \
	src/engine/sk_clips.c src/engine/sk_clips.h src/engine/sk_cost.c src/engine/sk_cost.h \
	src/engine/sk_frames.c src/engine/sk_frames.h src/engine/sk_frames_int.h src/engine/sk_frames_plan.c \
	src/engine/sk_model.c src/engine/sk_model.h src/engine/sk_poseops.c src/engine/sk_poseops.h \
	src/engine/sk_rootframes.c src/engine/sk_rootframes.h src/engine/sk_eventframes.c src/engine/sk_eventframes.h
src_engine_libskengine_la_CPPFLAGS = $(SK_CPPFLAGS) $(SK_INC_engine)
src_engine_libskengine_la_CFLAGS = $(WING_CFLAGS)
