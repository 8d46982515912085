/* sk_frames' private header: what sk_frames.c (answers, runs, sinks) and
 * sk_frames_plan.c (the batch kernel's plan and input) share. Private to
 * those two. */
#ifndef SK_FRAMES_INT_H
#define SK_FRAMES_INT_H

#include "sk_frames.h"

/* Grow-only scratch (sk_frames_scratch): the planning's per-bone arrays;
 * room for one materialised frame of a range-form pose; a line-aligned
 * buffer of `n` elements of `size` bytes (a 16-pose row of the blocked
 * layout is one cache line). 0 or SK_ENOMEM. */
int sk_frames__reserve_bones(sk_frames_scratch *sc, size_t bones);
int sk_frames__reserve_ovr(sk_frames_scratch *sc, size_t bones);
int sk_frames__reserve_aligned(void **p, size_t *cap, size_t n, size_t size);

/* Each bone's kernel mode over the whole batch poses[0..n), into sc->mode
 * (and the plan's marks into sc->changed). 0 or SK_ENOMEM. */
int sk_frames__plan(const sk_model *e, const sk_pose *poses, size_t n, bool fast, sk_frames_scratch *sc);
/* Fills the kernel's input for poses[0..n) (a slice of the planned batch)
 * and runs it into `dest` (n * (B + 1) * 16 floats), on up to `threads`
 * threads for large slices. 0, SK_EINVAL (the kernel refused the job) or
 * SK_ENOMEM. */
int sk_frames__fill_run(const sk_model *e, const sk_pose *poses, size_t n, bool fast, sk_frames_scratch *sc,
                        float *dest, unsigned threads);

#endif
