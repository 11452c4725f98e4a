// SPDX-License-Identifier: GPL-2.0 OR MIT
/* UNO's one-bit feedback and its UCP1 sender (seeds/001: Vasić, Kuntimaddi, Kostić) on Linux
 * hosts, with the simulator's readings (crates/ecnlab/src/schemes/uno/mod.rs names each). The
 * router is the emulation's forwarder itself (the simulator's UNO marker on the real
 * packets: it writes ECT(0) into an ECT(1) packet whose IP-ID residue equals its level). The
 * kernel's TCP carries neither UNO's codepoint nor its echo, so as for MECN and EECN the
 * scheme is a controller and tc programs on every host's interface sharing a map of UNO
 * connections (entered by the controller when a connection that negotiated ECN starts):
 *
 * - the sender's egress: every data frame leaves ECT(1) (UNO's one codepoint; the kernel
 *   writes ECT(0), or Not-ECT on a retransmission) and is noted in the connection's ring
 *   (sequence range, first IP-ID, segments: Linux numbers a connection's packets one by one,
 *   and a GSO frame's segments count up from its IP-ID);
 * - the receiver's ingress keeps the report its next ACK carries (uno_rx_data) and its
 *   egress writes it into each pure ACK: the reported packet's IP-ID into the ACK's IP-ID,
 *   its UNO bit into ECE, a CE since the last ACK into AE (codec.rs ack_out), CWR cleared;
 * - the sender's ingress adds each ACK's report to the block being collected, marks the
 *   residues of the segments the ACK newly covers, and on a complete block hands its level
 *   to the controller through the map; it clears ECE, CWR and AE, so the kernel's RFC 3168
 *   reaction never runs;
 * - the controller is UCP1's (uno_math.h) on a window kept in 1/65536 segments; a loss is
 *   Linux's recovery with ssthresh = half the flight (RFC 5681; the simulator's VCP NewReno
 *   sets the window to it at once, Linux's PRR walks down to it) and discards the block in
 *   collection and the frames in flight before it.
 *
 * The tc programs return TC_ACT_UNSPEC (tcp_segment.bpf.h says why). */
#include "../common.bpf.h"
#include "../tcp_segment.bpf.h"
#include "uno_math.h"

/* GPL-compatible, as the kernel asks of a congestion control. */
char _license[] SEC("license") = "Dual MIT/GPL";

extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

#define IP_ID_OFF 4

struct flow {
	/* Receiver: the report its next ACK carries. */
	struct uno_rx rx;
	/* Sender: the last decision and how many there were, for the controller. */
	__u8 level;
	__u32 decisions;
	/* Sender: blocks, frames in flight, losses to apply. */
	struct uno_sender snd;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct flow_key);
	__type(value, struct flow);
} flows SEC(".maps");

/* A zeroed flow to enter new connections with (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct flow);
} blank SEC(".maps");

/* ------------------------------------------------------------------ the controller */

struct uno_state {
	struct uno_ctl c;
};

static __always_inline struct flow *flow_of(const struct sock *sk)
{
	struct flow_key key = flow_key_of(sk);

	return bpf_map_lookup_elem(&flows, &key);
}

SEC("struct_ops/uno_init")
void BPF_PROG(uno_init, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct uno_state *s = inet_csk_ca(sk);
	struct flow_key key = flow_key_of(sk);
	__u32 zero = 0;
	struct flow *b;

	uno_ctl_init(&s->c, tp->snd_cwnd);
	if (sk->__sk_common.skc_state == TCP_LISTEN || sk->__sk_common.skc_state == TCP_CLOSE)
		return;
	count(C_INIT, 1);
	if (!(tp->ecn_flags & TCP_ECN_OK)) {
		count(C_INIT_NO_ECN, 1);
		return;
	}
	/* A connection the map has no room for runs as one without ECN feedback: counted, and the
	 * run warns. */
	b = bpf_map_lookup_elem(&blank, &zero);
	if (!b || bpf_map_update_elem(&flows, &key, b, BPF_ANY))
		count(C_FLOWS_UNTRACKED, 1);
}

