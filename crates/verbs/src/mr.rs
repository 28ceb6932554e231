//! Memory regions: registration rules, keys, and the key checks the transport runs
//! (verbs-spec §4; `ibv_reg_mr.3`; RXE-mr `lookup_mem`/`lookup_mr`, RXE-resp `check_rkey`).
//!
//! # Registration
//!
//! `reg_mr(pd, va, len, access)` fails with
//! - EINVAL if REMOTE_WRITE or REMOTE_ATOMIC is set without LOCAL_WRITE ("If
//!   IBV_ACCESS_REMOTE_WRITE or IBV_ACCESS_REMOTE_ATOMIC is set, then IBV_ACCESS_LOCAL_WRITE must
//!   be set too", `ibv_reg_mr.3:82-90`; the kernel's `ib_check_mr_access`), or if `access` has
//!   bits verbs.h does not define;
//! - EINVAL if `len` is 0 (rdmalab's choice: no source read says what a zero-length
//!   registration does, and a zero-length MR is never needed because zero-length SGEs and
//!   zero-length READ/WRITE skip the key checks), or above the device's `max_mr_size`;
//! - EFAULT if `[va, va+len)` is not inside one allocated buffer (the kernel fails to pin
//!   pages that are not mapped).
//!
//! # Keys
//!
//! Keys use rxe's layout: `index << 8 | variant` (RXE-mr `lookup_mem`). The variant changes
//! every time a slot is reused, so a key kept after `dereg_mr` never matches the next MR in that
//! slot. Every MR gets `rkey == lkey`, whatever its access flags: mlx5_ib reports its one
//! mkey as both keys (`drivers/infiniband/hw/mlx5/mr.c`, `set_mr_fields`: `ibmr.lkey =
//! ibmr.rkey = mmkey.key`), and so does current rxe (`rxe_mr.c`, `rxe_mr_init`: "for user MRs
//! these will always be the same"). Older rxe returned rkey 0 for an MR without a REMOTE flag
//! (`rkey = (access & RXE_ACCESS_REMOTE) ? lkey : 0`; verbs-spec §4), which rdmalab
//! does not model. An rkey on an MR without remote access is refused by the access check.
//!
//! # Checks
//!
//! [`MrTable::check_local`] and [`MrTable::check_remote`] run in the spec's order: the key must
//! name a live MR, the MR's PD must be the QP's PD, the MR's access must cover what the
//! operation needs (local read is always granted), and `[va, va+len)` must lie inside the MR.
//! A zero-length access checks nothing: "A zero-byte read or write op is not required to set an
//! addr or rkey. See C9-88" (RXE-resp `check_rkey`), and zero-length SGEs are skipped by both
//! providers (mlx5 `set_data_ptr_seg` is only called for non-zero lengths; rxe `copy_data`
//! returns early).

use core::fmt;

use crate::flags::AccessFlags;
use crate::memory::{Memory, pages_spanned};
use crate::profile::{DeviceAttr, NicProfile};
use crate::types::{MrHandle, PdHandle};
use crate::wc::WcStatus;

/// A registered memory region.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Mr {
    /// The PD it belongs to.
    pub pd: PdHandle,
    /// First registered address.
    pub va: u64,
    /// Registered length.
    pub len: u64,
    /// Access flags given at registration.
    pub access: AccessFlags,
    /// The local key.
    pub lkey: u32,
    /// The remote key (equal to `lkey`, see the module docs).
    pub rkey: u32,
    /// 4 KiB pages pinned by the registration.
    pub pages: u64,
}

impl Mr {
    /// The handle naming this MR.
    pub fn handle(&self) -> MrHandle {
        MrHandle(self.lkey)
    }

    fn covers(&self, va: u64, len: u64) -> bool {
        va >= self.va
            && va
                .checked_add(len)
                .is_some_and(|end| end <= self.va + self.len)
    }
}

/// Why `reg_mr` failed.
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
pub enum MrError {
    /// REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE.
    #[error(
        "reg_mr: access {access} asks for remote write or atomic access without LOCAL_WRITE; \
         \"If IBV_ACCESS_REMOTE_WRITE or IBV_ACCESS_REMOTE_ATOMIC is set, then IBV_ACCESS_LOCAL_WRITE must be set too\" (ibv_reg_mr.3)"
    )]
    LocalWriteRequired {
        /// The access flags given.
        access: AccessFlags,
    },
    /// Access bits verbs.h does not define.
    #[error("reg_mr: access {access} has bits verbs.h does not define")]
    UnknownAccessBits {
        /// The access flags given.
        access: AccessFlags,
    },
    /// Zero length.
    #[error("reg_mr: length 0 (rdmalab refuses zero-length registrations)")]
    ZeroLength,
    /// Above `max_mr_size`.
    #[error("reg_mr: length {len} is above the device's max_mr_size {max}")]
    TooLarge {
        /// Length given.
        len: u64,
        /// Device limit.
        max: u64,
    },
    /// The range is not allocated memory.
    #[error("reg_mr: {va:#x}..{end:#x} is not inside one allocated buffer, so its pages cannot be pinned", end = va.wrapping_add(*len))]
    Unmapped {
        /// Start given.
        va: u64,
        /// Length given.
        len: u64,
    },
}

