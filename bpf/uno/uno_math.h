/* UNO's one-bit feedback and UCP1's controller free of the kernel, so the same lines compile
 * into the BPF programs and into the unit tests (tests/test_bpf_uno.py). The includer
 * provides __u8, __u16, __u32, __u64.
 *
 * Vasić, Kuntimaddi, Kostić, "One Bit Is Enough" (seeds/001), with the simulator's readings
 * (crates/ecnlab/src/schemes/uno, whose module doc names each; the constants below say which
 * file and item they come from):
 *
 * - levels (Fig. 1): 0-5 the six bands of [0, 80 %), 6 = [80, 100 %) (AI), 7 = overload (MD),
 *   8 = no UNO router on the path (uno/mod.rs LEVELS, HIGH, OVERLOAD, NO_ROUTER);
 * - the receiver (§II-C, §II-A's delayed ACKs): an ACK reports, of the data since the last
 *   ACK, the packet with the highest IP-ID residue whose UNO bit is set, else the latest
 *   (codec.rs Report::keep), and whether a CE arrived;
 * - the sender: each ACK's report enters the block being collected; the cumulative ACK marks
 *   the residues of the segments it newly covers; when all eight are covered the block's
 *   highest level is the decision (codec.rs ack_in, decide), CE making it overload, a silent
 *   block after a router was heard skipped (up to ROUTER_FORGOTTEN_AFTER);
 * - UCP1 (§III-A, VCP's window mechanics, vcp/controller.rs): MI (1 + ξ(σ))^min(rtt/t_ρ, 2.5) - 1
 *   per acknowledged segment with ξ(σ) = 0.15 (1 - σ)/σ at the level's midpoint; AI
 *   α (rtt/t_ρ) / cwnd per segment with α = 3; MD × 0.875, then overload ignored for one t_ρ
 *   and AI for one RTT after that; t_ρ = 200 ms. The window is kept in 1/65536 segments, what
 *   each increment's truncation drops carried to the next;
 * - the sender's ring of frames in flight and the controller's step on the kernel's own
 *   fields are here too, so that the tests run what the programs run (uno.bpf.c only reads
 *   and writes the packets, the maps and the socket). */
#ifndef ECNLAB_UNO_MATH_H
#define ECNLAB_UNO_MATH_H

/* uno/mod.rs: HIGH, OVERLOAD, NO_ROUTER, LOW_LEVELS. */
#define UNO_LOW_LEVELS 6
#define UNO_HIGH 6
#define UNO_OVERLOAD 7
#define UNO_NO_ROUTER 8
/* codec.rs ROUTER_FORGOTTEN_AFTER. */
#define UNO_FORGOTTEN_AFTER 4

/* The IP ECN field (RFC 3168 values): the sender's ECT(1), a UNO router's ECT(0), a legacy
 * ECN router's CE (uno/mod.rs, "Codepoints"). */
#define UNO_ECT1 1
#define UNO_ECT0 2
#define UNO_CE 3

/* ------------------------------------------------------------------ the receiver */

/* What an ACK tells about the data it covers: the reported packet's IP-ID and whether its
 * UNO bit was set. */
struct uno_report {
	__u16 ident;
	__u8 load;
	__u8 valid;
};

struct uno_rx {
	struct uno_report pending;
	struct uno_report last;
	__u8 pending_ce;
};

/* Report::keep: of two reports one ACK covers, the higher set load residue, else the later. */
static inline struct uno_report uno_keep(struct uno_report a, struct uno_report later)
{
	int ra = a.load ? 8 + (a.ident & 7) : 0, rl = later.load ? 8 + (later.ident & 7) : 0;

	return ra > rl ? a : later;
}

/* A data packet arrives with IP-ID `ident` and ECN field `ecn`. */
static inline void uno_rx_data(struct uno_rx *rx, __u16 ident, __u8 ecn)
{
	struct uno_report r = { .ident = ident, .load = ecn == UNO_ECT0, .valid = 1 };

	rx->pending_ce |= ecn == UNO_CE;
	rx->pending = rx->pending.valid ? uno_keep(rx->pending, r) : r;
	rx->last = r;
}

