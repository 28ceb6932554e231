//! The timed stages of work on a host, as one closed set.
//!
//! Every [`TraceRecord::Stage`](crate::TraceRecord::Stage) names one [`Stage`], and the
//! comparison report derives its headline rows from them — whether a path crossed the kernel,
//! how much the remote CPU took part, when the data was placed at the remote. With the stages
//! a closed enum, the report matches variants and each stage's [`Domain`] is stated once here:
//! a renamed or a new stage is a compile error or a line in this table, never a string match
//! that silently stops matching. The names are the ones the report, the trace and the web lab
//! have always shown, so the JSON is unchanged.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// Where a stage's work happens: the layers the lessons draw.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum Domain {
    /// A CPU in user space: verbs calls, which run in the application's address space.
    User,
    /// A CPU in the kernel: system calls, the TCP/IP stack, the driver, interrupts, copies.
    Kernel,
    /// The NIC itself: its pipelines and firmware.
    Nic,
    /// The PCIe link: DMA and MMIO between host memory and the NIC.
    Pcie,
}

impl Domain {
    /// True for the two CPU domains.
    pub const fn is_cpu(self) -> bool {
        matches!(self, Domain::User | Domain::Kernel)
    }
}

macro_rules! stages {
    ($( $(#[$m:meta])* $var:ident = $name:literal, $domain:ident; )+) => {
        /// A timed stage of work on a host (see the module docs).
        #[derive(Clone, Copy, Debug, Eq, PartialEq)]
        pub enum Stage {
            $( $(#[$m])* $var, )+
        }

        impl Stage {
            /// Every stage, in table order.
            pub const ALL: &'static [Stage] = &[$(Stage::$var),+];

            /// The name the report, the trace and the lab show.
            pub const fn name(self) -> &'static str {
                match self { $(Stage::$var => $name,)+ }
            }

            /// Where its work happens.
            pub const fn domain(self) -> Domain {
                match self { $(Stage::$var => Domain::$domain,)+ }
            }

            /// The stage of this name, if any.
            pub fn from_name(name: &str) -> Option<Stage> {
                match name { $($name => Some(Stage::$var),)+ _ => None }
            }
        }
    };
}

stages! {
    // User space: verbs calls.
    /// `ibv_post_send` writing its WQE into the send queue.
    PostSend = "post_send (write WQE)", User;
    /// `ibv_post_recv` writing its WQE into the receive queue.
    PostRecv = "post_recv (write WQE)", User;
    /// `ibv_poll_cq` reading a completion.
    PollCq = "poll_cq", User;
    /// `ibv_req_notify_cq` arming the CQ.
    ReqNotifyCq = "req_notify_cq", User;
    /// Filling an io_uring submission entry.
    IoUringSqePrep = "io_uring SQE prep", User;
    /// fio preparing and queueing one I/O.
    FioQueue = "fio: queue io", User;
    /// fio reaping one completion.
    FioReap = "fio: reap io", User;
    /// The host's NVMe driver (user space, SPDK-like) building a command.
    NvmeBuild = "nvme: build command", User;
    /// The host's NVMe driver completing a command from its response.
    NvmeComplete = "nvme: complete command", User;
    /// The NVMe-oF target parsing a command capsule and submitting it.
    NvmetSubmit = "nvmet: parse and submit", User;
    /// The NVMe-oF target completing a command.
    NvmetComplete = "nvmet: complete command", User;
    /// A collective summing received data into its result (on a CPU; a GPU's reduction is
    /// not a host stage).
    ReduceSum = "reduce (sum)", User;

    // The kernel: system calls and what runs inside them.
    /// Entering `write()`.
    WriteEntry = "write() syscall entry", Kernel;
    /// Leaving `write()`.
    WriteExit = "write() syscall exit", Kernel;
    /// Entering `read()`.
    ReadEntry = "read() syscall entry", Kernel;
    /// Leaving `read()`.
    ReadExit = "read() syscall exit", Kernel;
    /// Entering `io_uring_enter()`.
    IoUringEnterEntry = "io_uring_enter syscall entry", Kernel;
    /// Leaving `io_uring_enter()`.
    IoUringEnterExit = "io_uring_enter syscall exit", Kernel;
    /// Copying the application's bytes into socket buffers.
    CopyUserToKernel = "copy user→kernel", Kernel;
    /// Copying received bytes out to the application.
    CopyKernelToUser = "copy kernel→user", Kernel;
    /// The TCP/IP transmit path for one segment.
    TcpTxSegment = "TCP/IP TX (segment)", Kernel;
    /// The TCP/IP transmit path for one TSO super-segment.
    TcpTxTso = "TCP/IP TX (TSO super-segment)", Kernel;
    /// Sending a pure ACK.
    TcpTxAck = "TCP TX (ACK)", Kernel;
    /// The TCP/IP receive path, in softirq context.
    TcpRx = "TCP/IP RX (softirq)", Kernel;
    /// The driver queueing a frame and ringing the NIC's doorbell.
    DriverTx = "driver TX + doorbell", Kernel;
    /// The driver taking received frames off the ring.
    DriverRx = "driver RX", Kernel;
    /// The NIC's receive interrupt.
    HardInterrupt = "hard interrupt", Kernel;
    /// NAPI polling the ring in softirq.
    Softirq = "softirq (NAPI poll)", Kernel;
    /// A completion event's interrupt (RDMA completion channel).
    CompletionInterrupt = "completion interrupt", Kernel;
    /// Waking the sleeping application thread.
    WakeUp = "wake-up (context switch)", Kernel;
    /// A socket spinning in `SO_BUSY_POLL`.
    BusyPoll = "busy-poll spin", Kernel;
    /// `MSG_ZEROCOPY`'s completion notification.
    ZerocopyCompletion = "MSG_ZEROCOPY completion", Kernel;
    /// Opening, binding and accepting a listening socket.
    SocketAccept = "socket+listen+accept", Kernel;
    /// Opening and connecting a socket.
    SocketConnect = "socket+connect", Kernel;
    /// The `reg_mr` ioctl into the RDMA driver.
    IoctlRegMr = "ioctl reg_mr", Kernel;
    /// The `dereg_mr` ioctl.
    IoctlDeregMr = "ioctl dereg_mr", Kernel;
    /// The `create_cq` ioctl.
    IoctlCreateCq = "ioctl create_cq", Kernel;
    /// The `destroy_cq` ioctl.
    IoctlDestroyCq = "ioctl destroy_cq", Kernel;
    /// The `create_qp` ioctl.
    IoctlCreateQp = "ioctl create_qp", Kernel;
    /// The `modify_qp` ioctl.
    IoctlModifyQp = "ioctl modify_qp", Kernel;
    /// The `destroy_qp` ioctl.
    IoctlDestroyQp = "ioctl destroy_qp", Kernel;
    /// The `dealloc_pd` ioctl.
    IoctlDeallocPd = "ioctl dealloc_pd", Kernel;
    /// Pinning a registration's pages.
    PinPages = "pin pages", Kernel;

    // The NIC.
    /// The NIC's transmit pipeline for one packet.
    NicTx = "NIC TX pipeline", Nic;
    /// The NIC's receive pipeline for one packet.
    NicRx = "NIC RX pipeline", Nic;
    /// A firmware command (QP, CQ or MR setup).
    FirmwareCommand = "firmware command", Nic;
    /// Firmware writing a registration's translation entries.
    FirmwareTranslation = "firmware: write translation entries", Nic;

    // PCIe.
    /// The doorbell's MMIO write.
    MmioDoorbell = "MMIO doorbell", Pcie;
    /// A BlueFlame MMIO write carrying the WQE with the doorbell.
    MmioBlueFlame = "MMIO doorbell + WQE (BlueFlame)", Pcie;
    /// The NIC fetching a WQE.
    DmaReadWqe = "DMA read WQE", Pcie;
    /// The NIC gathering the payload to send.
    DmaReadPayload = "DMA read payload", Pcie;
    /// The NIC reading what a READ request asks for.
    DmaReadResponse = "DMA read (READ response)", Pcie;
    /// The NIC reading a TCP segment from the kernel's buffer.
    DmaReadSegment = "DMA read segment (kernel buffer)", Pcie;
    /// The NIC reading a `MSG_ZEROCOPY` segment straight from the application's pages.
    DmaReadZerocopy = "DMA read segment (user pages, MSG_ZEROCOPY)", Pcie;
    /// The NIC placing a received payload in memory.
    DmaWritePayload = "DMA write payload", Pcie;
    /// The NIC placing a READ response's data.
    DmaWriteReadData = "DMA write READ data", Pcie;
    /// The NIC writing a send completion.
    DmaWriteCqe = "DMA write CQE", Pcie;
    /// The NIC writing a receive completion.
    DmaWriteRecvCqe = "DMA write receive CQE", Pcie;
    /// The NIC writing a received TCP segment into the kernel's ring.
    DmaWriteSegment = "DMA write segment (kernel ring)", Pcie;
}

impl Stage {
    /// The edge of a system call (its entry or its exit): kernel work the lessons draw at the
    /// application's box, where the call is made.
    pub const fn is_syscall_edge(self) -> bool {
        matches!(
            self,
            Stage::WriteEntry
                | Stage::WriteExit
                | Stage::ReadEntry
                | Stage::ReadExit
                | Stage::IoUringEnterEntry
                | Stage::IoUringEnterExit
        )
    }

    /// The kernel's TCP/IP stack itself (transmit, ACKs, receive): the transport runs in
    /// kernel software.
    pub const fn is_tcp_stack(self) -> bool {
        matches!(
            self,
            Stage::TcpTxSegment | Stage::TcpTxTso | Stage::TcpTxAck | Stage::TcpRx
        )
    }

    /// How the remote learns of a completion when it sleeps on a channel: the interrupt and
    /// the wake-up, once per message at most in "light" participation (the report's rule).
    pub const fn is_completion_wakeup(self) -> bool {
        matches!(self, Stage::CompletionInterrupt | Stage::WakeUp)
    }

    /// A control-path ioctl (setup work through the RDMA driver).
    pub const fn is_ioctl(self) -> bool {
        matches!(
            self,
            Stage::IoctlRegMr
                | Stage::IoctlDeregMr
                | Stage::IoctlCreateCq
                | Stage::IoctlDestroyCq
                | Stage::IoctlCreateQp
                | Stage::IoctlModifyQp
                | Stage::IoctlDestroyQp
                | Stage::IoctlDeallocPd
        )
    }
}

/// A stage hashes as its name, so a trace's hash does not depend on where the table lists it.
impl Hash for Stage {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

/// Stages sort by name, as the report's per-stage tables always have.
impl Ord for Stage {
    fn cmp(&self, other: &Self) -> Ordering {
        self.name().cmp(other.name())
    }
}

impl PartialOrd for Stage {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        for &s in Stage::ALL {
            assert_eq!(Stage::from_name(s.name()), Some(s));
        }
        let mut names: Vec<&str> = Stage::ALL.iter().map(|s| s.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Stage::ALL.len(), "two stages share a name");
        assert_eq!(Stage::from_name("no such stage"), None);
    }

    #[test]
    fn syscall_edges_are_kernel_work_and_verbs_calls_are_not() {
        for &s in Stage::ALL {
            if s.is_syscall_edge() || s.is_ioctl() {
                assert_eq!(s.domain(), Domain::Kernel, "{s}");
            }
        }
        assert_eq!(Stage::PostSend.domain(), Domain::User);
        assert_eq!(Stage::PollCq.domain(), Domain::User);
        // fio and a user-space (SPDK-like) NVMe driver and target: the usr side of a report.
        for s in [
            Stage::FioQueue,
            Stage::NvmeBuild,
            Stage::NvmetSubmit,
            Stage::NvmetComplete,
        ] {
            assert_eq!(s.domain(), Domain::User, "{s}");
        }
        assert!(Stage::CopyUserToKernel.domain().is_cpu());
        assert!(!Stage::DmaWritePayload.domain().is_cpu());
    }

    #[test]
    fn stages_order_by_name() {
        assert!(Stage::DmaReadWqe < Stage::PollCq, "\"DMA…\" < \"poll_cq\"");
        assert!(Stage::MmioDoorbell < Stage::NicTx);
    }
}
