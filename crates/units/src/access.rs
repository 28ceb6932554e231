//! The remote access a request asks of the responder's memory.
//!
//! One vocabulary for the two crates that meet at the responder: `transport` decides which
//! access an incoming request needs (it knows the opcodes, not verbs), and `verbs` checks it
//! against the QP's `qp_access_flags` and the memory region's access flags (it knows the MRs,
//! not the packets). Both name the same three rights `ibv_reg_mr(3)` and `ibv_modify_qp(3)`
//! grant: `IBV_ACCESS_REMOTE_WRITE`, `IBV_ACCESS_REMOTE_READ` and `IBV_ACCESS_REMOTE_ATOMIC`.

/// A remote operation as the responder sees it: the access right it needs.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum RemoteOp {
    /// RDMA WRITE and WRITE with immediate (needs REMOTE_WRITE).
    Write,
    /// RDMA READ (needs REMOTE_READ).
    Read,
    /// Compare-and-swap or fetch-and-add (needs REMOTE_ATOMIC).
    Atomic,
}
