/* Indices of the counters every ecnlab BPF controller keeps (one u64 each, summed over its
 * connections), shared by the BPF objects and the loader that prints them. The emulation
 * names them in python/ecnlab/emulate/bpf.py (COUNTERS, same order). */
#ifndef ECNLAB_COUNTERS_H
#define ECNLAB_COUNTERS_H

enum ecnlab_counter {
	/* Connections the controller took over, and those of them without ECN. */
	C_INIT = 0,
	C_INIT_NO_ECN,
	/* ACKs the controller saw (in_ack_event; UCP1: in cong_avoid, the ACKs that may raise
	 * the window, so not those in recovery), and those with ECE set. */
	C_ACKS,
	C_ACKS_ECE,
	/* Window reductions for ECN (the connection entered the kernel's CWR state): one per
	 * round with a congestion signal; losses are not among them. */
	C_REDUCTIONS,
	/* Losses it reduced the window for (entering recovery outside a reduction round, or a
	 * timeout the kernel reduced for). */
	C_LOSSES,
	/* Estimator updates (DCTCP: once per window of data), their sum (to average) and the
	 * packets delivered and delivered with a mark over those windows. */
	C_ESTIMATES,
	C_ESTIMATE_SUM,
	C_DELIVERED,
	C_DELIVERED_MARKED,
	/* Receiver side: changes of the CE state (DCTCP) or of the echoed level (MECN), and the
	 * delayed ACKs DCTCP sent early for them. */
	C_CE_CHANGES,
	C_EARLY_ACKS,
	/* Multilevel schemes: the ECN reductions (C_REDUCTIONS) by congestion level (1, 2). */
	C_CUTS_L1,
	C_CUTS_L2,
	/* Header work on the hosts' interfaces (tc): data packets given the scheme's codepoint
	 * by their sender (UNO: data frames, a GSO frame once, counted whether or not it was
	 * ECT(1) already); data packets read by their receiver, and of them marked by a router;
	 * ACKs whose echo the receiver's interface wrote. */
	C_DATA_RECODED,
	C_DATA_IN,
	C_DATA_IN_MARKED,
	C_ECHOES_WRITTEN,
	/* EECN: connections whose handshake met congestion level 1 or 2 (initial window 5 or 1
	 * segments), and ACKs on which the RTT said "congested" (cRTT > avgRTT). */
	C_HANDSHAKE_L1,
	C_HANDSHAKE_L2,
	C_CONGESTED_ACKS,
	/* Losses found inside a reduction round (CWR -> Recovery): the kernel asks no new
	 * reduction for them (tcp_enter_recovery), and neither do the controllers. */
	C_LOSSES_IN_ROUND,
	/* DCTCP's receiver: CE changes that found no delayed ACK pending (so no early ACK), and
	 * of them those whose own immediate ACK (RFC 8257 §3.2) had not been sent when the
	 * next data segment arrived (rcv_wup still before it). */
	C_CHANGES_ACK_CHECKED,
	C_CHANGES_ACK_LATE,
	/* MECN's receivers: data packets read at the moderate level (11), of C_DATA_IN_MARKED. */
	C_DATA_IN_MODERATE,
	/* UNO: blocks decided by level (0-5 the low bands, 6 high, 7 overload, 8 no UNO router),
	 * blocks skipped (complete but silent on a path whose router was heard), data frames
	 * the sender's ring had no room for, data read with CE at the receiver, and the
	 * controller's ACKs by action (multiplicative increase, additive increase, hold). */
	C_UNO_LEVEL0,
	C_UNO_LEVEL1,
	C_UNO_LEVEL2,
	C_UNO_LEVEL3,
	C_UNO_LEVEL4,
	C_UNO_LEVEL5,
	C_UNO_LEVEL6,
	C_UNO_LEVEL7,
	C_UNO_LEVEL8,
	C_UNO_BLOCKS_SKIPPED,
	C_UNO_RING_FULL,
	C_DATA_IN_CE,
	C_UNO_ACKS_MI,
	C_UNO_ACKS_AI,
	C_UNO_ACKS_HOLD,
	/* Connections that negotiated ECN but found no room in the scheme's map of connections:
	 * they run without the scheme's feedback (the run warns). */
	C_FLOWS_UNTRACKED,
	ECNLAB_COUNTERS,
};

#endif
