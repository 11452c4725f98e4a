// SPDX-License-Identifier: GPL-2.0 OR MIT
/* DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257) as a BPF tcp_congestion_ops, for emulated
 * hosts on kernels without the tcp_dctcp module. It behaves as Linux's net/ipv4/tcp_dctcp.c:
 * Reno's growth, alpha updated once per window of data from the kernel's delivered and
 * delivered_ce counts, a cut to cwnd (1 - alpha / 2) once per round with ECE (the kernel's
 * CWR round calls ssthresh), half the window on a loss; and as a receiver, the CE state
 * machine of RFC 8257 §3.2 that echoes every change of CE at once (ECE set while the last
 * data packet was CE). One difference: a connection that did not negotiate ECN keeps DCTCP's
 * rules here, where Linux hands it to Reno (a BPF controller cannot swap itself); it is
 * counted (C_INIT_NO_ECN) and the emulation warns of a run where one happened. */
#include "../common.bpf.h"
#include "dctcp_math.h"

/* GPL-compatible, as the kernel asks of a congestion control (bpf_tcp_send_ack). */
char _license[] SEC("license") = "Dual MIT/GPL";

/* Linux's Reno growth (tcp_cong.c), which DCTCP keeps. */
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;

struct dctcp_state {
	/* Start of the current observation window: the send sequence it ends at, and the
	 * kernel's delivered / delivered_ce counts when it began. */
	__u32 window_end;
	__u32 delivered_at_start;
	__u32 marked_at_start;
	__u32 alpha;
	/* The window before the last cut (for undo). */
	__u32 cwnd_before_cut;
	/* Receiver: whether the last data packet carried CE, and rcv_nxt before it. */
	__u32 ce_state;
	__u32 rcv_nxt_before;
	/* Receiver: after a CE change that found no delayed ACK pending, what its immediate ACK
	 * must acknowledge (rcv_nxt after the changing segment); 0 once checked. */
	__u32 change_ack_due;
	__u32 change_pending;
};

static __always_inline void begin_window(const struct tcp_sock *tp, struct dctcp_state *s)
{
	s->window_end = tp->snd_nxt;
	s->delivered_at_start = tp->delivered;
	s->marked_at_start = tp->delivered_ce;
}

SEC("struct_ops/dctcp_init")
void BPF_PROG(dctcp_init, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp_state *s = inet_csk_ca(sk);

	count(C_INIT, 1);
	if (!(tp->ecn_flags & TCP_ECN_OK) && sk->__sk_common.skc_state != TCP_LISTEN &&
	    sk->__sk_common.skc_state != TCP_CLOSE)
		count(C_INIT_NO_ECN, 1);
	s->alpha = DCTCP_ALPHA_ONE;
	s->cwnd_before_cut = 0;
	s->ce_state = 0;
	s->rcv_nxt_before = tp->rcv_nxt;
	s->change_pending = 0;
	begin_window(tp, s);
}

SEC("struct_ops/dctcp_ssthresh")
__u32 BPF_PROG(dctcp_ssthresh, struct sock *sk)
{
	struct dctcp_state *s = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);

	s->cwnd_before_cut = tp->snd_cwnd;
	return dctcp_ssthresh_of(tp->snd_cwnd, s->alpha);
}

SEC("struct_ops/dctcp_in_ack_event")
void BPF_PROG(dctcp_in_ack_event, struct sock *sk, __u32 flags)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp_state *s = inet_csk_ca(sk);
	__u32 delivered, marked;
	int sender;

	/* A receiver's end sees every data segment as an ACK of nothing; its alpha only decays,
	 * as in Linux. The counters are the data senders' alone. */
	sender = tp->data_segs_out != 0;
	if (sender) {
		count(C_ACKS, 1);
		if (flags & CA_ACK_ECE)
			count(C_ACKS_ECE, 1);
	}
	/* The window ends when everything sent at its start is acknowledged. */
	if (seq_before(tp->snd_una, s->window_end))
		return;
	delivered = tp->delivered - s->delivered_at_start;
	marked = tp->delivered_ce - s->marked_at_start;
	s->alpha = dctcp_alpha_next(s->alpha, delivered, marked);
	if (sender) {
		count(C_ESTIMATES, 1);
		count(C_ESTIMATE_SUM, s->alpha);
		count(C_DELIVERED, delivered);
		count(C_DELIVERED_MARKED, marked);
	}
	begin_window(tp, s);
}

