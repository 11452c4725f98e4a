/* What every ecnlab congestion controller in BPF shares: the kernel's types (vmlinux.h,
 * generated from this machine's BTF at build time), libbpf's helpers, the counters map the
 * emulation reads after a run, and the few kernel constants and inlines that BTF does not
 * carry (macros and static inlines of include/net/tcp.h and include/net/inet_connection_sock.h). */
#ifndef ECNLAB_COMMON_BPF_H
#define ECNLAB_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "counters.h"

/* include/net/tcp.h */
#define TCP_ECN_OK 1
#define TCP_ECN_DEMAND_CWR 4
#define TCP_CONG_NEEDS_ECN 0x2
/* include/net/inet_connection_sock.h's enum inet_csk_ack_state_t is in BTF: its values are
 * read from the running kernel's (CO-RE enum relocations), never written here by hand. */
#define ICSK_ACK(name) bpf_core_enum_value(enum inet_csk_ack_state_t, name)

/* One array of counters per controller object, pinned by the loader beside the controller's
 * link so the emulation can read it when the run ends. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ECNLAB_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 which, __u64 by)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		__sync_fetch_and_add(c, by);
}

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

/* The controller's private per-connection area (icsk_ca_priv, 13 u64 on Linux 6.x). */
static __always_inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

/* A connection in its data direction: sender's address and port, then the receiver's, as
 * on the wire (network byte order). */
struct flow_key {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
};

/* The key of a connection whose data sk sends (skc_num is the one port in host order). */
static __always_inline struct flow_key flow_key_of(const struct sock *sk)
{
	struct flow_key key = {
		.saddr = sk->__sk_common.skc_rcv_saddr,
		.daddr = sk->__sk_common.skc_daddr,
		.sport = bpf_htons(sk->__sk_common.skc_num),
		.dport = sk->__sk_common.skc_dport,
	};

	return key;
}

/* Sequence-space comparison (RFC 793 modulo 2^32), as Linux's before(). */
static __always_inline int seq_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

#endif