/* The report a pure ACK carries (codec.rs ack_out); returns 0 when nothing has arrived yet.
 * *ce: a CE arrived since the last ACK. */
static inline int uno_rx_ack(struct uno_rx *rx, struct uno_report *out, __u8 *ce)
{
	if (!rx->pending.valid && !rx->last.valid)
		return 0;
	*out = rx->pending.valid ? rx->pending : rx->last;
	rx->pending.valid = 0;
	*ce = rx->pending_ce;
	rx->pending_ce = 0;
	return 1;
}

/* ------------------------------------------------------------------ the sender's blocks */

/* The residues (IP-ID mod 8) of n consecutive IP-IDs from `ident`, as a bit mask. */
static inline __u8 uno_residues(__u16 ident, __u32 n)
{
	__u32 r = ident & 7, run;

	if (n >= 8)
		return 0xff;
	run = ((1U << n) - 1) << r;
	return (__u8)(run | (run >> 8));
}

/* A block being collected: which residues it covered, the highest level reported + 1 (0:
 * none), and whether a CE was echoed. */
struct uno_block {
	__u8 covered;
	__u8 max_level1;
	__u8 ce;
};

struct uno_decider {
	struct uno_block block;
	__u8 router_heard;
	__u8 silent_blocks;
};

/* An ACK's report: its IP-ID and its echo flags (ECE: the UNO bit, AE: a CE arrived). */
static inline void uno_block_report(struct uno_block *b, __u16 ident, int ece, int ae)
{
	__u8 l1 = (ident & 7) + 1;

	if (ece && l1 > b->max_level1)
		b->max_level1 = l1;
	if (ae)
		b->ce = 1;
}

/* The ACK newly covered the residues `covered`. Returns the level decided (0-8) when the block
 * is complete, -1 while it is not, -2 when it was complete but skipped (a silent block on a
 * path whose router has been heard: codec.rs decide). */
static inline int uno_block_cover(struct uno_decider *d, __u8 covered)
{
	struct uno_block b;
	int level;

	d->block.covered |= covered;
	if (d->block.covered != 0xff)
		return -1;
	b = d->block;
	d->block.covered = 0;
	d->block.max_level1 = 0;
	d->block.ce = 0;
	if (b.max_level1) {
		d->router_heard = 1;
		d->silent_blocks = 0;
	}
	if (b.ce) {
		level = UNO_OVERLOAD;
	} else if (b.max_level1) {
		level = b.max_level1 - 1;
	} else if (d->router_heard && d->silent_blocks + 1 < UNO_FORGOTTEN_AFTER) {
		d->silent_blocks++;
		return -2;
	} else {
		d->router_heard = 0;
		d->silent_blocks = 0;
		level = UNO_NO_ROUTER;
	}
	return level;
}

/* Loss overrides load: the block in collection is discarded (codec.rs note_losses). */
static inline void uno_block_forget(struct uno_decider *d)
{
	d->block.covered = 0;
	d->block.max_level1 = 0;
	d->block.ce = 0;
}

/* A data frame the sender sent: its sequence range, first IP-ID and segments (a GSO frame's
 * segments carry consecutive IP-IDs, each `size` bytes but the last); `done` of them covered. */
struct uno_frame {
	__u32 start;
	__u32 end;
	__u16 ident;
	__u16 size;
	__u16 segs;
	__u16 done;
};

/* The residues of the frame's segments that cumulative ACK `ack` newly covers (a segment is
 * covered when its end is at or before `ack`); updates f->done. Returns whether the whole
 * frame is now covered. */
static inline int uno_frame_cover(struct uno_frame *f, __u32 ack, __u8 *covered)
{
	__u32 n;

	if ((__s32)(ack - f->end) >= 0) {
		n = f->segs;
	} else {
		if ((__s32)(ack - f->start) <= 0 || !f->size)
			return 0;
		n = (ack - f->start) / f->size;
		if (n >= f->segs)
			n = f->segs - 1;
	}
	if (n > f->done) {
		*covered |= uno_residues(f->ident + f->done, n - f->done);
		f->done = n;
	}
	return n == f->segs;
}

