# src/daemon/: skinnerd's service (src/daemon/README.md).
EXTRA_DIST += src/daemon/README.md
noinst_LTLIBRARIES += src/daemon/libskd.la
src_daemon_libskd_la_SOURCES = \
	src/daemon/sk_access.c src/daemon/sk_access.h src/daemon/sk_auth.c src/daemon/sk_auth.h \
	src/daemon/sk_cache.c src/daemon/sk_cache.h src/daemon/sk_config.c src/daemon/sk_config.h \
	src/daemon/sk_cors.c src/daemon/sk_cors.h src/daemon/sk_etag.c src/daemon/sk_etag.h \
	src/daemon/sk_http.c src/daemon/sk_http.h src/daemon/sk_http_answer.c src/daemon/sk_http_conn.c src/daemon/sk_http_int.h \
	src/daemon/sk_http_pace.c src/daemon/sk_http_stream.c src/daemon/sk_http_timing.c src/daemon/sk_http_upgrade.c src/daemon/sk_loopstat.c src/daemon/sk_loopstat.h \
	src/daemon/sk_metrics.c src/daemon/sk_metrics.h src/daemon/sk_problem.c src/daemon/sk_problem.h \
	src/daemon/sk_reply.c src/daemon/sk_reply.h src/daemon/sk_routes.c src/daemon/sk_routes.h \
	src/daemon/sk_routes_admin.c src/daemon/sk_routes_anim.c src/daemon/sk_routes_batch.c \
	src/daemon/sk_routes_checks.c src/daemon/sk_routes_cond.c src/daemon/sk_routes_int.h \
	src/daemon/sk_routes_ops.c src/daemon/sk_routes_poses.c src/daemon/sk_routes_rootmotion.c src/daemon/sk_routes_skeletons.c src/daemon/sk_routes_stream.c src/daemon/sk_routes_sse.c \
	src/daemon/sk_routes_upload.c src/daemon/sk_store.c src/daemon/sk_store.h src/daemon/sk_systemd.c \
	src/daemon/sk_systemd.h src/daemon/sk_tls.c src/daemon/sk_tls.h src/daemon/sk_ui.c \
	src/daemon/sk_ui.h src/daemon/sk_ws.c src/daemon/sk_ws.h
src_daemon_libskd_la_CPPFLAGS = $(SK_CPPFLAGS) $(SK_INC_daemon)
src_daemon_libskd_la_CFLAGS = $(WING_CFLAGS)
nodist_src_daemon_libskd_la_SOURCES = src/daemon/sk_ui_files.c src/daemon/sk_ui_spec_files.c