/// Why a local (lkey) access failed.
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
pub enum LocalAccessError {
    /// No live MR has this lkey.
    #[error("lkey {lkey:#x} does not name a registered MR")]
    InvalidKey {
        /// The key.
        lkey: u32,
    },
    /// The MR belongs to another PD.
    #[error("lkey {lkey:#x} belongs to {mr_pd}, the QP is in {qp_pd}")]
    PdMismatch {
        /// The key.
        lkey: u32,
        /// The MR's PD.
        mr_pd: PdHandle,
        /// The QP's PD.
        qp_pd: PdHandle,
    },
    /// The MR lacks the access the operation needs.
    #[error("lkey {lkey:#x}: the MR grants {granted} but the operation needs {needed}")]
    AccessDenied {
        /// The key.
        lkey: u32,
        /// What the operation needs.
        needed: AccessFlags,
        /// What the MR grants.
        granted: AccessFlags,
    },
    /// `[va, va+len)` is not inside the MR.
    #[error("lkey {lkey:#x}: {va:#x}+{len} is outside the MR {mr_va:#x}+{mr_len}")]
    OutOfRange {
        /// The key.
        lkey: u32,
        /// Access start.
        va: u64,
        /// Access length.
        len: u64,
        /// MR start.
        mr_va: u64,
        /// MR length.
        mr_len: u64,
    },
}

impl LocalAccessError {
    /// The completion status a requester reports for this failure on a send SGE or a READ /
    /// atomic target (see [`NicProfile::local_key_error_is_qp_op_err`]).
    pub fn requester_status(&self, profile: NicProfile) -> WcStatus {
        match self {
            LocalAccessError::OutOfRange { .. } => WcStatus::LocProtErr,
            _ if profile.local_key_error_is_qp_op_err() => WcStatus::LocQpOpErr,
            _ => WcStatus::LocProtErr,
        }
    }

    /// The completion status of a receive WQE whose SGE failed: rxe reports a malformed WQE
    /// as LOC_QP_OP_ERR (RXE-resp RESPST_ERR_MALFORMED_WQE, verbs-spec C28); mlx5 and IBTA a
    /// local protection error (MOJO).
    pub fn responder_status(&self, profile: NicProfile) -> WcStatus {
        match profile {
            NicProfile::Rxe => WcStatus::LocQpOpErr,
            NicProfile::Mlx5 | NicProfile::Ibta => WcStatus::LocProtErr,
        }
    }
}

/// Why a remote (rkey) access failed. Every variant is a NAK "Remote Access Error"
/// (REM_ACCESS_ERR at the requester, verbs-spec §3 row 10).
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
pub enum RemoteAccessError {
    /// No live MR has this rkey.
    #[error("rkey {rkey:#x} does not name a registered MR")]
    InvalidKey {
        /// The key.
        rkey: u32,
    },
    /// The MR belongs to another PD than the responder QP.
    #[error("rkey {rkey:#x} belongs to {mr_pd}, the responder QP is in {qp_pd}")]
    PdMismatch {
        /// The key.
        rkey: u32,
        /// The MR's PD.
        mr_pd: PdHandle,
        /// The QP's PD.
        qp_pd: PdHandle,
    },
    /// The MR lacks the remote access needed.
    #[error("rkey {rkey:#x}: the MR grants {granted} but the operation needs {needed}")]
    AccessDenied {
        /// The key.
        rkey: u32,
        /// What the operation needs.
        needed: AccessFlags,
        /// What the MR grants.
        granted: AccessFlags,
    },
    /// `[va, va+len)` is not inside the MR (`mr_check_range`).
    #[error("rkey {rkey:#x}: {va:#x}+{len} is outside the MR {mr_va:#x}+{mr_len}")]
    OutOfRange {
        /// The key.
        rkey: u32,
        /// Access start.
        va: u64,
        /// Access length.
        len: u64,
        /// MR start.
        mr_va: u64,
        /// MR length.
        mr_len: u64,
    },
}

