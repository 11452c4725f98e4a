/* DCTCP's arithmetic, free of the kernel so the same lines compile into the BPF controller
 * and into the unit tests (tests/test_bpf_dctcp.py): the estimator alpha in units of 1/1024
 * and the window it leaves after a round with marks. The includer provides __u32.
 *
 * Behaviour checked against Linux's net/ipv4/tcp_dctcp.c (6.x): alpha starts at 1024
 * (dctcp_alpha_on_init), g = 1/16 (dctcp_shift_g = 4), and the two details below. */
#ifndef ECNLAB_DCTCP_MATH_H
#define ECNLAB_DCTCP_MATH_H

#define DCTCP_ALPHA_ONE 1024U
#define DCTCP_SHIFT_G 4U

/* alpha <- (1 - g) alpha + g F, with F = marked / delivered over the window that just ended.
 * In integers, as Linux: the decay subtracts alpha >> g, except that an alpha too small for
 * that to be positive (below 2^g) drops to zero at once; the gain is marked * 2^(10 - g) /
 * delivered, truncated; the sum is capped at 1024. */
static inline __u32 dctcp_alpha_next(__u32 alpha, __u32 delivered, __u32 marked)
{
	__u32 decay = alpha >> DCTCP_SHIFT_G;

	alpha = decay ? alpha - decay : 0;
	if (marked) {
		__u32 gain = (marked << (10U - DCTCP_SHIFT_G)) / (delivered ? delivered : 1U);

		alpha += gain;
		if (alpha > DCTCP_ALPHA_ONE)
			alpha = DCTCP_ALPHA_ONE;
	}
	return alpha;
}

/* The slow-start threshold after a round with marks: cwnd (1 - alpha / 2), at least 2. */
static inline __u32 dctcp_ssthresh_of(__u32 cwnd, __u32 alpha)
{
	__u32 cut = (cwnd * alpha) >> 11U;

	return cwnd - cut > 2U ? cwnd - cut : 2U;
}

#endif
