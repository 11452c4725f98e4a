/* EECN's rules free of the kernel, so the same lines compile into the BPF programs and into
 * the unit tests (tests/test_bpf_eecn.py). The includer provides __u8, __u32, __u64, __s64.
 *
 * Ali, Hong, Kim, "A Multilevel Network-assisted Congestion Feedback Mechanism for Network
 * Congestion Control" (EECN), with the simulator's readings (crates/ecnlab/src/schemes/eecn,
 * the module doc names each): Table 1 in the IP ECN field, Table 2 in (ECE, CWR), Algorithms 1
 * and 2 on a window kept in 1/65536 segments. */
#ifndef ECNLAB_EECN_MATH_H
#define ECNLAB_EECN_MATH_H

#define EECN_NONE 0
#define EECN_CL1 1
#define EECN_CL2 2

/* Table 1: 01 capable (level none), 10 CL(1), 11 CL(2); 00 carries no level (returns 3). */
#define EECN_NOT_CAPABLE 3
static inline __u8 eecn_level_of_ip(__u8 ecn)
{
	return ecn == 1 ? EECN_NONE : ecn == 2 ? EECN_CL1 : ecn == 3 ? EECN_CL2 : EECN_NOT_CAPABLE;
}

/* Table 2, on SYN-ACKs and ACKs: (ECE, CWR) 01 none, 10 CL(1), 11 CL(2); 00 echoes nothing
 * (returns 3). On data packets 01 is CWR. */
static inline __u8 eecn_level_of_echo(int ece, int cwr)
{
	return !ece ? (cwr ? EECN_NONE : EECN_NOT_CAPABLE) : cwr ? EECN_CL2 : EECN_CL1;
}

/* The (ECE, CWR) bits that echo `level`, as the TCP flags byte's 0x40 | 0x80. */
static inline __u8 eecn_echo_flags(__u8 level)
{
	return level == EECN_CL2 ? 0xC0 : level == EECN_CL1 ? 0x40 : 0x80;
}

/* The receiver's echo state: CL(2) until CWR, CL(1) for the next `cl1_echo_acks` ACKs. */
struct eecn_echo {
	__u8 cl2;
	__u8 cl1_left;
};

#define EECN_CL1_ECHO_ACKS 3

/* A data packet arrives with IP codepoint `ecn` and the sender's CWR or not (RFC 3168
 * §6.1.3 order: CWR first, then the packet's own codepoint). */
static inline void eecn_on_data(struct eecn_echo *e, __u8 ecn, int cwr)
{
	__u8 level = eecn_level_of_ip(ecn);

	if (cwr)
		e->cl2 = 0;
	if (level == EECN_CL2)
		e->cl2 = 1;
	else if (level == EECN_CL1)
		e->cl1_left = EECN_CL1_ECHO_ACKS;
}

/* The level the receiver's next ACK echoes (one CL(1) repetition used up). */
static inline __u8 eecn_next_echo(struct eecn_echo *e)
{
	__u8 cl1 = e->cl1_left > 0;

	if (e->cl1_left)
		e->cl1_left--;
	return e->cl2 ? EECN_CL2 : cl1 ? EECN_CL1 : EECN_NONE;
}

/* e^-x for x >= 0 given in microseconds (β = cRTT - avgRTT in seconds, the simulator's
 * beta_unit = "s"), as a fraction of 2^16. Halves x until it is at most 1/4 s, takes five
 * terms of the series there (error below 1e-5), then squares back. */
#define EECN_ONE 65536U
static inline __u32 eecn_exp_neg_us(__u64 x_us)
{
	__u64 x = (x_us << 16) / 1000000; /* seconds in 1/65536 */
	__u64 p;
	int halvings = 0;

	for (int i = 0; i < 24 && x > EECN_ONE / 4; i++) {
		x >>= 1;
		halvings++;
	}
	/* 1 - x + x^2/2 - x^3/6 + x^4/24 in 1/65536. */
	{
		__u64 x2 = (x * x) >> 16, x3 = (x2 * x) >> 16, x4 = (x3 * x) >> 16;

		p = EECN_ONE - x + x2 / 2 - x3 / 6 + x4 / 24;
	}
	for (int i = 0; i < 24; i++) {
		if (i >= halvings)
			break;
		p = (p * p) >> 16;
	}
	return (__u32)p;
}

/* The window and its ssthresh, in 1/65536 segments (so σ_ca = 0.02 is 1311, off by 0.02 %). */
#define EECN_SEG 65536U
struct eecn_window {
	__u64 cwnd;
	__u64 ssthresh;
};

/* A decrease stopped at `floor_seg` segments, or at the window if that is already lower. */
static inline __u64 eecn_floored(__u64 w, __u64 cwnd, __u32 floor_seg)
{
	__u64 f = (__u64)floor_seg * EECN_SEG;

	if (f > cwnd)
		f = cwnd;
	return w > f ? w : f;
}

/* Algorithm 1, CL(2): cwnd = ssthresh = cwnd / 8 if congested, else cwnd / 4, at least 2. */
static inline void eecn_on_cl2(struct eecn_window *w, int congested)
{
	__u64 n = eecn_floored(w->cwnd / (congested ? 8 : 4), w->cwnd, 2);

	w->cwnd = n;
	w->ssthresh = n;
}

/* Algorithm 1, CL(1): cwnd = ssthresh = cwnd e^-β if congested (at least 2), else nothing.
 * Returns whether it reduced. */
static inline int eecn_on_cl1(struct eecn_window *w, int congested, __u64 beta_us)
{
	__u64 n;

	if (!congested)
		return 0;
	n = eecn_floored((w->cwnd * eecn_exp_neg_us(beta_us)) >> 16, w->cwnd, 2);
	w->cwnd = n;
	w->ssthresh = n;
	return 1;
}

/* Algorithm 2 for one ACK: slow start +1 segment (+0.3 if congested); congestion avoidance
 * +0.02 segment, or the decay e^-β if congested (cwnd only, at least 2 segments). */
#define EECN_SIGMA_SS 19661U /* 0.3 segment */
#define EECN_SIGMA_CA 1311U  /* 0.02 segment */
static inline void eecn_grow(struct eecn_window *w, int congested, __u64 beta_us)
{
	if (w->cwnd < w->ssthresh)
		w->cwnd += congested ? EECN_SIGMA_SS : EECN_SEG;
	else if (congested)
		w->cwnd = eecn_floored((w->cwnd * eecn_exp_neg_us(beta_us)) >> 16, w->cwnd, 2);
	else
		w->cwnd += EECN_SIGMA_CA;
}

/* The initial window for the level the handshake echoed (§4.4.1): 10, 5 or 1 segments. */
static inline __u32 eecn_initial_window(__u8 level)
{
	return level == EECN_CL2 ? 1 : level == EECN_CL1 ? 5 : 10;
}

#endif