impl RemoteAccessError {
    /// REM_ACCESS_ERR: what the requester's completion says.
    pub const fn requester_status(&self) -> WcStatus {
        WcStatus::RemAccessErr
    }
}

#[derive(Clone, Debug, Default)]
struct Slot {
    variant: u8,
    mr: Option<Mr>,
}

/// The MRs of one context, indexed by key.
#[derive(Clone, Debug)]
pub struct MrTable {
    slots: Vec<Slot>,
    /// Added to a slot's index to make the key's index part (modulo 2^24), so that two
    /// contexts hand out different keys (see [`MrTable::with_key_base`]).
    base: u32,
}

impl Default for MrTable {
    fn default() -> Self {
        MrTable::with_key_base(0)
    }
}

/// The key's index part is 24 bits (the low 8 are the variant).
const KEY_INDEX_MASK: u32 = 0x00ff_ffff;

impl MrTable {
    /// An empty table whose keys' index part starts at `base + 1`. Each host's context gets
    /// its own base, so an rkey of one host's MR names nothing on another host: a key sent
    /// to the wrong peer fails the peer's key check, as keys from two real NICs do (an
    /// assumption about the layout: mlx5 and rxe both draw keys from a per-device index).
    /// Slot 0 is never used, so with base 0 no key below 0x100 is ever valid.
    pub fn with_key_base(base: u32) -> MrTable {
        MrTable {
            slots: vec![Slot::default()],
            base: base & KEY_INDEX_MASK,
        }
    }

    /// The slot a key names, if its index part is one of this table's.
    fn slot_of(&self, key: u32) -> usize {
        ((key >> 8).wrapping_sub(self.base) & KEY_INDEX_MASK) as usize
    }
}

/// Checks the arguments of a registration (see the module docs for the order).
pub fn check_registration(
    access: AccessFlags,
    va: u64,
    len: u64,
    device: &DeviceAttr,
    memory: &Memory,
) -> Result<(), MrError> {
    if access.unknown_bits() != 0 {
        return Err(MrError::UnknownAccessBits { access });
    }
    if access.intersects(AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_ATOMIC)
        && !access.contains(AccessFlags::LOCAL_WRITE)
    {
        return Err(MrError::LocalWriteRequired { access });
    }
    if len == 0 {
        return Err(MrError::ZeroLength);
    }
    if len > device.max_mr_size {
        return Err(MrError::TooLarge {
            len,
            max: device.max_mr_size,
        });
    }
    if !memory.is_mapped(va, len) {
        return Err(MrError::Unmapped { va, len });
    }
    Ok(())
}