/* The connection is gone: its entry goes with it. */
SEC("struct_ops/uno_release")
void BPF_PROG(uno_release, struct sock *sk)
{
	struct flow_key key = flow_key_of(sk);

	bpf_map_delete_elem(&flows, &key);
}

/* A decision that arrives while the kernel is in recovery or reducing (CWR) only changes the
 * level (Vcp::on_signal returns before acting in fast recovery); the kernel does not call
 * cong_avoid in those two states (tcp_cong_control: tcp_in_cwnd_reduction), so it is taken
 * here. In the Open, Disorder and Loss states cong_avoid runs and acts on it: after a
 * timeout (Loss) in full, an MD included, as the simulator's RTO leaves fast recovery
 * (RenoLoss::on_rto). */
SEC("struct_ops/uno_in_ack_event")
void BPF_PROG(uno_in_ack_event, struct sock *sk, __u32 flags)
{
	struct uno_state *s = inet_csk_ca(sk);
	__u8 state = BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state);
	struct flow *f;

	if (state != TCP_CA_CWR && state != TCP_CA_Recovery)
		return;
	f = flow_of(sk);
	if (f)
		uno_note_decision(&s->c, f->decisions, f->level);
}

SEC("struct_ops/uno_cong_avoid")
void BPF_PROG(uno_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct uno_state *s = inet_csk_ca(sk);
	struct flow *f = flow_of(sk);
	int action, md;

	count(C_ACKS, 1);
	/* The kernel's fields as they are: uno_cong_avoid_ack converts them (and the unit tests
	 * check the call passes them so). A connection without an entry never had a decision. */
	tp->snd_cwnd = uno_cong_avoid_ack(&s->c, tp->snd_cwnd, tp->snd_cwnd_clamp, tp->srtt_us, tp->tcp_mstamp, acked,
					   f ? f->decisions : 0, f ? f->level : 0, &action, &md);
	if (md)
		count(C_REDUCTIONS, 1);
	count(action == UNO_MI ? C_UNO_ACKS_MI : action == UNO_AI ? C_UNO_ACKS_AI : C_UNO_ACKS_HOLD, 1);
}

/* A loss (recovery or a timeout): RFC 5681's half of the flight, at least 2 segments; the
 * block in collection and the frames sent before it are discarded (loss overrides load). */
SEC("struct_ops/uno_ssthresh")
__u32 BPF_PROG(uno_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	__u32 flight = tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
	struct flow *f = flow_of(sk);

	count(C_LOSSES, 1);
	if (f)
		uno_sender_loss(&f->snd);
	return flight / 2 > 2 ? flight / 2 : 2;
}

