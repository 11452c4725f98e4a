// SPDX-License-Identifier: GPL-2.0 OR MIT
/* EECN's sender and receiver (seeds/000: Ali, Hong, Kim) on Linux hosts, with the simulator's
 * readings of the paper (crates/ecnlab/src/schemes/eecn/mod.rs names each). The kernel's TCP
 * carries neither Table 1's codepoints nor Table 2's flags, so as for MECN the scheme is a
 * controller and tc programs on every host's interface sharing a map of EECN connections:
 *
 * - handshake (§4.2.1): the data sender's SYN leaves ECT(1) with (ECE, CWR) = 01 (Table 2's
 *   "EECN capable"), the SYN-ACK leaves ECT(1) with the echo of the level the SYN met; each
 *   side's interface gives its kernel back the RFC 3168 form it negotiates with (an ECN-setup
 *   SYN, an ECN-setup SYN-ACK, both Not-ECT) and keeps the levels in the map; the controller
 *   starts the sender at 10, 5 or 1 segments by the level its SYN met (§4.4.1);
 * - data: the sender's new data leaves ECT(1), with CWR after a CL(2) response; the
 *   receiver's interface follows the codepoints (CL(2) until CWR, CL(1) for the next three
 *   ACKs) and writes Table 2's echo into its ACKs; the sender's interface reads each ACK's
 *   echo into the map and clears ECE and CWR, so the kernel's RFC 3168 machinery never acts
 *   on EECN's flags: the controller alone reacts (Algorithm 1 on an ACK with an echo,
 *   Algorithm 2 on every other ACK, both on a window kept in 1/65536 segments);
 * - the RTT: cRTT is the least of the kernel's RTT samples (pkts_acked) over the last
 *   smoothed RTT, in whole milliseconds, avgRTT the mean of every cRTT so far (the
 *   simulator's crtt = "round_min", rtt_resolution_s = 0.001, avg_rtt = "mean");
 * - a loss: ssthresh = max(packets in flight / 2, 2) (RFC 5681), and Linux's recovery.
 *
 * Only connections whose data sender opens them: the emulation refuses client-initiated
 * EECN flows. */
#include "../common.bpf.h"
#include "../tcp_segment.bpf.h"
#include "eecn_math.h"

/* GPL-compatible, as the kernel asks of a congestion control. */
char _license[] SEC("license") = "Dual MIT/GPL";

extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

#define TCP_INFINITE_SSTHRESH 0x7fffffffU
#define LEVEL_UNKNOWN 3

struct flow {
	/* Receiver: its echo state. */
	struct eecn_echo rx;
	/* Sender: the level the latest ACK echoed; CWR owed on the next new data. */
	__u8 acked_level;
	__u8 cwr_pending;
	/* Handshake: the level the SYN met (as the receiver read it) and the level echoed to
	 * the sender in the SYN-ACK (LEVEL_UNKNOWN until then); whether EECN was offered. */
	__u8 syn_level;
	__u8 sender_level;
	__u8 eecn;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct flow_key);
	__type(value, struct flow);
} flows SEC(".maps");

/* The listening ports of the run's EECN flows (network byte order), set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u16);
	__type(value, __u8);
} ports SEC(".maps");

/* ------------------------------------------------------------------ the controller */

struct eecn_state {
	__u64 cwnd;
	__u64 ssthresh;
	__u64 rtt_sum_us;
	__u64 round_start_us;
	__u32 rtt_n;
	__u32 crtt_us;
	__u32 round_min_us;
	__u32 written_cwnd;
	__u32 written_ssthresh;
	__u32 cl2_after;
	__u8 cl2_seen;
};

static __always_inline struct flow *sender_flow(const struct sock *sk)
{
	struct flow_key key = flow_key_of(sk);

	return bpf_map_lookup_elem(&flows, &key);
}

static __always_inline void write_window(struct tcp_sock *tp, struct eecn_state *s)
{
	__u64 c = s->cwnd / EECN_SEG, t = s->ssthresh / EECN_SEG;

	tp->snd_cwnd = c ? c : 1;
	tp->snd_ssthresh = t < TCP_INFINITE_SSTHRESH ? t : TCP_INFINITE_SSTHRESH;
	s->written_cwnd = tp->snd_cwnd;
	s->written_ssthresh = tp->snd_ssthresh;
}

/* Takes up what the kernel did to the window since we last wrote it (recovery, timeouts,
 * undo). */
static __always_inline void resync(const struct tcp_sock *tp, struct eecn_state *s)
{
	if (tp->snd_cwnd != s->written_cwnd)
		s->cwnd = (__u64)tp->snd_cwnd * EECN_SEG;
	if (tp->snd_ssthresh != s->written_ssthresh)
		s->ssthresh = (__u64)tp->snd_ssthresh * EECN_SEG;
}

