//! pcap writer (libpcap classic format, LINKTYPE_RAW: each record is an IPv4 packet).

use super::Packet;
use crate::time::Time;
use std::io::Write;

pub struct PcapWriter {
    out: std::io::BufWriter<std::fs::File>,
    buf: Vec<u8>,
    error: Option<std::io::Error>,
}

impl PcapWriter {
    pub fn create(path: &std::path::Path) -> std::io::Result<Self> {
        let f = std::fs::File::create(path)?;
        let mut w = PcapWriter {
            out: std::io::BufWriter::new(f),
            buf: Vec::with_capacity(2048),
            error: None,
        };
        let mut hdr = Vec::with_capacity(24);
        hdr.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes()); // nanosecond-resolution magic
        hdr.extend_from_slice(&2u16.to_le_bytes());
        hdr.extend_from_slice(&4u16.to_le_bytes());
        hdr.extend_from_slice(&0i32.to_le_bytes());
        hdr.extend_from_slice(&0u32.to_le_bytes());
        hdr.extend_from_slice(&65535u32.to_le_bytes());
        hdr.extend_from_slice(&101u32.to_le_bytes()); // LINKTYPE_RAW
        w.out.write_all(&hdr)?;
        Ok(w)
    }

    /// Appends a packet seen at `t`. I/O errors are kept and reported by [`PcapWriter::finish`],
    /// so a full disk cannot abort a run half-way.
    pub fn write(&mut self, t: Time, pkt: &Packet) {
        if self.error.is_some() {
            return;
        }
        super::emit_packet(pkt, &mut self.buf);
        let ns = t / 1000;
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&(self.buf.len() as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&(self.buf.len() as u32).to_le_bytes());
        if let Err(e) = self
            .out
            .write_all(&rec)
            .and_then(|_| self.out.write_all(&self.buf))
        {
            self.error = Some(e);
        }
    }

    pub fn finish(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()
    }
}
