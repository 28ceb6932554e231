//! How the fabric keeps a packet's payload while the packet is in flight.
//!
//! A [`Payload`] is 184 bytes, mostly optional RoCE extension headers that a packet seldom
//! carries. The packets of an RC stream and their ACKs carry at most a RETH and an AETH; kept
//! as [`Body::Rc`] they take one cache line, and everything else waits whole in a second arena
//! ([`Body::Other`]). The 1024-host fat tree holds about 100 000 packets in flight at its peak,
//! so this is about 12 MB it neither allocates nor touches. [`Body::pack`] and [`Body::take`]
//! are exact inverses.

use crate::packet::{DataHandle, Payload, RoceHeaders};
use engine::{Arena, Handle};

/// A payload as the fabric keeps it while its packet is in flight (see the module doc).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Body {
    /// A RoCE packet whose only extension headers are a RETH and/or an AETH.
    Rc {
        bth: wire::ib::bth::Repr,
        reth: Option<wire::ib::reth::Repr>,
        aeth: Option<wire::ib::aeth::Repr>,
        udp_src_port: u16,
        payload_len: u32,
        data: DataHandle,
    },
    /// A raw flow's frame.
    Raw { payload: u32, seq: u32 },
    /// Anything else, whole, in the fabric's arena of other payloads.
    Other(Handle<Payload>),
}

impl Body {
    /// `payload` as kept in flight; `others` takes it whole when it has no compact form.
    pub(crate) fn pack(payload: Payload, others: &mut Arena<Payload>) -> Body {
        match payload {
            Payload::Roce {
                hdr,
                payload_len,
                data,
            } if hdr.ext
                == wire::ExtHeaders {
                    reth: hdr.ext.reth,
                    aeth: hdr.ext.aeth,
                    ..wire::ExtHeaders::NONE
                } =>
            {
                Body::Rc {
                    bth: hdr.bth,
                    reth: hdr.ext.reth,
                    aeth: hdr.ext.aeth,
                    udp_src_port: hdr.udp_src_port,
                    payload_len,
                    data,
                }
            }
            Payload::Raw { payload, seq } => Body::Raw { payload, seq },
            other => Body::Other(others.insert(other)),
        }
    }

    /// The payload again, taking a [`Body::Other`]'s out of `others`.
    pub(crate) fn take(self, others: &mut Arena<Payload>) -> Payload {
        self.expand(|h| others.remove(h))
    }

    /// A copy of the payload, leaving everything in place.
    pub(crate) fn copy(self, others: &Arena<Payload>) -> Payload {
        self.expand(|h| *others.get(h))
    }

    fn expand(self, other: impl FnOnce(Handle<Payload>) -> Payload) -> Payload {
        match self {
            Body::Rc {
                bth,
                reth,
                aeth,
                udp_src_port,
                payload_len,
                data,
            } => Payload::Roce {
                hdr: RoceHeaders {
                    bth,
                    ext: wire::ExtHeaders {
                        reth,
                        aeth,
                        ..wire::ExtHeaders::NONE
                    },
                    udp_src_port,
                },
                payload_len,
                data,
            },
            Body::Raw { payload, seq } => Payload::Raw { payload, seq },
            Body::Other(h) => other(h),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_fits_one_cache_line() {
        assert!(core::mem::size_of::<Option<Body>>() <= 64);
    }

    #[test]
    fn a_body_unpacks_to_the_payload_it_packed() {
        use wire::ib::{aeth, bth, deth, immdt, reth};
        let bth = bth::Repr {
            opcode: wire::Opcode::rc(wire::Operation::RdmaWriteFirst),
            solicited: false,
            mig_req: true,
            pad_count: 0,
            pkey: 0xffff,
            fecn: false,
            becn: true,
            dest_qp: 0x12,
            ack_req: true,
            psn: 0xff_fffe,
        };
        let reth = Some(reth::Repr {
            va: 0x1000,
            rkey: 7,
            dma_len: 8192,
        });
        let aeth = Some(aeth::Repr {
            syndrome: aeth::Syndrome::Ack { credits: 3 },
            msn: 9,
        });
        let roce = |ext: wire::ExtHeaders| Payload::Roce {
            hdr: RoceHeaders {
                bth,
                ext,
                udp_src_port: 0xc123,
            },
            payload_len: 4096,
            data: DataHandle::of(42),
        };
        let none = wire::ExtHeaders::NONE;
        let cases = [
            (roce(none), false),
            (roce(wire::ExtHeaders { reth, ..none }), false),
            (roce(wire::ExtHeaders { aeth, ..none }), false),
            (roce(wire::ExtHeaders { reth, aeth, ..none }), false),
            (
                roce(wire::ExtHeaders {
                    deth: Some(deth::Repr { qkey: 1, src_qp: 2 }),
                    ..none
                }),
                true,
            ),
            (
                roce(wire::ExtHeaders {
                    reth,
                    immdt: Some(immdt::Repr { imm: 5 }),
                    ..none
                }),
                true,
            ),
            (
                roce(wire::ExtHeaders {
                    irn: Some(wire::ib::irn::Repr::Send {
                        wqe_sn: 4,
                        offset: 8192,
                    }),
                    ..none
                }),
                true,
            ),
            (
                Payload::Tcp {
                    repr: wire::tcp::Repr {
                        src_port: 40_000,
                        dst_port: 18_515,
                        seq: 1,
                        ack: 2,
                        window: 512,
                        sack_ranges: [Some((10, 20)), None, None, None],
                        payload_len: 1448,
                        ..wire::tcp::Repr::default()
                    },
                    data: DataHandle::of(7),
                },
                true,
            ),
            (
                Payload::Raw {
                    payload: 1000,
                    seq: 3,
                },
                false,
            ),
            (
                Payload::Pause {
                    class_enable: 8,
                    quanta: [0, 0, 0, 0xffff, 0, 0, 0, 0],
                },
                true,
            ),
        ];
        let mut others = Arena::new();
        for (p, whole) in cases {
            let b = Body::pack(p, &mut others);
            assert_eq!(matches!(b, Body::Other(_)), whole, "{p:?}");
            assert_eq!(b.copy(&others), p, "a copy");
            assert_eq!(b.take(&mut others), p, "taken");
        }
        assert!(others.is_empty(), "every whole payload taken back");
    }
}