static __always_inline void react_to_loss(struct sock *sk)
{
	struct dctcp_state *s = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	count(C_LOSSES, 1);
	s->cwnd_before_cut = tp->snd_cwnd;
	tp->snd_ssthresh = tp->snd_cwnd >> 1 > 2U ? tp->snd_cwnd >> 1 : 2U;
}

SEC("struct_ops/dctcp_set_state")
void BPF_PROG(dctcp_set_state, struct sock *sk, __u8 new_state)
{
	__u8 old_state = BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state);

	/* An ECN reduction: tcp_enter_cwr has just asked ssthresh (counted here, where the
	 * kernel says what it was for, so losses are not among them). */
	if (new_state == TCP_CA_CWR && old_state != TCP_CA_CWR)
		count(C_REDUCTIONS, 1);
	/* A loss halves the window on entering recovery, inside an ECN round too (as
	 * tcp_dctcp.c's dctcp_state); a timeout is handled through CA_EVENT_LOSS below. */
	if (new_state == TCP_CA_Recovery && new_state != old_state)
		react_to_loss(sk);
}

/* The receiver's ECE: set while the last data packet carried CE (the kernel sends ECE while
 * TCP_ECN_DEMAND_CWR is set). */
static __always_inline void echo(struct sock *sk, __u32 ce)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (ce)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
}

/* RFC 8257 §3.2: when CE changes, an ACK held back by delayed ACKs is sent first with the old
 * state (acknowledging up to rcv_nxt before this packet), and this packet is acknowledged at
 * once with the new one. */
static __always_inline void on_data_ce(struct sock *sk, __u32 ce)
{
	struct dctcp_state *s = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);

	/* Was the last change's immediate ACK sent before this segment came? (The kernel sets
	 * rcv_wup to rcv_nxt on every ACK it sends.) */
	if (s->change_pending) {
		count(C_CHANGES_ACK_CHECKED, 1);
		if (seq_before(tp->rcv_wup, s->change_ack_due))
			count(C_CHANGES_ACK_LATE, 1);
		s->change_pending = 0;
	}
	if (s->ce_state != ce) {
		count(C_CE_CHANGES, 1);
		if (inet_csk(sk)->icsk_ack.pending & ICSK_ACK(ICSK_ACK_TIMER)) {
			echo(sk, s->ce_state);
			bpf_tcp_send_ack(sk, s->rcv_nxt_before);
			count(C_EARLY_ACKS, 1);
		} else {
			/* (An early ACK sets rcv_wup to rcv_nxt itself, so only these are checked.) */
			s->change_pending = 1;
			s->change_ack_due = tp->rcv_nxt;
		}
		inet_csk(sk)->icsk_ack.pending |= ICSK_ACK(ICSK_ACK_NOW);
	}
	s->rcv_nxt_before = tcp_sk(sk)->rcv_nxt;
	s->ce_state = ce;
	echo(sk, ce);
}

SEC("struct_ops/dctcp_cwnd_event")
void BPF_PROG(dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_ECN_IS_CE)
		on_data_ce(sk, 1);
	else if (ev == CA_EVENT_ECN_NO_CE)
		on_data_ce(sk, 0);
	else if (ev == CA_EVENT_LOSS)
		react_to_loss(sk);
}

SEC("struct_ops/dctcp_undo_cwnd")
__u32 BPF_PROG(dctcp_undo_cwnd, struct sock *sk)
{
	const struct dctcp_state *s = inet_csk_ca(sk);
	__u32 cwnd = tcp_sk(sk)->snd_cwnd;

	return cwnd > s->cwnd_before_cut ? cwnd : s->cwnd_before_cut;
}

SEC("struct_ops/dctcp_cong_avoid")
void BPF_PROG(dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

/* The loader replaces this name with the run's own (one registration per emulation run). */
SEC(".struct_ops")
struct tcp_congestion_ops ecnlab_dctcp = {
	.init = (void *)dctcp_init,
	.in_ack_event = (void *)dctcp_in_ack_event,
	.cwnd_event = (void *)dctcp_cwnd_event,
	.ssthresh = (void *)dctcp_ssthresh,
	.cong_avoid = (void *)dctcp_cong_avoid,
	.undo_cwnd = (void *)dctcp_undo_cwnd,
	.set_state = (void *)dctcp_set_state,
	.flags = TCP_CONG_NEEDS_ECN,
	.name = "ecnlab_dctcp",
};
