/* Indices of the counters every ecnlab BPF controller keeps (one u64 each, summed over its
 * connections), shared by the BPF objects and the loader that prints them. The emulation
 * names them in python/ecnlab/emulate/bpf.py (COUNTERS, same order). */
#ifndef ECNLAB_COUNTERS_H
#define ECNLAB_COUNTERS_H

enum ecnlab_counter {
	/* Connections the controller took over, and those of them without ECN. */
	C_INIT = 0,
	C_INIT_NO_ECN,
	/* ACKs the controller saw (in_ack_event), and those with ECE set. */
	C_ACKS,
	C_ACKS_ECE,
	/* Window reductions asked of it (ssthresh): one per round with a congestion signal. */
	C_REDUCTIONS,
	/* Losses it reacted to (entering recovery, or a timeout). */
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
	/* Multilevel schemes: window reductions by congestion level (1, 2). */
	C_CUTS_L1,
	C_CUTS_L2,
	/* Header work on the hosts' interfaces (tc): data packets given the scheme's codepoint
	 * by their sender; data packets read by their receiver, and of them marked by a router;
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
	ECNLAB_COUNTERS,
};

#endif