SEC("struct_ops/uno_undo_cwnd")
__u32 BPF_PROG(uno_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

/* The loader replaces this name with the run's own. */
SEC(".struct_ops")
struct tcp_congestion_ops ecnlab_uno = {
	.init = (void *)uno_init,
	.release = (void *)uno_release,
	.in_ack_event = (void *)uno_in_ack_event,
	.ssthresh = (void *)uno_ssthresh,
	.cong_avoid = (void *)uno_cong_avoid,
	.undo_cwnd = (void *)uno_undo_cwnd,
	/* No TCP_CONG_NEEDS_ECN: ECN is negotiated in RFC 3168's handshake, asked for by the
	 * route's ecn feature (as MECN). */
	.name = "ecnlab_uno",
};

/* ------------------------------------------------------------------ the interfaces */

static __always_inline __u16 ip_ident(struct __sk_buff *skb)
{
	__u16 id = 0;

	bpf_skb_load_bytes(skb, IP_ID_OFF, &id, 2);
	return bpf_ntohs(id);
}

static __always_inline __u32 tcp_u32(struct __sk_buff *skb, const struct seg *s, __u32 off)
{
	__u32 v = 0;

	bpf_skb_load_bytes(skb, s->tcp_off + off, &v, 4);
	return bpf_ntohl(v);
}

static __always_inline __u32 payload_len(struct __sk_buff *skb, const struct seg *s)
{
	__u8 doff = 0;
	__u32 hdr;

	bpf_skb_load_bytes(skb, s->tcp_off + 12, &doff, 1);
	hdr = s->tcp_off + (doff >> 4) * 4;
	return skb->len > hdr ? skb->len - hdr : 0;
}

SEC("tc")
int uno_egress(struct __sk_buff *skb)
{
	struct seg s;
	struct flow *f;

	if (!parse(skb, &s) || (s.flags & (TCPHDR_SYN | TCPHDR_RST)))
		return TC_ACT_UNSPEC;
	f = bpf_map_lookup_elem(&flows, &s.key);
	if (f) {
		/* The sender's data: ECT(1), and noted in the ring. */
		__u32 len = payload_len(skb, &s);

		if (!len)
			return TC_ACT_UNSPEC;
		set_ecn(skb, &s, UNO_ECT1);
		count(C_DATA_RECODED, 1);
		if (!uno_sender_sent(&f->snd, tcp_u32(skb, &s, 4), len, ip_ident(skb), skb->gso_segs, skb->gso_size))
			count(C_UNO_RING_FULL, 1);
		return TC_ACT_UNSPEC;
	}
	f = lookup_reversed(&flows, &s);
	if (f && !payload_len(skb, &s)) {
		/* The receiver's pure ACK: the report in its IP-ID, ECE and AE. */
		struct uno_report r;
		__u8 ce = 0;

		if (!uno_rx_ack(&f->rx, &r, &ce))
			return TC_ACT_UNSPEC;
		{
			__u16 old = 0, new = bpf_htons(r.ident);

			bpf_skb_load_bytes(skb, IP_ID_OFF, &old, 2);
			if (old != new) {
				bpf_l3_csum_replace(skb, IP_CSUM_OFF, old, new, 2);
				bpf_skb_store_bytes(skb, IP_ID_OFF, &new, 2, 0);
			}
		}
		set_tcp_flags(skb, &s, TCPHDR_AE | TCPHDR_ECE | TCPHDR_CWR, (ce ? TCPHDR_AE : 0) | (r.load ? TCPHDR_ECE : 0));
		count(C_ECHOES_WRITTEN, 1);
	}
	return TC_ACT_UNSPEC;
}

/* At the sender: one ACK's report and coverage. */
static __always_inline void sender_ack(struct __sk_buff *skb, struct seg *s, struct flow *f)
{
	__u8 b12 = 0;
	int ece = s->flags & TCPHDR_ECE, level;

	bpf_skb_load_bytes(skb, s->tcp_off + 12, &b12, 1);
	if (ece)
		count(C_ACKS_ECE, 1);
	level = uno_sender_ack(&f->snd, tcp_u32(skb, s, 8), ip_ident(skb), ece, b12 & (TCPHDR_AE >> 8));
	if (level == -2) {
		count(C_UNO_BLOCKS_SKIPPED, 1);
	} else if (level >= 0 && level <= UNO_NO_ROUTER) {
		f->level = level;
		f->decisions++;
		count(C_ESTIMATES, 1);
		count(C_ESTIMATE_SUM, level);
		count(C_UNO_LEVEL0 + level, 1);
	}
}

SEC("tc")
int uno_ingress(struct __sk_buff *skb)
{
	struct seg s;
	struct flow *f;

	if (!parse(skb, &s) || (s.flags & (TCPHDR_SYN | TCPHDR_RST)))
		return TC_ACT_UNSPEC;
	f = bpf_map_lookup_elem(&flows, &s.key);
	if (f) {
		/* At the receiver: the data's IP-ID and codepoint. */
		__u8 ecn = s.tos & 3;

		if (!payload_len(skb, &s))
			return TC_ACT_UNSPEC;
		uno_rx_data(&f->rx, ip_ident(skb), ecn);
		count(C_DATA_IN, 1);
		if (ecn == UNO_ECT0)
			count(C_DATA_IN_MARKED, 1);
		else if (ecn == UNO_CE)
			count(C_DATA_IN_CE, 1);
		return TC_ACT_UNSPEC;
	}
	f = lookup_reversed(&flows, &s);
	if (f) {
		/* At the sender: the ACK's echo, for the controller; its kernel sees none of it. */
		sender_ack(skb, &s, f);
		set_tcp_flags(skb, &s, TCPHDR_AE | TCPHDR_ECE | TCPHDR_CWR, 0);
	}
	return TC_ACT_UNSPEC;
}
