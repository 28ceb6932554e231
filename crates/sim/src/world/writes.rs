//! A stream of RDMA WRITEs between two connected endpoints, as the experiments post them: the
//! source and target buffers are registered in the bring-up (timed, each host on its own
//! application thread, their addresses and rkeys crossing in the out-of-band exchange), so a
//! run's clock starts after every registration, as an application's first WRITE waits for
//! its `ibv_reg_mr`.

use super::{Bringup, BufferSpec, ConnectError, Connected, HostIx, RcOptions, World, WorldError};
use verbs::{AccessFlags, SendWr, Sge};

impl Bringup {
    /// Both QPs to RTS with a `len`-byte buffer per host, registered as a WRITE's source (on
    /// `a`) and target (on `b`).
    pub fn rts_with_buffer(opts: RcOptions, len: u64) -> Bringup {
        Bringup {
            buffer: Some(BufferSpec {
                len,
                seed: 0,
                register: true,
                access: AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
            }),
            ..Bringup::rts(opts)
        }
    }
}

impl World {
    /// [`World::connect_rc`] with a `len`-byte registered buffer per host
    /// ([`Bringup::rts_with_buffer`]), for [`World::post_writes`].
    pub fn connect_rc_buffered(
        &mut self,
        a: impl Into<HostIx>,
        b: impl Into<HostIx>,
        o: &RcOptions,
        len: u64,
    ) -> Result<Connected, ConnectError> {
        self.connect_rc_with(a, b, &Bringup::rts_with_buffer(*o, len))
    }

    /// Posts one WRITE per entry of `sizes` on `c`'s first end (wr_id = its index), each
    /// from the start of that host's bring-up buffer to the start of the peer's, signaled if
    /// `signaled`. A size longer than either buffer is refused before anything is posted.
    pub fn post_writes(
        &mut self,
        c: &Connected,
        sizes: &[u64],
        signaled: bool,
    ) -> Result<(), WorldError> {
        let (src, dst) = (c.bufs[0], c.bufs[1]);
        let room = src.len.min(dst.len).min(u32::MAX as u64);
        if let Some(&s) = sizes.iter().find(|&&s| s > room) {
            return Err(WorldError::Setup(format!(
                "a {s}-byte WRITE is longer than its buffers ({} bytes at the source, {} at \
                 the target)",
                src.len, dst.len
            )));
        }
        let wrs: Vec<SendWr> = sizes
            .iter()
            .enumerate()
            .map(|(i, &len)| {
                let sge = vec![Sge {
                    addr: src.va,
                    length: len as u32,
                    lkey: src.lkey,
                }];
                let wr = SendWr::write(i as u64, sge, dst.va, dst.rkey);
                if signaled { wr.signaled() } else { wr }
            })
            .collect();
        let a = c.ends.0;
        self.post_send(a.host, a.qpn, &wrs)
            .map(drop)
            .map_err(|e| WorldError::Setup(e.to_string()))
    }
}