/* Frames a sender may have in flight before one finds no room (a window of 512 GSO frames:
 * ~1200 segments at 2.3 segments per frame; docs/emulation.md gives the rates this bounds). */
#define UNO_RING 512
/* Frames one ACK may cover in one pass (the rest are covered by the next advancing ACK). */
#define UNO_COVER_MAX 64

/* The sender's side of a connection: the block in collection, the highest cumulative ACK,
 * the ring of frames in flight (written at head by the egress, taken at tail by the ingress)
 * and the losses (the controller's ssthresh) the ingress has yet to apply. */
struct uno_sender {
	struct uno_decider d;
	__u8 una_valid;
	__u32 una;
	__u32 loss_gen;
	__u32 loss_seen;
	__u32 forget_to;
	__u32 head;
	__u32 tail;
	struct uno_frame ring[UNO_RING];
};

/* A data frame left: `len` bytes from `seq`, first IP-ID `ident`, `segs` segments of `size`
 * bytes (the last may be shorter). Returns 0 when the ring had no room (the frame is not noted:
 * its residues are never covered, so the block waits for later frames). */
static inline int uno_sender_sent(struct uno_sender *s, __u32 seq, __u32 len, __u16 ident, __u16 segs, __u16 gso_size)
{
	__u32 head = s->head;
	struct uno_frame *fr;

	if (head - s->tail >= UNO_RING)
		return 0;
	fr = &s->ring[head & (UNO_RING - 1)];
	fr->start = seq;
	fr->end = seq + len;
	fr->ident = ident;
	fr->segs = segs ? segs : 1;
	fr->size = fr->segs > 1 ? gso_size : len;
	fr->done = 0;
	s->head = head + 1;
	return 1;
}

/* A loss (the window reduced for it): the block in collection and every frame sent so far are
 * discarded when the next ACK comes in (codec.rs note_losses / forget_block: loss overrides
 * load). Marked here, applied by uno_sender_ack, which runs on the ACK path. */
static inline void uno_sender_loss(struct uno_sender *s)
{
	s->forget_to = s->head;
	s->loss_gen++;
}

/* An ACK at the sender: cumulative ACK `ack`, the report's IP-ID `ident`, ECE and AE. The
 * report enters the block whether or not the ACK advances (codec.rs ack_in takes duplicates'
 * reports too); an advancing ACK covers its frames' segments. Returns the level decided (0-8),
 * -1 for no decision, -2 for a skipped silent block. */
static inline int uno_sender_ack(struct uno_sender *s, __u32 ack, __u16 ident, int ece, int ae)
{
	__u8 covered = 0;
	__u32 tail;

	if (s->loss_seen != s->loss_gen) {
		s->loss_seen = s->loss_gen;
		if ((__s32)(s->forget_to - s->tail) > 0 && (__s32)(s->head - s->forget_to) >= 0)
			s->tail = s->forget_to;
		uno_block_forget(&s->d);
	}
	uno_block_report(&s->d.block, ident, ece, ae);
	if (s->una_valid && (__s32)(ack - s->una) <= 0)
		return -1;
	s->una = ack;
	s->una_valid = 1;
	tail = s->tail;
	for (int i = 0; i < UNO_COVER_MAX; i++) {
		if (tail == s->head)
			break;
		if (!uno_frame_cover(&s->ring[tail & (UNO_RING - 1)], ack, &covered))
			break;
		tail++;
	}
	s->tail = tail;
	if (!covered)
		return -1;
	return uno_block_cover(&s->d, covered);
}

/* ------------------------------------------------------------------ UCP1's controller */

#define UNO_SEG 65536ULL
/* Fixed point of the MI power: 1/2^24 (e^2.83 = 17 squared stays below 2^64). */
#define UNO_FX_SHIFT 24
#define UNO_FX (1ULL << UNO_FX_SHIFT)

