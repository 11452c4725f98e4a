// SPDX-License-Identifier: GPL-2.0 OR MIT
/* MECN's sender and receiver (Durresi et al., "Traffic Management using Multilevel ECN") on
 * Linux hosts. The kernel's TCP carries neither MECN's codepoints nor its echo, so the scheme
 * is three parts sharing one map of MECN connections:
 *
 * - the controller (tcp_congestion_ops): Reno growth, never on an ACK with ECE (the paper's
 *   sender is ns-2's Reno, which opens its window only on ACKs without ECN-Echo); the window
 *   cut by 20 % for incipient and 40 % for moderate congestion, once per round (the kernel's
 *   CWR state, entered on ECE, calls ssthresh once), and halved on a loss outside that round
 *   (one reduction per round, RFC 3168 §6.1.2). It enters each connection that negotiated
 *   ECN in the map when the connection starts, and removes it when the connection goes;
 * - on every host's interface, tc egress: an MECN receiver's ACKs carry its echo in
 *   (CWR, ECE) in place of the kernel's RFC 3168 ECE. The sender's data needs no rewriting:
 *   the ECT(0) the kernel writes is Table 1's "no congestion" (ECT bit set, CE bit clear);
 * - tc ingress: a receiver follows the levels of the data it gets (§3's echo rules); a sender
 *   notes the level of each ACK's echo, which the controller reads when the kernel asks it
 *   for a reduction.
 *
 * The handshake is RFC 3168's, unchanged (§3), so the receiver may be any ECN host. */
#include "../common.bpf.h"
#include "../tcp_segment.bpf.h"
#include "mecn_math.h"

/* GPL-compatible, as the kernel asks of a congestion control. */
char _license[] SEC("license") = "Dual MIT/GPL";

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

struct flow {
	/* Receiver: its echo state. */
	struct mecn_echo rx;
	/* Sender: the level the latest ACK echoed. */
	__u8 acked_level;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct flow_key);
	__type(value, struct flow);
} flows SEC(".maps");

/* ------------------------------------------------------------------ the controller */

struct mecn_state {
	__u32 last_ack_ece;
	/* The level of the latest reduction asked for (ssthresh), counted once the kernel says
	 * what it was for (set_state). */
	__u8 asked_level;
};

SEC("struct_ops/mecn_init")
void BPF_PROG(mecn_init, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct mecn_state *s = inet_csk_ca(sk);
	struct flow_key key = flow_key_of(sk);
	struct flow f = {};
	long err;

	s->last_ack_ece = 0;
	s->asked_level = MECN_NONE;
	count(C_INIT, 1);
	if (!(tp->ecn_flags & TCP_ECN_OK)) {
		if (sk->__sk_common.skc_state != TCP_LISTEN && sk->__sk_common.skc_state != TCP_CLOSE)
			count(C_INIT_NO_ECN, 1);
		return;
	}
	/* A connection the map has no room for runs without MECN's feedback: counted, and the run
	 * warns (an entry already there, -EEXIST, is this connection's). */
	err = bpf_map_update_elem(&flows, &key, &f, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST */)
		count(C_FLOWS_UNTRACKED, 1);
}

/* The connection is gone: its entry goes with it (the map holds 4096). */
SEC("struct_ops/mecn_release")
void BPF_PROG(mecn_release, struct sock *sk)
{
	struct flow_key key = flow_key_of(sk);

	bpf_map_delete_elem(&flows, &key);
}

SEC("struct_ops/mecn_in_ack_event")
void BPF_PROG(mecn_in_ack_event, struct sock *sk, __u32 flags)
{
	struct mecn_state *s = inet_csk_ca(sk);

	s->last_ack_ece = !!(flags & CA_ACK_ECE);
	count(C_ACKS, 1);
	if (s->last_ack_ece)
		count(C_ACKS_ECE, 1);
}

static __always_inline __u8 acked_level(const struct sock *sk)
{
	struct flow_key key = flow_key_of(sk);
	struct flow *f = bpf_map_lookup_elem(&flows, &key);

	return f ? f->acked_level : MECN_NONE;
}

/* Asked for a reduction: on ECE (the kernel enters CWR), on a loss outside a reduction round
 * (it enters Recovery) or on a timeout. The cut is by the level the latest ACK echoed; for a
 * loss, set_state or CA_EVENT_LOSS below halve instead. */
SEC("struct_ops/mecn_ssthresh")
__u32 BPF_PROG(mecn_ssthresh, struct sock *sk)
{
	struct mecn_state *s = inet_csk_ca(sk);

	s->asked_level = acked_level(sk);
	return mecn_ssthresh_of(tcp_sk(sk)->snd_cwnd, s->asked_level);
}

