//! The `errno` values a verb returns, with their Linux numbers and names.
//!
//! libibverbs returns the errno value itself from `ibv_modify_qp`, `ibv_post_send` and
//! `ibv_post_recv` (not -1; `ibv_modify_qp.3`, `ibv_post_send.3`), and sets `errno` for verbs
//! that return a pointer (`ibv_reg_mr`, `ibv_create_qp`). The numbers are those of
//! Linux's `include/uapi/asm-generic/errno-base.h` and `errno.h`.

use core::fmt;

/// A Linux errno value as a verb returns it.
///
/// Variants are ordered by their number, as the kernel header lists them.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[repr(i32)]
pub enum Errno {
    /// Operation not permitted.
    EPERM = 1,
    /// No such object (an unknown handle).
    ENOENT = 2,
    /// Try again: a non-blocking read found nothing (`ibv_get_cq_event` or
    /// `ibv_get_async_event` on a channel whose fd is `O_NONBLOCK`).
    EAGAIN = 11,
    /// Out of memory; for post verbs, "the work queue is full".
    ENOMEM = 12,
    /// Bad address: a buffer is not mapped in the process.
    EFAULT = 14,
    /// The object is still in use (a PD with MRs or QPs, a CQ with QPs).
    EBUSY = 16,
    /// Invalid argument: the catch-all of the verbs API.
    EINVAL = 22,
    /// No space left (rxe's responder when a message does not fit the receive buffer).
    ENOSPC = 28,
    /// The operation is not supported by this device.
    EOPNOTSUPP = 95,
}

impl Errno {
    /// Every errno the verbs layer returns, by value.
    pub const ALL: [Errno; 9] = [
        Errno::EPERM,
        Errno::ENOENT,
        Errno::EAGAIN,
        Errno::ENOMEM,
        Errno::EFAULT,
        Errno::EBUSY,
        Errno::EINVAL,
        Errno::ENOSPC,
        Errno::EOPNOTSUPP,
    ];

    /// The numeric value, as `ibv_post_send` would return it.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The symbolic name (`"EINVAL"`).
    pub const fn name(self) -> &'static str {
        match self {
            Errno::EPERM => "EPERM",
            Errno::ENOENT => "ENOENT",
            Errno::EAGAIN => "EAGAIN",
            Errno::ENOMEM => "ENOMEM",
            Errno::EFAULT => "EFAULT",
            Errno::EBUSY => "EBUSY",
            Errno::EINVAL => "EINVAL",
            Errno::ENOSPC => "ENOSPC",
            Errno::EOPNOTSUPP => "EOPNOTSUPP",
        }
    }

    /// `strerror`'s text for this value (glibc wording).
    pub const fn description(self) -> &'static str {
        match self {
            Errno::EPERM => "Operation not permitted",
            Errno::ENOENT => "No such file or directory",
            Errno::EAGAIN => "Resource temporarily unavailable",
            Errno::ENOMEM => "Cannot allocate memory",
            Errno::EFAULT => "Bad address",
            Errno::EBUSY => "Device or resource busy",
            Errno::EINVAL => "Invalid argument",
            Errno::ENOSPC => "No space left on device",
            Errno::EOPNOTSUPP => "Operation not supported",
        }
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_numbers() {
        assert_eq!(Errno::EINVAL.code(), 22);
        assert_eq!(Errno::ENOMEM.code(), 12);
        assert_eq!(Errno::EFAULT.code(), 14);
        assert_eq!(Errno::EBUSY.code(), 16);
        assert_eq!(Errno::EAGAIN.code(), 11);
        assert_eq!(Errno::EINVAL.to_string(), "EINVAL");
        assert_eq!(Errno::EBUSY.description(), "Device or resource busy");
    }
}