/* ln(1 + ξ(σ)) in 1/2^24 for levels 0-5, ξ(σ) = k (1 - σ)/σ with k = 0.15 (§III-A) and σ the
 * level's midpoint (l + 1/2)·0.8/6 (controller.rs UcpConfig::default: xi_sigma = midpoint,
 * low_load = 0.8): ξ = 2.1, 0.6, 0.3, 0.1714, 0.1, 0.0545. tests/test_bpf_uno.py recomputes
 * them from those formulas. */
static const __u32 uno_ln1p_xi[UNO_LOW_LEVELS] = { 18981778, 7885352, 4401742, 2654558, 1599039, 891035 };

/* The table's entry for a level, levels above 5 taking level 5's. A branch per level rather
 * than an index: the BPF verifier loses the clamp's bound on the index (and an eight-entry
 * table masked with 7 lands in .rodata.cst32, which libbpf does not load). */
static inline __u32 uno_ln1p_xi_of(__u8 level)
{
	switch (level) {
	case 0: return uno_ln1p_xi[0];
	case 1: return uno_ln1p_xi[1];
	case 2: return uno_ln1p_xi[2];
	case 3: return uno_ln1p_xi[3];
	case 4: return uno_ln1p_xi[4];
	default: return uno_ln1p_xi[5];
	}
}

/* §III-A's parameters as the simulator's defaults (controller.rs UcpConfig::default;
 * tests/test_bpf_uno.py compares them with the defaults the simulator writes out). */
#define UNO_T_RHO_US 200000ULL   /* t_ρ = 200 ms (§III-B, as VCP) */
#define UNO_MAX_RTT_RATIO_X2 5   /* rtt/t_ρ capped at 2.5 in MI's exponent (VCP's ns-2) */
#define UNO_ALPHA 3ULL           /* AI α = 3.0 */
#define UNO_BETA_NUM 7ULL        /* MD β = 0.875 = 7/8 */
#define UNO_BETA_DEN 8ULL
#define UNO_INITIAL_LEVEL 5      /* initial_level: the gentlest MI until the first decision */

/* e^x for x >= 0 in 1/2^24: x halved until at most 1/8, five terms of the series there
 * (error below 3e-7), squared back with rounding. */
static inline __u64 uno_exp_fx(__u64 x)
{
	__u64 p, x2, x3, x4;
	int halvings = 0;

	for (int i = 0; i < 32 && x > UNO_FX / 8; i++) {
		x >>= 1;
		halvings++;
	}
	x2 = (x * x) >> UNO_FX_SHIFT;
	x3 = (x2 * x) >> UNO_FX_SHIFT;
	x4 = (x3 * x) >> UNO_FX_SHIFT;
	p = UNO_FX + x + x2 / 2 + x3 / 6 + x4 / 24;
	for (int i = 0; i < 32; i++) {
		if (i >= halvings)
			break;
		p = (p * p + (UNO_FX >> 1)) >> UNO_FX_SHIFT;
	}
	return p;
}

/* MI's increment per acknowledged segment, in 1/2^24 segments: (1 + ξ)^min(rtt/t_ρ, 2.5) - 1. */
static inline __u64 uno_mi_increment_fx(__u8 level, __u64 rtt_us, __u64 t_rho_us)
{
	__u64 cap = t_rho_us * UNO_MAX_RTT_RATIO_X2 / 2, x;

	if (rtt_us > cap)
		rtt_us = cap;
	x = rtt_us * uno_ln1p_xi_of(level) / t_rho_us;
	return uno_exp_fx(x) - UNO_FX;
}

/* The same in 1/65536 segments (truncated; uno_grow carries what this drops). */
static inline __u64 uno_mi_increment(__u8 level, __u64 rtt_us, __u64 t_rho_us)
{
	return uno_mi_increment_fx(level, rtt_us, t_rho_us) >> (UNO_FX_SHIFT - 16);
}

/* AI's increment per acknowledged segment times the window: α (rtt/t_ρ) in 1/65536 segments
 * squared, so that dividing by the window (1/65536 segments) gives 1/65536 segments. Linear in
 * rtt/t_ρ and not capped (§III-A; ai_scaling = linear); rtt capped at 10 s here only to bound
 * the product (below 2^64 for up to 28 000 segments per ACK at the cap). */
