"""Capacity of a wireless hop over time, as link rates the simulator can follow.

The simulator models a Wi-Fi hop by its capacity and batched service, not by a MAC/PHY. This
module turns a mobility scenario into that capacity:

- **Positions**: clients move by random waypoint in a square centred on the AP (APCC's
  10 × 10 m): a uniform destination in the square, a uniform speed in
  [``speed_min``, ``speed_max``] m/s, then ``pause_s`` at the destination (ns-3's
  RandomWaypointMobilityModel: 0.3–0.7 m/s, 2 s; defaults here 0.5–1.5 m/s, no pause).
- **Signal**: log-distance path loss ``PL(d) = PL(1 m) + 10·n·log10(d)`` with the 5 GHz
  free-space loss at 1 m (46.7 dB) and an indoor exponent n = 3 (ns-3's
  LogDistancePropagationLossModel at 5 GHz); transmit power ``tx_power_dbm`` (20 dBm; ns-3's
  WifiPhy 16.0206); a constant ``fixed_loss_db`` plus a random loss drawn uniformly in
  [0, ``fading_db``] dB per step and client. ns-3's RandomPropagationLossModel draws its
  ``Variable`` per packet, and that variable is a constant 1 dB unless set: ``fixed_loss_db =
  1, fading_db = 0`` is its default.
- **Rate**: the highest 802.11ax MCS (80 MHz, 2 spatial streams, 0.8 µs guard) whose
  receiver sensitivity the signal meets (:data:`MCS_TABLE`), MCS 0 below that (rate
  adaptation's floor), times a MAC efficiency (``efficiency``, 0.6: aggregation, contention
  and acknowledgements).
- **Medium**: with several clients, equal frame shares give every client the same throughput,
  so the medium delivers the harmonic mean of their rates (802.11's performance anomaly);
  with ``airtime_fair`` (an airtime scheduler, as Linux's mac80211 runs) each client gets an
  equal share of the air, so the medium delivers the arithmetic mean.

Everything is seeded: the same seed gives the same rates.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path

from .fsutil import atomic_write_text

__all__ = ["MCS_TABLE", "MAX_TRACE_LINES", "MobilityModel", "mahimahi_lines", "max_lines", "write_mahimahi"]

#: (minimum RSSI in dBm, PHY rate in Mb/s) for 802.11ax MCS 0–11, 80 MHz, 2 spatial
#: streams, 0.8 µs guard interval; sensitivities from the standard's minimum input levels
#: for 80 MHz (MCS 0 at −76 dBm, rising about 3 dB per MCS, MCS 10–11 at −49 / −46 dBm).
MCS_TABLE: tuple[tuple[float, float], ...] = (
    (-76.0, 72.1),
    (-73.0, 144.1),
    (-71.0, 216.2),
    (-68.0, 288.2),
    (-64.0, 432.4),
    (-60.0, 576.5),
    (-59.0, 648.5),
    (-57.0, 720.6),
    (-52.0, 864.7),
    (-51.0, 960.8),
    (-49.0, 1080.9),
    (-46.0, 1201.0),
)

PL_1M_DB = 46.7
PATH_LOSS_EXPONENT = 3.0
TX_POWER_DBM = 20.0


def phy_rate_mbps(rssi_dbm: float) -> float:
    """The highest MCS rate whose sensitivity ``rssi_dbm`` meets (0 below MCS 0)."""
    rate = 0.0
    for threshold, mbps in MCS_TABLE:
        if rssi_dbm >= threshold:
            rate = mbps
    return rate


def rssi_dbm(distance_m: float, extra_loss_db: float = 0.0) -> float:
    d = max(distance_m, 0.1)
    return TX_POWER_DBM - (PL_1M_DB + 10 * PATH_LOSS_EXPONENT * math.log10(d)) - extra_loss_db


@dataclass(frozen=True)
class MobilityModel:
    clients: int = 2
    side_m: float = 10.0
    speed_min: float = 0.5
    speed_max: float = 1.5
    fading_db: float = 30.0
    efficiency: float = 0.6
    step_s: float = 0.01
    pause_s: float = 0.0
    fixed_loss_db: float = 0.0
    tx_power_dbm: float = TX_POWER_DBM
    airtime_fair: bool = False

    def rates_bps(self, duration_s: float, seed: int) -> list[float]:
        """The medium's capacity in bits/s for each ``step_s`` of ``duration_s``."""
        if self.clients < 1:
            raise ValueError("clients: at least 1")
        if not (self.speed_max >= self.speed_min > 0):
            raise ValueError("speed_min, speed_max: 0 < speed_min <= speed_max")
        if self.step_s <= 0 or duration_s <= 0:
            raise ValueError("step_s and duration_s must be positive")
        if self.pause_s < 0 or self.fixed_loss_db < 0 or self.fading_db < 0:
            raise ValueError("pause_s, fixed_loss_db and fading_db must be non-negative")
        rng = random.Random(seed)
        half = self.side_m / 2
        state = []
        for _ in range(self.clients):
            x, y = rng.uniform(-half, half), rng.uniform(-half, half)
            # [x, y, destination x, destination y, speed, pause left]
            state.append([x, y, rng.uniform(-half, half), rng.uniform(-half, half), rng.uniform(self.speed_min, self.speed_max), 0.0])
        out = []
        for _ in range(int(round(duration_s / self.step_s))):
            rates = []
            for c in state:
                if c[5] > 0:
                    c[5] = max(c[5] - self.step_s, 0.0)
                else:
                    move = c[4] * self.step_s
                    dx, dy = c[2] - c[0], c[3] - c[1]
                    dist = math.hypot(dx, dy)
                    if dist <= move:
                        c[0], c[1] = c[2], c[3]
                        c[2], c[3] = rng.uniform(-half, half), rng.uniform(-half, half)
                        c[4] = rng.uniform(self.speed_min, self.speed_max)
                        c[5] = self.pause_s
                    else:
                        c[0] += dx / dist * move
                        c[1] += dy / dist * move
                loss = self.fixed_loss_db + rng.uniform(0, self.fading_db)
                rssi = rssi_dbm(math.hypot(c[0], c[1]), loss) + self.tx_power_dbm - TX_POWER_DBM
                # Below MCS 0's sensitivity rate adaptation stays at MCS 0 (and retries).
                mbps = max(phy_rate_mbps(rssi), MCS_TABLE[0][1])
                rates.append(mbps * 1e6 * self.efficiency)
            if self.airtime_fair:
                out.append(sum(rates) / len(rates))
            else:
                out.append(len(rates) / sum(1 / r for r in rates))
        return out

    def schedule(self, duration_s: float, seed: int) -> list[dict[str, str]]:
        """The rates as a link ``schedule`` (steps where the rate changes; the first at 0)."""
        steps = []
        last = None
        for i, r in enumerate(self.rates_bps(duration_s, seed)):
            bps = int(round(r))
            if bps != last:
                steps.append({"at": f"{i * self.step_s:.6f}s", "rate": f"{bps}bps"})
                last = bps
        return steps