SEC("struct_ops/eecn_init")
void BPF_PROG(eecn_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct eecn_state *s = inet_csk_ca(sk);
	struct flow *f;

	__builtin_memset(s, 0, sizeof(*s));
	s->ssthresh = (__u64)TCP_INFINITE_SSTHRESH * EECN_SEG;
	s->written_ssthresh = tp->snd_ssthresh;
	if (sk->__sk_common.skc_state == TCP_LISTEN || sk->__sk_common.skc_state == TCP_CLOSE)
		return;
	count(C_INIT, 1);
	f = sender_flow(sk);
	if (!(tp->ecn_flags & TCP_ECN_OK) || !f || !f->eecn) {
		count(C_INIT_NO_ECN, 1);
		s->cwnd = (__u64)tp->snd_cwnd * EECN_SEG;
		s->written_cwnd = tp->snd_cwnd;
		return;
	}
	if (f->sender_level == EECN_CL1)
		count(C_HANDSHAKE_L1, 1);
	else if (f->sender_level == EECN_CL2)
		count(C_HANDSHAKE_L2, 1);
	s->cwnd = (__u64)eecn_initial_window(f->sender_level == LEVEL_UNKNOWN ? EECN_NONE : f->sender_level) * EECN_SEG;
	write_window(tp, s);
}

SEC("struct_ops/eecn_pkts_acked")
void BPF_PROG(eecn_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct eecn_state *s = inet_csk_ca(sk);
	__u64 now = tp->tcp_mstamp;
	__u32 rtt = sample->rtt_us, window;

	if ((__s32)sample->rtt_us <= 0)
		return;
	/* The least sample over the last smoothed RTT, in whole milliseconds. */
	window = tp->srtt_us >> 3;
	if (!window)
		window = rtt;
	if (!s->round_min_us || now - s->round_start_us > window) {
		s->round_min_us = rtt;
		s->round_start_us = now;
	} else if (rtt < s->round_min_us) {
		s->round_min_us = rtt;
	}
	s->crtt_us = s->round_min_us / 1000 * 1000;
	s->rtt_sum_us += s->crtt_us;
	s->rtt_n++;
}

SEC("struct_ops/eecn_cong_avoid")
void BPF_PROG(eecn_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct eecn_state *s = inet_csk_ca(sk);
	struct eecn_window w;
	struct flow *f = sender_flow(sk);
	__u64 avg = 0, beta = 0;
	int congested = 0, signalled = 0;
	__u8 level = f ? f->acked_level : EECN_NONE;

	count(C_ACKS, 1);
	resync(tp, s);
	if (s->rtt_n) {
		avg = s->rtt_sum_us / s->rtt_n;
		congested = s->crtt_us > avg;
		beta = congested ? s->crtt_us - avg : 0;
	}
	if (congested)
		count(C_CONGESTED_ACKS, 1);
	w.cwnd = s->cwnd;
	w.ssthresh = s->ssthresh;
	if (level == EECN_CL2) {
		count(C_ACKS_ECE, 1);
		/* Once per window of data, as RFC 3168's ECE. */
		if (!s->cl2_seen || seq_before(s->cl2_after, tp->snd_una)) {
			s->cl2_seen = 1;
			s->cl2_after = tp->snd_nxt;
			eecn_on_cl2(&w, congested);
			if (f)
				f->cwr_pending = 1;
			signalled = 1;
			count(C_REDUCTIONS, 1);
			count(C_CUTS_L2, 1);
		}
	} else if (level == EECN_CL1) {
		count(C_ACKS_ECE, 1);
		signalled = 1;
		if (eecn_on_cl1(&w, congested, beta)) {
			count(C_REDUCTIONS, 1);
			count(C_CUTS_L1, 1);
		}
	}
	if (!signalled)
		eecn_grow(&w, congested, beta);
	s->cwnd = w.cwnd;
	s->ssthresh = w.ssthresh;
	write_window(tp, s);
}

/* A loss (recovery or a timeout): RFC 5681's half of the flight, at least 2 segments. */
SEC("struct_ops/eecn_ssthresh")
__u32 BPF_PROG(eecn_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	__u32 flight = tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;

	count(C_LOSSES, 1);
	return flight / 2 > 2 ? flight / 2 : 2;
}