static inline __u64 uno_ai_numerator(__u64 rtt_us, __u64 t_rho_us)
{
	if (rtt_us > 10000000)
		rtt_us = 10000000;
	return UNO_ALPHA * rtt_us * UNO_SEG * UNO_SEG / t_rho_us;
}

/* AI's increment per acknowledged segment at window `cwnd` (1/65536 segments), in 1/65536
 * segments (truncated; uno_grow carries what this drops). */
static inline __u64 uno_ai_increment(__u64 cwnd, __u64 rtt_us, __u64 t_rho_us)
{
	return uno_ai_numerator(rtt_us, t_rho_us) / (cwnd ? cwnd : 1);
}

/* After an MD: overload ignored until `until` (the freeze, one t_ρ), then AI on overload for
 * one RTT (vcp/controller.rs Phase). */
#define UNO_IDLE 0
#define UNO_FREEZE 1
#define UNO_AI_AFTER_MD 2

#define UNO_MI 0
#define UNO_AI 1
#define UNO_HOLD 2

/* RTT assumed before the kernel's first sample (controller.rs UcpConfig::default
 * initial_rtt_s = 0.1). */
#define UNO_INITIAL_RTT_US 100000ULL

struct uno_ctl {
	/* The window in 1/65536 segments, and what the increments' truncation dropped: MI's in
	 * 1/2^24 segments (below 1/65536), AI's in 1/65536 segments times the window (below the
	 * window), so that many small increments add up as the simulator's floating point. */
	__u64 cwnd;
	__u64 until_us;
	__u64 ai_rem;
	__u32 mi_rem;
	/* The kernel's window as last written, and the decisions already taken (the flow's
	 * count in the map). */
	__u32 written;
	__u32 decisions_seen;
	__u8 phase;
	/* The last decision's level (0-8). */
	__u8 level;
};

static inline void uno_advance(struct uno_ctl *c, __u64 now_us, __u64 rtt_us)
{
	for (int i = 0; i < 2; i++) {
		if (c->phase == UNO_FREEZE && now_us >= c->until_us) {
			c->phase = UNO_AI_AFTER_MD;
			c->until_us += rtt_us;
		} else if (c->phase == UNO_AI_AFTER_MD && now_us >= c->until_us) {
			c->phase = UNO_IDLE;
		} else {
			break;
		}
	}
}

/* A decision arrived (Vcp::on_signal through Ucp::on_signal): returns the action of this
 * ACK; an MD (from the idle phase) cuts the window at once and starts the freeze. *md is set
 * when it cut. */
static inline int uno_on_decision(struct uno_ctl *c, __u8 level, __u64 now_us, __u64 rtt_us, __u64 t_rho_us, int *md)
{
	*md = 0;
	c->level = level;
	uno_advance(c, now_us, rtt_us);
	if (level < UNO_LOW_LEVELS)
		return UNO_MI;
	if (level == UNO_HIGH || level == UNO_NO_ROUTER)
		return UNO_AI;
	if (c->phase == UNO_IDLE) {
		__u64 n = c->cwnd * UNO_BETA_NUM / UNO_BETA_DEN;

		c->cwnd = n > UNO_SEG ? n : UNO_SEG;
		c->ai_rem = 0;
		c->mi_rem = 0;
		c->phase = UNO_FREEZE;
		c->until_us = now_us + t_rho_us;
		*md = 1;
		return UNO_HOLD;
	}
	return c->phase == UNO_FREEZE ? UNO_HOLD : UNO_AI;
}

/* The action of an ACK without a decision: the last level keeps acting, never an MD
 * (Vcp::on_ack). */
static inline int uno_default_action(struct uno_ctl *c, __u64 now_us, __u64 rtt_us)
{
	uno_advance(c, now_us, rtt_us);
	if (c->level < UNO_LOW_LEVELS)
		return UNO_MI;
	if (c->level == UNO_HIGH || c->level == UNO_NO_ROUTER || c->phase == UNO_AI_AFTER_MD)
		return UNO_AI;
	return UNO_HOLD;
}

