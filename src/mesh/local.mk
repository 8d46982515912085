# src/mesh/: skinned vertices, normals, morph targets, bounds (src/mesh/README.md).
EXTRA_DIST += src/mesh/README.md
noinst_LTLIBRARIES += src/mesh/libskmesh.la
src_mesh_libskmesh_la_SOURCES = \
	src/mesh/sk_clipbounds.c src/mesh/sk_clipbounds.h src/mesh/sk_meshout.c src/mesh/sk_meshout.h src/mesh/sk_ray.c src/mesh/sk_ray.h src/mesh/sk_skin.c src/mesh/sk_skin.h \
	src/mesh/sk_skinv.c src/mesh/sk_skinv.h
src_mesh_libskmesh_la_CPPFLAGS = $(SK_CPPFLAGS) $(SK_INC_mesh)
src_mesh_libskmesh_la_CFLAGS = $(WING_CFLAGS)