#: Lines of a generated trace (about 150 MB of text): beyond, generating it holds gigabytes.
MAX_TRACE_LINES = 20_000_000


def max_lines(model: MobilityModel, duration_s: float, mtu: int) -> float:
    """The most delivery opportunities ``duration_s`` of the model can give: every client at
    the fastest MCS all the time."""
    return duration_s * MCS_TABLE[-1][1] * 1e6 * model.efficiency / (mtu * 8)


def mahimahi_lines(rates_bps: list[float], step_s: float, mtu: int = 1500) -> list[int]:
    """Delivery opportunities (ms) carrying ``rates_bps``, one step after another: each
    millisecond gets the opportunities its rate fills, the fractions carried over."""
    out: list[int] = []
    carry = 0.0
    ms_per_step = step_s * 1000
    t = 0
    for r in rates_bps:
        for _ in range(int(round(ms_per_step))):
            t += 1
            carry += r / 1000 / (mtu * 8)
            n = int(carry)
            carry -= n
            out.extend([t] * n)
    if not out or out[-1] != t:
        out.append(t)  # the period ends with the last millisecond
    return out


def write_mahimahi(path: str | Path, lines: list[int]) -> Path:
    """Writes the trace lines of :func:`mahimahi_lines` to ``path``, whole or not at all."""
    return atomic_write_text(path, "".join(f"{t}\n" for t in lines))