impl MrTable {
    /// Registers an MR whose arguments passed [`check_registration`].
    pub(crate) fn insert(&mut self, pd: PdHandle, va: u64, len: u64, access: AccessFlags) -> Mr {
        let index = match self.slots.iter().skip(1).position(|s| s.mr.is_none()) {
            Some(i) => i + 1,
            None => {
                self.slots.push(Slot::default());
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[index];
        slot.variant = slot.variant.wrapping_add(1);
        let key = (((index as u32).wrapping_add(self.base) & KEY_INDEX_MASK) << 8)
            | u32::from(slot.variant);
        let mr = Mr {
            pd,
            va,
            len,
            access,
            lkey: key,
            rkey: key,
            pages: pages_spanned(va, len),
        };
        slot.mr = Some(mr);
        mr
    }

    /// Removes the MR named by `key`.
    pub(crate) fn remove(&mut self, key: u32) -> Option<Mr> {
        let index = self.slot_of(key);
        let slot = self.slots.get_mut(index)?;
        if slot.mr.is_some_and(|mr| mr.lkey == key) {
            slot.mr.take()
        } else {
            None
        }
    }

    /// The live MR whose key is `key`.
    pub fn get(&self, key: u32) -> Option<&Mr> {
        let slot = self.slots.get(self.slot_of(key))?;
        slot.mr.as_ref().filter(|mr| mr.lkey == key)
    }

    /// Live MRs in key order.
    pub fn iter(&self) -> impl Iterator<Item = &Mr> {
        self.slots.iter().filter_map(|s| s.mr.as_ref())
    }

    /// Checks a local access through `lkey` by a QP in `pd` (see the module docs).
    pub fn check_local(
        &self,
        lkey: u32,
        pd: PdHandle,
        va: u64,
        len: u64,
        needed: AccessFlags,
    ) -> Result<(), LocalAccessError> {
        if len == 0 {
            return Ok(());
        }
        let mr = self
            .get(lkey)
            .ok_or(LocalAccessError::InvalidKey { lkey })?;
        if mr.pd != pd {
            return Err(LocalAccessError::PdMismatch {
                lkey,
                mr_pd: mr.pd,
                qp_pd: pd,
            });
        }
        if !mr.access.contains(needed) {
            return Err(LocalAccessError::AccessDenied {
                lkey,
                needed,
                granted: mr.access,
            });
        }
        if !mr.covers(va, len) {
            return Err(LocalAccessError::OutOfRange {
                lkey,
                va,
                len,
                mr_va: mr.va,
                mr_len: mr.len,
            });
        }
        Ok(())
    }

    /// Checks a remote access through `rkey` at a responder QP in `pd` (see the module docs).
    pub fn check_remote(
        &self,
        rkey: u32,
        pd: PdHandle,
        va: u64,
        len: u64,
        needed: AccessFlags,
    ) -> Result<(), RemoteAccessError> {
        if len == 0 {
            return Ok(());
        }
        let mr = self
            .get(rkey)
            .ok_or(RemoteAccessError::InvalidKey { rkey })?;
        if mr.pd != pd {
            return Err(RemoteAccessError::PdMismatch {
                rkey,
                mr_pd: mr.pd,
                qp_pd: pd,
            });
        }
        if !mr.access.contains(needed) {
            return Err(RemoteAccessError::AccessDenied {
                rkey,
                needed,
                granted: mr.access,
            });
        }
        if !mr.covers(va, len) {
            return Err(RemoteAccessError::OutOfRange {
                rkey,
                va,
                len,
                mr_va: mr.va,
                mr_len: mr.len,
            });
        }
        Ok(())
    }
}

impl fmt::Display for Mr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "MR {:#x}+{} in {} lkey {:#x} rkey {:#x} access {}",
            self.va, self.len, self.pd, self.lkey, self.rkey, self.access
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PD: PdHandle = PdHandle(0);
    const OTHER_PD: PdHandle = PdHandle(1);

    fn setup() -> (Memory, MrTable, u64) {
        let mut mem = Memory::new();
        let va = mem.alloc(8192).unwrap();
        (mem, MrTable::default(), va)
    }

    #[test]
    fn local_write_rule() {
        let (mem, _, va) = setup();
        let d = NicProfile::Mlx5.device_attr();
        for bad in [
            AccessFlags::REMOTE_WRITE,
            AccessFlags::REMOTE_ATOMIC,
            AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ,
        ] {
            assert_eq!(
                check_registration(bad, va, 100, &d, &mem),
                Err(MrError::LocalWriteRequired { access: bad })
            );
        }
        for good in [
            AccessFlags::empty(),
            AccessFlags::REMOTE_READ,
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_ATOMIC,
        ] {
            assert_eq!(
                check_registration(good, va, 100, &d, &mem),
                Ok(()),
                "{good}"
            );
        }
    }

    #[test]
    fn registration_range_and_length() {
        let (mem, _, va) = setup();
        let d = NicProfile::Rxe.device_attr();
        let a = AccessFlags::LOCAL_WRITE;
        assert_eq!(
            check_registration(a, va, 0, &d, &mem),
            Err(MrError::ZeroLength)
        );
        assert_eq!(
            check_registration(a, va, 8193, &d, &mem),
            Err(MrError::Unmapped { va, len: 8193 })
        );
        assert_eq!(
            check_registration(a, va - 1, 2, &d, &mem),
            Err(MrError::Unmapped { va: va - 1, len: 2 })
        );
        assert!(matches!(
            check_registration(AccessFlags(1 << 30), va, 1, &d, &mem),
            Err(MrError::UnknownAccessBits { .. })
        ));
    }

    #[test]
    fn key_bases_give_each_table_its_own_keys() {
        let (_, _, va) = setup();
        let mut a = MrTable::default();
        let mut b = MrTable::with_key_base(0x1000);
        let ka = a.insert(PD, va, 100, AccessFlags::LOCAL_WRITE).rkey;
        let kb = b.insert(PD, va, 100, AccessFlags::LOCAL_WRITE).rkey;
        assert_eq!((ka, kb), (0x101, 0x10_0101));
        assert!(b.get(ka).is_none(), "a's key names nothing in b");
        assert!(a.get(kb).is_none(), "b's key names nothing in a");
        assert!(b.get(kb).is_some());
        assert!(b.remove(kb).is_some());
        // The index part wraps at 24 bits instead of overflowing the key.
        let mut top = MrTable::with_key_base(0x00ff_ffff);
        let k = top.insert(PD, va, 100, AccessFlags::LOCAL_WRITE).rkey;
        assert_eq!(k, 0x001);
        assert!(top.get(k).is_some());
    }

    #[test]
    fn keys_and_stale_keys() {
        let (_, mut t, va) = setup();
        let a = t.insert(PD, va, 100, AccessFlags::LOCAL_WRITE);
        assert_eq!(a.lkey, a.rkey);
        assert_eq!(a.lkey >> 8, 1);
        assert_eq!(a.pages, 1);
        assert!(t.remove(a.lkey).is_some());
        let b = t.insert(PD, va, 100, AccessFlags::LOCAL_WRITE);
        assert_eq!(b.lkey >> 8, 1, "slot reused");
        assert_ne!(a.lkey, b.lkey, "with a new variant");
        assert!(t.get(a.lkey).is_none());
        assert_eq!(
            t.check_local(a.lkey, PD, va, 1, AccessFlags::empty()),
            Err(LocalAccessError::InvalidKey { lkey: a.lkey })
        );
    }

    #[test]
    fn local_checks_in_order() {
        let (_, mut t, va) = setup();
        let mr = t.insert(PD, va + 100, 1000, AccessFlags::empty());
        let k = mr.lkey;
        assert_eq!(
            t.check_local(k, PD, va + 100, 1000, AccessFlags::empty()),
            Ok(())
        );
        assert!(matches!(
            t.check_local(k, OTHER_PD, va + 100, 1, AccessFlags::LOCAL_WRITE),
            Err(LocalAccessError::PdMismatch { .. })
        ));
        assert!(matches!(
            t.check_local(k, PD, va + 99, 1, AccessFlags::LOCAL_WRITE),
            Err(LocalAccessError::AccessDenied { .. })
        ));
        assert!(matches!(
            t.check_local(k, PD, va + 99, 1, AccessFlags::empty()),
            Err(LocalAccessError::OutOfRange { .. })
        ));
        assert!(matches!(
            t.check_local(k, PD, va + 1000, 101, AccessFlags::empty()),
            Err(LocalAccessError::OutOfRange { .. })
        ));
        assert_eq!(
            t.check_local(0xdead, PD, 0, 0, AccessFlags::LOCAL_WRITE),
            Ok(()),
            "zero length checks nothing"
        );
    }

    #[test]
    fn remote_checks_in_spec_order() {
        let (_, mut t, va) = setup();
        let mr = t.insert(
            PD,
            va,
            4096,
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ,
        );
        let k = mr.rkey;
        // key first
        assert_eq!(
            t.check_remote(k + 1, OTHER_PD, va, 1, AccessFlags::REMOTE_WRITE),
            Err(RemoteAccessError::InvalidKey { rkey: k + 1 })
        );
        // then PD, even if access and range are also wrong
        assert!(matches!(
            t.check_remote(k, OTHER_PD, va + 5000, 1, AccessFlags::REMOTE_WRITE),
            Err(RemoteAccessError::PdMismatch { .. })
        ));
        // then access, even if the range is also wrong
        assert!(matches!(
            t.check_remote(k, PD, va + 5000, 1, AccessFlags::REMOTE_WRITE),
            Err(RemoteAccessError::AccessDenied { .. })
        ));
        // then range (C27: a 4096-byte READ starting one byte before the end)
        assert!(matches!(
            t.check_remote(k, PD, va + 4095, 4096, AccessFlags::REMOTE_READ),
            Err(RemoteAccessError::OutOfRange { .. })
        ));
        assert_eq!(
            t.check_remote(k, PD, va, 4096, AccessFlags::REMOTE_READ),
            Ok(())
        );
        // zero-length READ/WRITE skips the rkey check (C9-88)
        assert_eq!(
            t.check_remote(0, OTHER_PD, 0, 0, AccessFlags::REMOTE_WRITE),
            Ok(())
        );
        assert_eq!(
            RemoteAccessError::InvalidKey { rkey: 0 }.requester_status(),
            WcStatus::RemAccessErr
        );
    }

    #[test]
    fn local_error_status_per_profile() {
        let bad_key = LocalAccessError::InvalidKey { lkey: 1 };
        let range = LocalAccessError::OutOfRange {
            lkey: 1,
            va: 0,
            len: 1,
            mr_va: 0,
            mr_len: 0,
        };
        assert_eq!(
            bad_key.requester_status(NicProfile::Rxe),
            WcStatus::LocQpOpErr
        );
        assert_eq!(
            range.requester_status(NicProfile::Rxe),
            WcStatus::LocProtErr
        );
        assert_eq!(
            bad_key.requester_status(NicProfile::Mlx5),
            WcStatus::LocProtErr
        );
        assert_eq!(
            bad_key.responder_status(NicProfile::Rxe),
            WcStatus::LocQpOpErr
        );
    }
}
