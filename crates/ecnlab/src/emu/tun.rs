//! TUN devices as the forwarder's taps: one per host, a layer-3 device whose file descriptor
//! stays with the forwarder when the device itself is moved into the host's network
//! namespace. IPv4 packets only, no link layer (no ARP, no MAC addresses), no offloads: the
//! kernel segments and checksums before a packet reaches the device.

use super::Io;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// One TUN device, deleted when dropped (the descriptor is its last reference).
pub struct Tun {
    fd: OwnedFd,
    pub name: String,
}

impl Tun {
    /// Creates a TUN device named `name` (at most 15 bytes), non-blocking.
    pub fn create(name: &str) -> io::Result<Tun> {
        if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(['/', ' ', '\0']) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("interface name {name:?}: 1 to 15 bytes, no '/', space or NUL"),
            ));
        }
        // SAFETY: a NUL-terminated path and flags; the result is checked.
        let raw = unsafe {
            libc::open(
                c"/dev/net/tun".as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a descriptor we just opened and own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: IFF_TUN | IFF_NO_PI,
            _pad: [0; 22],
        };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: TUNSETIFF reads and writes one `struct ifreq`, which `IfReq` lays out.
        let rc = unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, &mut req) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Tun {
            fd,
            name: name.to_string(),
        })
    }
}

/// The forwarder's taps as TUN devices, with the monotonic clock.
pub struct TunIo {
    pub tuns: Vec<Tun>,
    polls: Vec<libc::pollfd>,
    /// Taps that may hold a packet: set by a poll, cleared when a read finds none, so a
    /// turn of the forwarder's loop costs one system call, not one per tap.
    ready: Vec<bool>,
}

impl TunIo {
    pub fn new(tuns: Vec<Tun>) -> Self {
        let polls = tuns
            .iter()
            .map(|t| libc::pollfd {
                fd: t.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let ready = vec![true; tuns.len()];
        TunIo { tuns, polls, ready }
    }

    /// Polls every tap, waiting at most `timeout`, and notes which are readable.
    fn poll(&mut self, timeout: &libc::timespec) {
        for p in &mut self.polls {
            p.revents = 0;
        }
        // SAFETY: an array of valid pollfds and a timespec; no signal mask change.
        let n = unsafe {
            libc::ppoll(
                self.polls.as_mut_ptr(),
                self.polls.len() as libc::nfds_t,
                timeout,
                std::ptr::null(),
            )
        };
        if n > 0 {
            for (r, p) in self.ready.iter_mut().zip(&self.polls) {
                *r |= p.revents & libc::POLLIN != 0;
            }
        }
    }
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC in nanoseconds (the clock Python's `time.monotonic_ns` reads).
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// Sets this thread's timer slack (how late the kernel may wake a sleeper), returning the
/// previous value.
pub fn set_timer_slack_ns(ns: u64) -> u64 {
    // SAFETY: prctl with integer arguments only.
    let old = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    // SAFETY: as above.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
    old.max(1) as u64
}

impl Io for TunIo {
    fn refresh(&mut self) {
        if !self.ready.iter().any(|&r| r) {
            self.poll(&libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            });
        }
    }

    fn recv(&mut self, tap: usize, buf: &mut [u8]) -> io::Result<Option<usize>> {
        if !self.ready[tap] {
            return Ok(None);
        }
        let fd = self.tuns[tap].fd.as_raw_fd();
        // SAFETY: reads at most `buf.len()` bytes into `buf`.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::WouldBlock {
            self.ready[tap] = false;
            Ok(None)
        } else {
            Err(e)
        }
    }

    fn send(&mut self, tap: usize, bytes: &[u8]) -> io::Result<()> {
        let fd = self.tuns[tap].fd.as_raw_fd();
        // SAFETY: writes `bytes.len()` bytes from `bytes`.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n == bytes.len() as isize {
            Ok(())
        } else if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Err(io::Error::new(io::ErrorKind::WriteZero, "short write"))
        }
    }

    fn now_ns(&mut self) -> u64 {
        monotonic_ns()
    }

    fn wait(&mut self, until_ns: u64) {
        let now = monotonic_ns();
        if until_ns <= now {
            return;
        }
        let d = until_ns - now;
        let ts = libc::timespec {
            tv_sec: (d / 1_000_000_000) as libc::time_t,
            tv_nsec: (d % 1_000_000_000) as libc::c_long,
        };
        self.poll(&ts);
    }
}

/// CPU time of the calling thread in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}
