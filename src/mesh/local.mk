# src/mesh/: skinned vertices, normals, morph targets, bounds (src/mesh/README.md).
EXTRA_DIST += src/mesh/README.md
