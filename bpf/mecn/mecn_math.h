/* MECN's rules free of the kernel, so the same lines compile into the BPF programs and into
 * the unit tests (tests/test_bpf_mecn.py). The includer provides __u8 and __u32.
 *
 * Levels: 0 none, 1 incipient, 2 moderate (Durresi et al., "Traffic Management using
 * Multilevel ECN", §2 Tables 1-3). On the wire, Table 1 as the paper writes it, (CE bit,
 * ECT bit) with ECT bit 6 and CE bit 7 of the TOS octet (RFC 2481's names): 01 no
 * congestion, 10 incipient, 11 moderate. In RFC 3168's values of the 2-bit field (bit 6 the
 * high one) that is: the sender's ECT(0) (10, what Linux writes) no congestion, ECT(1) (01)
 * incipient, CE (11) moderate. The receiver echoes in (CWR, ECE) (Table 2): 01 incipient,
 * 11 moderate. */
#ifndef ECNLAB_MECN_MATH_H
#define ECNLAB_MECN_MATH_H

#define MECN_NONE 0
#define MECN_INCIPIENT 1
#define MECN_MODERATE 2

/* Table 1's bits in the 2-bit ECN field (the TOS octet's low two bits). */
#define MECN_ECT_BIT 2 /* bit 6 */
#define MECN_CE_BIT 1  /* bit 7 */
/* The field's value at each level of an MECN-capable packet. */
#define MECN_ECN_NO_CONGESTION MECN_ECT_BIT
#define MECN_ECN_INCIPIENT MECN_CE_BIT
#define MECN_ECN_MODERATE (MECN_CE_BIT | MECN_ECT_BIT)

/* The level a data packet's IP ECN field says (Table 1); Not-ECT (00) carries none. */
static inline __u8 mecn_level_of_ecn(__u8 ecn)
{
	return ecn == MECN_ECN_INCIPIENT ? MECN_INCIPIENT : ecn == MECN_ECN_MODERATE ? MECN_MODERATE : MECN_NONE;
}

/* The level an ACK's (CWR, ECE) echo says (Table 2): ECE alone incipient, both moderate. */
static inline __u8 mecn_level_of_echo(int cwr, int ece)
{
	return !ece ? MECN_NONE : cwr ? MECN_MODERATE : MECN_INCIPIENT;
}

/* The receiver's echo state: the level it echoes and the level it echoed first since the
 * echo last stopped. */
struct mecn_echo {
	__u8 echo;
	__u8 first;
};

/* A data packet arrives at level `seen`, with the sender's CWR or not. §3: CWR stops the
 * echo of the level marked first; a higher level seen before CWR arrived goes on being
 * echoed (it becomes the first). As RFC 3168, the mark of the CWR segment itself counts
 * after the reset. The same rules as the simulator's MECN codec (cwr_clears = first_level). */
static inline void mecn_on_data(struct mecn_echo *e, __u8 seen, int cwr)
{
	if (cwr) {
		if (e->echo > e->first) {
			e->first = e->echo;
		} else {
			e->echo = MECN_NONE;
			e->first = MECN_NONE;
		}
	}
	if (seen > e->echo) {
		if (e->echo == MECN_NONE)
			e->first = seen;
		e->echo = seen;
	}
}

/* The window after a reduction for `level` (Table 3: incipient -20 %, moderate -40 %),
 * in segments, at least 2. Losses halve it (the controller does that itself). */
static inline __u32 mecn_ssthresh_of(__u32 cwnd, __u8 level)
{
	__u32 w = level == MECN_MODERATE ? cwnd * 3U / 5U : cwnd * 4U / 5U;

	return w > 2U ? w : 2U;
}

/* ssthresh after a loss, in segments: half the window (Table 3), unless the loss falls
 * inside the round of an ECN reduction (the connection in the kernel's CWR state), which
 * keeps the reduction already made. One reduction per round (RFC 3168 §6.1.2), as the
 * simulator's MECN; the kernel's own Reno does the same, since tcp_enter_recovery asks for
 * no new ssthresh while tcp_in_cwnd_reduction(). */
static inline __u32 mecn_ssthresh_after_loss(__u32 ssthresh, __u32 cwnd, int in_ecn_round)
{
	if (in_ecn_round)
		return ssthresh;
	return cwnd >> 1 > 2U ? cwnd >> 1 : 2U;
}

#endif
