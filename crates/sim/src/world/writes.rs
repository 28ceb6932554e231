//! A stream of RDMA WRITEs between two connected endpoints, as the experiments post them.

use super::{Endpoint, World, WorldError};
use verbs::{AccessFlags, SendWr, Sge};

impl World {
    /// Registers a `buf`-byte source buffer on `a`'s host and a `buf`-byte target on `b`'s,
    /// and posts one WRITE per entry of `sizes` (wr_id = its index, each from the start of
    /// the source to the start of the target), signaled if `signaled`. Every size must be at
    /// most `buf`.
    pub fn post_writes(
        &mut self,
        a: &Endpoint,
        b: &Endpoint,
        buf: u64,
        sizes: &[u64],
        signaled: bool,
    ) -> Result<(), WorldError> {
        fn setup(e: impl std::fmt::Display) -> WorldError {
            WorldError::Setup(e.to_string())
        }
        debug_assert!(
            sizes.iter().all(|&s| s <= buf),
            "a WRITE larger than its buffer"
        );
        let va = self.verbs(a.host).memory_mut().alloc(buf).map_err(setup)?;
        let mr = self
            .verbs(a.host)
            .reg_mr(a.pd, va, buf, AccessFlags::LOCAL_WRITE)
            .map_err(setup)?;
        let rva = self.verbs(b.host).memory_mut().alloc(buf).map_err(setup)?;
        let rmr = self
            .verbs(b.host)
            .reg_mr(
                b.pd,
                rva,
                buf,
                AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
            )
            .map_err(setup)?;
        let wrs: Vec<SendWr> = sizes
            .iter()
            .enumerate()
            .map(|(i, &len)| {
                let sge = vec![Sge {
                    addr: va,
                    length: len as u32,
                    lkey: mr.lkey,
                }];
                let wr = SendWr::write(i as u64, sge, rva, rmr.rkey);
                if signaled { wr.signaled() } else { wr }
            })
            .collect();
        self.post_send(a.host, a.qpn, &wrs).map(drop).map_err(setup)
    }
}