SEC("struct_ops/mecn_set_state")
void BPF_PROG(mecn_set_state, struct sock *sk, __u8 new_state)
{
	const struct mecn_state *s = inet_csk_ca(sk);
	__u8 old_state = BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state);

	if (new_state == TCP_CA_CWR && old_state != TCP_CA_CWR) {
		/* tcp_enter_cwr: the ECN reduction ssthresh just made. */
		count(C_REDUCTIONS, 1);
		count(s->asked_level == MECN_MODERATE ? C_CUTS_L2 : C_CUTS_L1, 1);
	} else if (new_state == TCP_CA_Recovery && old_state != TCP_CA_Recovery) {
		/* A loss reduces once per round, as the simulator's MECN (RFC 3168 §6.1.2) and the
		 * kernel (tcp_enter_recovery asks no ssthresh inside CWR) do. */
		struct tcp_sock *tp = tcp_sk(sk);
		int in_round = old_state == TCP_CA_CWR;

		tp->snd_ssthresh = mecn_ssthresh_after_loss(tp->snd_ssthresh, tp->snd_cwnd, in_round);
		count(in_round ? C_LOSSES_IN_ROUND : C_LOSSES, 1);
	}
}

SEC("struct_ops/mecn_cwnd_event")
void BPF_PROG(mecn_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct tcp_sock *tp = tcp_sk(sk);

	/* Sent only when the kernel reduces for the timeout (tcp_enter_loss). */
	if (ev == CA_EVENT_LOSS) {
		tp->snd_ssthresh = mecn_ssthresh_after_loss(tp->snd_ssthresh, tp->snd_cwnd, 0);
		count(C_LOSSES, 1);
	}
}

SEC("struct_ops/mecn_cong_avoid")
void BPF_PROG(mecn_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	const struct mecn_state *s = inet_csk_ca(sk);

	if (!s->last_ack_ece)
		tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops/mecn_undo_cwnd")
__u32 BPF_PROG(mecn_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

/* The loader replaces this name with the run's own. */
SEC(".struct_ops")
struct tcp_congestion_ops ecnlab_mecn = {
	.init = (void *)mecn_init,
	.in_ack_event = (void *)mecn_in_ack_event,
	.cwnd_event = (void *)mecn_cwnd_event,
	.ssthresh = (void *)mecn_ssthresh,
	.cong_avoid = (void *)mecn_cong_avoid,
	.undo_cwnd = (void *)mecn_undo_cwnd,
	.set_state = (void *)mecn_set_state,
	.release = (void *)mecn_release,
	/* No TCP_CONG_NEEDS_ECN: it would send the SYN ECT(0), which a classic receiver refuses
	 * to negotiate ECN on (RFC 3168 §6.1.1); MECN keeps RFC 3168's handshake (§3), asked
	 * for by the route's ecn feature as for any ECN host. */
	.name = "ecnlab_mecn",
};

/* ------------------------------------------------------------------ the interfaces */

SEC("tc")
int mecn_egress(struct __sk_buff *skb)
{
	struct seg s;
	struct flow *f;

	if (!parse(skb, &s))
		return TC_ACT_UNSPEC;
	f = lookup_reversed(&flows, &s);
	if (f && !(s.flags & TCPHDR_SYN)) {
		/* An MECN receiver's segment towards the sender: its echo in (CWR, ECE). */
		__u16 echo = f->rx.echo == MECN_MODERATE ? TCPHDR_ECE | TCPHDR_CWR
			     : f->rx.echo != MECN_NONE ? TCPHDR_ECE : 0;

		if (set_tcp_flags(skb, &s, TCPHDR_ECE | TCPHDR_CWR, echo))
			count(C_ECHOES_WRITTEN, 1);
	}
	return TC_ACT_UNSPEC;
}

SEC("tc")
int mecn_ingress(struct __sk_buff *skb)
{
	struct seg s;
	struct flow *f;

	if (!parse(skb, &s))
		return TC_ACT_UNSPEC;
	f = bpf_map_lookup_elem(&flows, &s.key);
	if (f && s.data) {
		/* At the receiver: the data's level. */
		__u8 before = f->rx.echo;
		__u8 level = mecn_level_of_ecn(s.tos & 3);

		mecn_on_data(&f->rx, level, s.flags & TCPHDR_CWR);
		if (f->rx.echo != before)
			count(C_CE_CHANGES, 1);
		count(C_DATA_IN, 1);
		if (level != MECN_NONE)
			count(C_DATA_IN_MARKED, 1);
		if (level == MECN_MODERATE)
			count(C_DATA_IN_MODERATE, 1);
		return TC_ACT_UNSPEC;
	}
	f = lookup_reversed(&flows, &s);
	if (f && !(s.flags & TCPHDR_SYN))
		/* At the sender: the level this ACK echoes, for the controller. */
		f->acked_level = mecn_level_of_echo(s.flags & TCPHDR_CWR, s.flags & TCPHDR_ECE);
	return TC_ACT_UNSPEC;
}
