//! The out-of-band exchange RC setup needs before RTR, over an ordinary TCP connection on the
//! same fabric, as RDMA applications do (lesson 4: RDMA's connection setup needs TCP).
//!
//! What travels is real: each side emits its [`ConnInfo`] into 34 bytes, the bytes cross the
//! simulated kernel TCP path (handshake, `write()`, segments, `read()`), and the peer's RTR
//! attributes are taken from what it parsed, so a corrupted exchange would show up as a broken
//! connection rather than being papered over.

use super::HostIx;
use super::{World, WorldError};
use crate::world::tcp::TcpOptions;
use units::SimDuration;

/// What one RC peer tells the other before RTR: its QPN and first PSN, its GID, and for the
/// application's buffer an rkey and an address (zero when no buffer is registered yet).
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct ConnInfo {
    /// QP number (24 bits).
    pub qpn: u32,
    /// First PSN this side's requester sends (its sq_psn), the peer's rq_psn (24 bits).
    pub psn: u32,
    /// The port's GID (RoCEv2: the IPv4-mapped address).
    pub gid: [u8; 16],
    /// rkey of the buffer the peer may access.
    pub rkey: u32,
    /// Virtual address of that buffer.
    pub addr: u64,
}

impl ConnInfo {
    /// Bytes on the wire: QPN 3, PSN 3, GID 16, rkey 4, address 8 — all big-endian.
    pub const LEN: usize = 34;

    /// The wire form.
    pub fn emit(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[0..3].copy_from_slice(&self.qpn.to_be_bytes()[1..]);
        b[3..6].copy_from_slice(&self.psn.to_be_bytes()[1..]);
        b[6..22].copy_from_slice(&self.gid);
        b[22..26].copy_from_slice(&self.rkey.to_be_bytes());
        b[26..34].copy_from_slice(&self.addr.to_be_bytes());
        b
    }

    /// Parses the wire form; `None` unless exactly [`ConnInfo::LEN`] bytes.
    pub fn parse(b: &[u8]) -> Option<ConnInfo> {
        let b: &[u8; Self::LEN] = b.try_into().ok()?;
        let u24 = |s: &[u8]| u32::from_be_bytes([0, s[0], s[1], s[2]]);
        Some(ConnInfo {
            qpn: u24(&b[0..3]),
            psn: u24(&b[3..6]),
            gid: b[6..22].try_into().ok()?,
            rkey: u32::from_be_bytes(b[22..26].try_into().ok()?),
            addr: u64::from_be_bytes(b[26..34].try_into().ok()?),
        })
    }
}

impl World {
    /// Sends `bytes` each way between hosts `a` and `b` over a new TCP connection, every
    /// stage counted as setup: the three-way handshake, the socket calls and the segments are
    /// on the timeline and in the pcap like any other TCP traffic. Returns how long it took.
    pub fn exchange(
        &mut self,
        a: impl Into<HostIx>,
        b: impl Into<HostIx>,
        bytes: usize,
    ) -> Result<SimDuration, WorldError> {
        let (a, b): (HostIx, HostIx) = (a.into(), b.into());
        let start = self.sched.now();
        let msg = vec![0x5a; bytes];
        self.exchange_bytes(a, b, &msg, &msg)?;
        Ok(self.sched.now() - start)
    }

    /// Swaps `ours` (host `a`'s, host `b`'s) over TCP as [`World::exchange`] does and returns
    /// what each side parsed from the bytes it read: (what `a` learned, what `b` learned).
    pub fn exchange_conn_info(
        &mut self,
        a: impl Into<HostIx>,
        b: impl Into<HostIx>,
        ours: [ConnInfo; 2],
    ) -> Result<(ConnInfo, ConnInfo), WorldError> {
        let (a, b): (HostIx, HostIx) = (a.into(), b.into());
        let (got_a, got_b) = self.exchange_bytes(a, b, &ours[0].emit(), &ours[1].emit())?;
        match (ConnInfo::parse(&got_a), ConnInfo::parse(&got_b)) {
            (Some(x), Some(y)) => Ok((x, y)),
            _ => Err(WorldError::Exchange),
        }
    }

    /// `a` writes `from_a`, `b` writes `from_b`; returns (what `a` read, what `b` read).
    fn exchange_bytes(
        &mut self,
        a: HostIx,
        b: HostIx,
        from_a: &[u8],
        from_b: &[u8],
    ) -> Result<(Vec<u8>, Vec<u8>), WorldError> {
        for h in [a, b] {
            self.focus_host(h);
            self.state.hosts[h.index()].cpu.set_setup_mode(true);
        }
        let r = self.exchange_over_tcp(a, b, from_a, from_b);
        for h in [a, b] {
            self.focus_host(h);
            self.state.hosts[h.index()].cpu.set_setup_mode(false);
        }
        r
    }

    fn exchange_over_tcp(
        &mut self,
        a: HostIx,
        b: HostIx,
        from_a: &[u8],
        from_b: &[u8],
    ) -> Result<(Vec<u8>, Vec<u8>), WorldError> {
        // An ordinary socket with Linux's defaults (200 ms minimum RTO), not the data-centre
        // 1 ms the report's TCP path uses: each side's 34 bytes leave before the peer's
        // arrive, so neither is acknowledged until a delayed ACK (40 ms) or the peer's next
        // segment, and a 1 ms RTO resent both messages spuriously at ~1.0 and ~1.4 ms.
        let opts = TcpOptions {
            config: transport::tcp::Config::default(),
            ..TcpOptions::default()
        };
        let (sa, sb) = self.tcp_connect(a, b, &opts)?;
        for (h, sock, msg) in [(a, sa, from_a), (b, sb, from_b)] {
            let mut sent = 0;
            while sent < msg.len() {
                let n = self.tcp_write(h, sock, &msg[sent..]);
                if n == 0 && !self.tcp_wait(sock, true, &self.step_budget())? {
                    return Err(WorldError::Exchange);
                }
                sent += n;
            }
        }
        let mut read = [vec![0; from_b.len()], vec![0; from_a.len()]];
        for (i, (h, sock)) in [(a, sa), (b, sb)].into_iter().enumerate() {
            let buf = &mut read[i];
            let mut got = 0;
            while got < buf.len() {
                if !self.tcp_wait(sock, false, &self.step_budget())? {
                    return Err(WorldError::Exchange);
                }
                got += self.tcp_read(h, sock, &mut buf[got..]);
            }
        }
        let [ra, rb] = read;
        Ok((ra, rb))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conn_info_round_trips_and_rejects_wrong_lengths() {
        let c = ConnInfo {
            qpn: 0x00ab_cdef,
            psn: 0x0012_3456,
            gid: [7; 16],
            rkey: 0xdead_beef,
            addr: 0x0102_0304_0506_0708,
        };
        let b = c.emit();
        assert_eq!(&b[0..6], &[0xab, 0xcd, 0xef, 0x12, 0x34, 0x56]);
        assert_eq!(&b[26..], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(ConnInfo::parse(&b), Some(c));
        assert_eq!(ConnInfo::parse(&b[..33]), None);
        assert_eq!(ConnInfo::parse(&[0; 35]), None);
    }
}
