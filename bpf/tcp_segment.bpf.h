/* A TCP segment as the tc programs on an emulated host's interface see it. The interfaces
 * are L3 devices (TUN), so a packet starts at its IP header. Shared by the schemes whose
 * signal the kernel's TCP does not carry (EECN, MECN). */
#ifndef ECNLAB_TCP_SEGMENT_BPF_H
#define ECNLAB_TCP_SEGMENT_BPF_H

#include <bpf/bpf_endian.h>

#define ETH_P_IP 0x0800
/* What every tc program returns: "no verdict" (include/uapi/linux/pkt_cls.h), so the next
 * filter on the hook sees the packet, and the stack after the last. The hosts' interfaces
 * carry one filter per BPF scheme in the run; TC_ACT_OK would end the chain at the filter
 * attached last (the kernel gives each new filter a priority before the others'), and the
 * other schemes' programs would never see a packet. */
#define TC_ACT_UNSPEC (-1)

/* A connection in its data direction: sender's address and port, then the receiver's, as
 * on the wire (network byte order). */
struct flow_key {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
};

/* An IPv4 TCP segment: its key in the direction it travels, the offset of its TCP header,
 * its TOS byte (ECN field in the low two bits), its flags and whether it carries data. */
struct seg {
	struct flow_key key;
	__u32 tcp_off;
	__u8 tos;
	__u8 flags;
	int data;
};

/* Fills s from skb; returns 0 for anything but an IPv4 TCP segment. */
static __always_inline int parse(struct __sk_buff *skb, struct seg *s)
{
	struct iphdr ip;
	struct tcphdr tcp;
	__u32 ihl, doff, total;

	if (skb->protocol != bpf_htons(ETH_P_IP))
		return 0;
	if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)) || ip.version != 4 || ip.protocol != IPPROTO_TCP)
		return 0;
	ihl = ip.ihl * 4;
	if (ihl < sizeof(ip) || bpf_skb_load_bytes(skb, ihl, &tcp, sizeof(tcp)))
		return 0;
	doff = tcp.doff * 4;
	total = bpf_ntohs(ip.tot_len);
	s->key.saddr = ip.saddr;
	s->key.daddr = ip.daddr;
	s->key.sport = tcp.source;
	s->key.dport = tcp.dest;
	s->tcp_off = ihl;
	s->tos = ip.tos;
	/* The byte after the data offset: CWR ECE URG ACK PSH RST SYN FIN. */
	bpf_skb_load_bytes(skb, ihl + 13, &s->flags, 1);
	s->data = total > ihl + doff;
	return 1;
}

#endif