SEC("struct_ops/eecn_undo_cwnd")
__u32 BPF_PROG(eecn_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

/* The loader replaces this name with the run's own. */
SEC(".struct_ops")
struct tcp_congestion_ops ecnlab_eecn = {
	.init = (void *)eecn_init,
	.pkts_acked = (void *)eecn_pkts_acked,
	.ssthresh = (void *)eecn_ssthresh,
	.cong_avoid = (void *)eecn_cong_avoid,
	.undo_cwnd = (void *)eecn_undo_cwnd,
	.name = "ecnlab_eecn",
};

/* ------------------------------------------------------------------ the interfaces */

SEC("tc")
int eecn_egress(struct __sk_buff *skb)
{
	struct seg s;
	struct flow *f;

	if (!parse(skb, &s))
		return TC_ACT_UNSPEC;
	if ((s.flags & (TCPHDR_SYN | TCPHDR_ACK)) == TCPHDR_SYN) {
		/* The data sender's SYN: offer EECN if the kernel offers ECN (a SYN sent again
		 * after a timeout no longer does). */
		struct flow nf = { .sender_level = LEVEL_UNKNOWN };

		if (!bpf_map_lookup_elem(&ports, &s.key.dport))
			return TC_ACT_UNSPEC;
		bpf_map_update_elem(&flows, &s.key, &nf, BPF_NOEXIST);
		f = bpf_map_lookup_elem(&flows, &s.key);
		if (!f)
			return TC_ACT_UNSPEC;
		f->eecn = (s.flags & (TCPHDR_ECE | TCPHDR_CWR)) == (TCPHDR_ECE | TCPHDR_CWR);
		if (f->eecn) {
			set_ecn(skb, &s, 1);
			set_tcp_flags(skb, &s, TCPHDR_ECE | TCPHDR_CWR, TCPHDR_CWR);
		}
		return TC_ACT_UNSPEC;
	}
	if (s.flags & TCPHDR_SYN) {
		/* The receiver's SYN-ACK, if its kernel accepted ECN: ECT(1), echoing the SYN's level. */
		f = lookup_reversed(&flows, &s);
		if (f && f->eecn && (s.flags & TCPHDR_ECE)) {
			set_ecn(skb, &s, 1);
			set_tcp_flags(skb, &s, TCPHDR_ECE | TCPHDR_CWR, eecn_echo_flags(f->syn_level));
		}
		return TC_ACT_UNSPEC;
	}
	f = bpf_map_lookup_elem(&flows, &s.key);
	if (f) {
		/* The sender's new data (the kernel's ECT(0); retransmissions leave Not-ECT). */
		if (f->eecn && s.data && (s.tos & 3) == 2) {
			set_ecn(skb, &s, 1);
			count(C_DATA_RECODED, 1);
			if (f->cwr_pending) {
				set_tcp_flags(skb, &s, TCPHDR_ECE | TCPHDR_CWR, TCPHDR_CWR);
				f->cwr_pending = 0;
			}
		}
		return TC_ACT_UNSPEC;
	}
	f = lookup_reversed(&flows, &s);
	if (f && f->eecn && !(s.flags & TCPHDR_FIN)) {
		/* The receiver's ACK: Table 2's echo. */
		set_tcp_flags(skb, &s, TCPHDR_ECE | TCPHDR_CWR, eecn_echo_flags(eecn_next_echo(&f->rx)));
		count(C_ECHOES_WRITTEN, 1);
	}
	return TC_ACT_UNSPEC;
}

SEC("tc")
int eecn_ingress(struct __sk_buff *skb)
{
	struct seg s;
	struct flow *f;

	if (!parse(skb, &s))
		return TC_ACT_UNSPEC;
	if ((s.flags & (TCPHDR_SYN | TCPHDR_ACK)) == TCPHDR_SYN) {
		/* At the receiver: the SYN's level; its kernel gets an RFC 3168 ECN-setup SYN. */
		f = bpf_map_lookup_elem(&flows, &s.key);
		if (f && f->eecn && (s.flags & (TCPHDR_ECE | TCPHDR_CWR)) == TCPHDR_CWR) {
			__u8 level = eecn_level_of_ip(s.tos & 3);

			f->syn_level = level == EECN_NOT_CAPABLE ? EECN_NONE : level;
			set_ecn(skb, &s, 0);
			set_tcp_flags(skb, &s, TCPHDR_ECE | TCPHDR_CWR, TCPHDR_ECE | TCPHDR_CWR);
		}
		return TC_ACT_UNSPEC;
	}
	if (s.flags & TCPHDR_SYN) {
		/* At the sender: the level its SYN met, echoed; its kernel gets an RFC 3168 SYN-ACK. */
		f = lookup_reversed(&flows, &s);
		if (f && f->eecn && (s.flags & TCPHDR_CWR)) {
			__u8 level = eecn_level_of_echo(s.flags & TCPHDR_ECE, s.flags & TCPHDR_CWR);

			f->sender_level = level == EECN_NOT_CAPABLE ? EECN_NONE : level;
			set_ecn(skb, &s, 0);
			set_tcp_flags(skb, &s, TCPHDR_ECE | TCPHDR_CWR, TCPHDR_ECE);
		}
		return TC_ACT_UNSPEC;
	}
	f = bpf_map_lookup_elem(&flows, &s.key);
	if (f) {
		/* At the receiver: the data's codepoint, and the sender's CWR (Table 2's 01). */
		if (f->eecn && s.data) {
			eecn_on_data(&f->rx, s.tos & 3, (s.flags & (TCPHDR_ECE | TCPHDR_CWR)) == TCPHDR_CWR);
			count(C_DATA_IN, 1);
			if (s.tos & 2)
				count(C_DATA_IN_MARKED, 1);
		}
		return TC_ACT_UNSPEC;
	}
	f = lookup_reversed(&flows, &s);
	if (f && f->eecn) {
		/* At the sender: the ACK's echo, for the controller; its kernel sees neither flag. */
		__u8 level = eecn_level_of_echo(s.flags & TCPHDR_ECE, s.flags & TCPHDR_CWR);

		f->acked_level = level == EECN_NOT_CAPABLE ? EECN_NONE : level;
		set_tcp_flags(skb, &s, TCPHDR_ECE | TCPHDR_CWR, 0);
	}
	return TC_ACT_UNSPEC;
}
