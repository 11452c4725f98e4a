/* A TCP segment as the tc programs on an emulated host's interface see it. The interfaces
 * are L3 devices (TUN), so a packet starts at its IP header. Shared by the schemes whose
 * signal the kernel's TCP does not carry (EECN, MECN, UNO), and the rewrites they make. */
#ifndef ECNLAB_TCP_SEGMENT_BPF_H
#define ECNLAB_TCP_SEGMENT_BPF_H

#define ETH_P_IP 0x0800
/* The IPv4 header checksum's offset (RFC 791). */
#define IP_CSUM_OFF 10
/* TCP's flags as Linux numbers them (include/net/tcp.h, TCPHDR_*): the flags byte (the TCP
 * header's 14th) in the low eight bits, and above it AE (RFC 9768; RFC 3540's NS), the low bit
 * of the byte before. */
#define TCPHDR_FIN 0x01
#define TCPHDR_SYN 0x02
#define TCPHDR_RST 0x04
#define TCPHDR_ACK 0x10
#define TCPHDR_ECE 0x40
#define TCPHDR_CWR 0x80
#define TCPHDR_AE 0x100
/* What every tc program returns: "no verdict" (include/uapi/linux/pkt_cls.h), so the next
 * filter on the hook sees the packet, and the stack after the last. The hosts' interfaces
 * carry one filter per BPF scheme in the run; TC_ACT_OK would end the chain at the filter
 * attached last (the kernel gives each new filter a priority before the others'), and the
 * other schemes' programs would never see a packet. */
#define TC_ACT_UNSPEC (-1)

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

/* The entry in map (keyed by struct flow_key) of the connection whose data s answers: s's key
 * reversed. */
static __always_inline void *lookup_reversed(void *map, const struct seg *s)
{
	struct flow_key k = {
		.saddr = s->key.daddr,
		.daddr = s->key.saddr,
		.sport = s->key.dport,
		.dport = s->key.sport,
	};

	return bpf_map_lookup_elem(map, &k);
}

/* Rewrites the IP ECN field, keeping the header checksum right. */
static __always_inline void set_ecn(struct __sk_buff *skb, struct seg *s, __u8 ecn)
{
	__u16 old = 0, new;
	__u8 tos = (s->tos & ~3) | ecn;

	if (tos == s->tos)
		return;
	bpf_skb_load_bytes(skb, 0, &old, 2);
	new = old;
	((__u8 *)&new)[1] = tos;
	bpf_l3_csum_replace(skb, IP_CSUM_OFF, old, new, 2);
	bpf_skb_store_bytes(skb, 1, &tos, 1, 0);
	s->tos = tos;
}

/* Rewrites the TCP flags in mask (TCPHDR_* bits) to bits, keeping the TCP checksum right;
 * returns whether the segment changed. */
static __always_inline int set_tcp_flags(struct __sk_buff *skb, struct seg *s, __u16 mask, __u16 bits)
{
	__u8 b[2] = {};
	__u16 old, new;

	if (bpf_skb_load_bytes(skb, s->tcp_off + 12, b, 2))
		return 0;
	__builtin_memcpy(&old, b, 2);
	b[0] = (b[0] & ~(mask >> 8)) | (bits >> 8);
	b[1] = (b[1] & ~mask) | bits;
	__builtin_memcpy(&new, b, 2);
	if (new == old)
		return 0;
	bpf_l4_csum_replace(skb, s->tcp_off + 16, old, new, 2);
	bpf_skb_store_bytes(skb, s->tcp_off + 12, b, 2, 0);
	s->flags = b[1];
	return 1;
}

#endif