/* The window after `acked` segments acknowledged under `action`; the parts of an increment
 * below 1/65536 segment are carried to the next ACK, not dropped (dropped, AI fell 24 % short
 * at 40 ms and 10 000 segments and stopped at 1 ms and 1 000). */
static inline void uno_grow(struct uno_ctl *c, int action, __u32 acked, __u64 rtt_us, __u64 t_rho_us)
{
	if (action == UNO_MI) {
		__u64 total = uno_mi_increment_fx(c->level, rtt_us, t_rho_us) * acked + c->mi_rem;

		c->cwnd += total >> (UNO_FX_SHIFT - 16);
		c->mi_rem = total & ((1U << (UNO_FX_SHIFT - 16)) - 1);
	} else if (action == UNO_AI) {
		__u64 w = c->cwnd ? c->cwnd : 1;
		__u64 total = uno_ai_numerator(rtt_us, t_rho_us) * acked + c->ai_rem;

		c->cwnd += total / w;
		c->ai_rem = total % w;
	}
}

/* ---------------------------------------------------------- the controller on the kernel's fields */

/* A connection starts with the kernel's window `snd_cwnd` (segments). */
static inline void uno_ctl_init(struct uno_ctl *c, __u32 snd_cwnd)
{
	__builtin_memset(c, 0, sizeof(*c));
	c->level = UNO_INITIAL_LEVEL;
	c->cwnd = (__u64)snd_cwnd * UNO_SEG;
	c->written = snd_cwnd;
}

/* The RTT from tcp_sock's srtt_us, which holds eight times the smoothed RTT in µs. */
static inline __u64 uno_rtt_us(__u32 srtt_us_x8)
{
	__u64 srtt = srtt_us_x8 >> 3;

	return srtt ? srtt : UNO_INITIAL_RTT_US;
}

/* Outside the kernel's Open and Disorder states a decision only changes the level
 * (Vcp::on_signal returns before acting in fast recovery). */
static inline void uno_note_decision(struct uno_ctl *c, __u32 decisions, __u8 level)
{
	if (decisions != c->decisions_seen) {
		c->decisions_seen = decisions;
		c->level = level;
	}
}

#define UNO_MAX_SEGMENTS_PER_ACK 2

/* One ACK through the kernel's cong_avoid, with the kernel's own fields: its window and clamp
 * (segments), srtt_us (x8), tcp_mstamp (µs), the segments the ACK acknowledged, and the
 * connection's decision count and last level from the map. Returns the window to write into
 * snd_cwnd; *action is what the ACK did, *md whether it cut. */
static inline __u32 uno_cong_avoid_ack(struct uno_ctl *c, __u32 snd_cwnd, __u32 clamp, __u32 srtt_us_x8, __u64 now_us, __u32 acked, __u32 decisions, __u8 level, int *action, int *md)
{
	__u64 rtt = uno_rtt_us(srtt_us_x8), lim = (__u64)clamp * UNO_SEG, w;

	*md = 0;
	/* What the kernel did to the window since it was last written (recovery, timeouts,
	 * undo) is taken up. */
	if (snd_cwnd != c->written) {
		c->cwnd = (__u64)snd_cwnd * UNO_SEG;
		c->ai_rem = 0;
		c->mi_rem = 0;
	}
	if (decisions != c->decisions_seen) {
		c->decisions_seen = decisions;
		*action = uno_on_decision(c, level, now_us, rtt, UNO_T_RHO_US, md);
	} else {
		*action = uno_default_action(c, now_us, rtt);
	}
	/* An ACK counts for two segments at most, as the simulator's default
	 * (cc::MAX_SEGMENTS_PER_ACK, RFC 3465's L = 2): the ACK after a timeout's repair covers the
	 * whole repaired window, and Linux's stretch ACKs are limited too. */
	if (acked > UNO_MAX_SEGMENTS_PER_ACK)
		acked = UNO_MAX_SEGMENTS_PER_ACK;
	uno_grow(c, *action, acked, rtt, UNO_T_RHO_US);
	if (c->cwnd > lim)
		c->cwnd = lim;
	w = c->cwnd / UNO_SEG;
	c->written = w ? (__u32)w : 1;
	return c->written;
}

#endif
