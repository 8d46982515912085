# src/io/: what comes in and goes out as bytes (src/io/README.md).
EXTRA_DIST += src/io/README.md
noinst_LTLIBRARIES += src/io/libskio.la
src_io_libskio_la_SOURCES = \
	src/io/sk_anim_json.c src/io/sk_animops.c src/io/sk_animops.h src/io/sk_answer.c src/io/sk_answer.h \
	src/io/sk_banim.c src/io/sk_banim.h src/io/sk_events_json.c src/io/sk_events_json.h src/io/sk_fastpose.c src/io/sk_fastpose.h src/io/sk_gltf.c \
	src/io/sk_geom.c src/io/sk_geom.h src/io/sk_geom_rays.c src/io/sk_gltf.h src/io/sk_gltf_int.h src/io/sk_gltf_mesh.c src/io/sk_gltf_mesh.h \
	src/io/sk_gltf_nodes.c src/io/sk_gltf_skin.c src/io/sk_json.c src/io/sk_json.h src/io/sk_ops.c src/io/sk_ops.h \
	src/io/sk_pose.c src/io/sk_pose.h src/io/sk_pose_anim.c src/io/sk_pose_blend.c src/io/sk_pose_frames.c \
	src/io/sk_pose_frames.h src/io/sk_pose_int.h src/io/sk_pose_range.c \
	src/io/sk_pose_range.h src/io/sk_record.c src/io/sk_record.h \
	src/io/sk_retarget_json.c src/io/sk_retarget_json.h
src_io_libskio_la_CPPFLAGS = $(SK_CPPFLAGS) $(SK_INC_io)
src_io_libskio_la_CFLAGS = $(WING_CFLAGS)
