//! MAC control frames: the IEEE 802.3 PAUSE frame and IEEE 802.1Qbb priority flow control.
//!
//! Follows IEEE 802.3-2018 Annex 31B (PAUSE, MAC control opcode `0x0001`) and IEEE 802.1Qbb
//! (now IEEE 802.1Q-2018 clause 36; PFC, opcode `0x0101`). Both travel in an Ethernet frame to
//! the reserved multicast address [`DESTINATION`] with EtherType `0x8808`. The body after the
//! EtherType is always 46 bytes (the frame is minimum size), zero-padded after the fields:
//!
//! - PAUSE: opcode, then one pause time for the whole link.
//! - PFC: opcode, a class-enable vector (16 bits, one bit per priority in the low eight, the
//!   upper eight reserved), then eight pause times, one per priority 0–7.
//!
//! A pause time counts *quanta* of 512 bit times, so its duration depends on the link speed
//! ([`pause_duration`]). A time of zero for an enabled class means XON: resume at once.
//! RoCE fabrics use PFC to make one or two priorities lossless; everything else stays lossy.
//!
//! Simplification: the reserved upper byte of the class-enable vector is written as zero and
//! ignored on parse; pause times of classes whose enable bit is clear are kept as sent (a
//! receiver ignores them).

use units::{Bandwidth, ByteLen, Priority, SimDuration};

use crate::{Error, EthernetAddress, Result, be};

pub(crate) mod field {
    use crate::Field;
    pub const OPCODE: Field = 0..2;
    pub const PAUSE_TIME: Field = 2..4;
    pub const CLASS_ENABLE: Field = 2..4;
    /// The pause time of priority `index` (0–7) in a PFC frame.
    pub const fn class_time(index: usize) -> Field {
        4 + 2 * index..6 + 2 * index
    }
}

/// The reserved multicast address every PAUSE and PFC frame is sent to.
pub const DESTINATION: EthernetAddress = EthernetAddress([0x01, 0x80, 0xc2, 0x00, 0x00, 0x01]);
/// MAC control opcode of an IEEE 802.3 PAUSE frame.
pub const OPCODE_PAUSE: u16 = 0x0001;
/// MAC control opcode of a priority flow control frame.
pub const OPCODE_PFC: u16 = 0x0101;
/// Length of the MAC control body: a minimum-size frame minus the Ethernet header.
pub const BODY_LEN: usize = 46;
/// Length of the meaningful part of a PAUSE body.
pub const PAUSE_LEN: usize = field::PAUSE_TIME.end;
/// Length of the meaningful part of a PFC body.
pub const PFC_LEN: usize = field::class_time(7).end;
/// Bit times per pause quantum.
pub const QUANTUM_BITS: u64 = 512;

/// How long `quanta` pause quanta last on a link of speed `rate`: `quanta × 512` bit times,
/// rounded up to a whole picosecond. The maximum, 65535 quanta, is about 3.36 ms at 10 Gb/s
/// and 336 µs at 100 Gb/s; a switch refreshes the pause to hold a sender for longer.
pub fn pause_duration(quanta: u16, rate: Bandwidth) -> SimDuration {
    rate.serialization_time(ByteLen::new(u64::from(quanta) * QUANTUM_BITS / 8))
}

/// A read (and, for mutable buffers, write) view of a MAC control body (after the EtherType).
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking it; getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Check that the buffer holds the opcode and the fields that opcode defines. The padding
    /// to 46 bytes is not required (a capture may have dropped it).
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < field::OPCODE.end {
            return Err(Error::Truncated("MAC control opcode"));
        }
        let needed = match self.opcode() {
            OPCODE_PAUSE => PAUSE_LEN,
            OPCODE_PFC => PFC_LEN,
            _ => field::OPCODE.end,
        };
        if len < needed {
            return Err(Error::Truncated("MAC control frame"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The MAC control opcode.
    pub fn opcode(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::OPCODE)
    }

    /// The pause time of a PAUSE frame, in quanta.
    pub fn pause_time(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::PAUSE_TIME)
    }

    /// The class-enable vector of a PFC frame (bit `p` set: priority `p` is addressed).
    pub fn class_enable_vector(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::CLASS_ENABLE)
    }

    /// The pause time of priority `prio` in a PFC frame, in quanta.
    pub fn class_time(&self, prio: Priority) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::class_time(prio.index()))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the MAC control opcode.
    pub fn set_opcode(&mut self, opcode: u16) {
        be::set_u16(self.buffer.as_mut(), field::OPCODE, opcode);
    }

    /// Set the pause time of a PAUSE frame.
    pub fn set_pause_time(&mut self, quanta: u16) {
        be::set_u16(self.buffer.as_mut(), field::PAUSE_TIME, quanta);
    }

    /// Set the class-enable vector of a PFC frame.
    pub fn set_class_enable_vector(&mut self, vector: u16) {
        be::set_u16(self.buffer.as_mut(), field::CLASS_ENABLE, vector);
    }

    /// Set the pause time of priority `prio` in a PFC frame.
    pub fn set_class_time(&mut self, prio: Priority, quanta: u16) {
        be::set_u16(
            self.buffer.as_mut(),
            field::class_time(prio.index()),
            quanta,
        );
    }
}

/// A parsed MAC control frame body.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum Repr {
    /// IEEE 802.3 PAUSE: stop all traffic on the link.
    Pause {
        /// Pause time in quanta; 0 resumes.
        quanta: u16,
    },
    /// IEEE 802.1Qbb PFC: pause (or resume) individual priorities.
    Pfc {
        /// Bit `p` set: priority `p`'s pause time is in force.
        class_enable: u8,
        /// Pause time per priority, in quanta; 0 with the enable bit set resumes.
        quanta: [u16; Priority::COUNT],
    },
}

impl Repr {
    /// A PFC frame that pauses the given priorities for `quanta` (or resumes them if `quanta`
    /// is 0) and leaves the others alone.
    pub fn pfc(priorities: impl IntoIterator<Item = Priority>, quanta: u16) -> Repr {
        let mut class_enable = 0u8;
        let mut times = [0u16; Priority::COUNT];
        for p in priorities {
            class_enable |= 1 << p.get();
            times[p.index()] = quanta;
        }
        Repr::Pfc {
            class_enable,
            quanta: times,
        }
    }

    /// The pause time this frame sets for priority `prio`, or `None` if it does not address
    /// that priority. A PAUSE frame addresses every priority.
    pub const fn quanta_for(&self, prio: Priority) -> Option<u16> {
        match *self {
            Repr::Pause { quanta } => Some(quanta),
            Repr::Pfc {
                class_enable,
                quanta,
            } => {
                if class_enable & (1 << prio.get()) != 0 {
                    Some(quanta[prio.index()])
                } else {
                    None
                }
            }
        }
    }

    /// Read a PAUSE or PFC body; other MAC control opcodes are [`Error::Unsupported`].
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        match packet.opcode() {
            OPCODE_PAUSE => Ok(Repr::Pause {
                quanta: packet.pause_time(),
            }),
            OPCODE_PFC => {
                let mut quanta = [0u16; Priority::COUNT];
                for p in Priority::all() {
                    quanta[p.index()] = packet.class_time(p);
                }
                Ok(Repr::Pfc {
                    // The upper byte is reserved; see the module documentation.
                    class_enable: (packet.class_enable_vector() & 0x00ff) as u8,
                    quanta,
                })
            }
            _ => Err(Error::Unsupported(
                "MAC control opcode other than PAUSE and PFC",
            )),
        }
    }

    /// The bytes of defined fields: 4 for PAUSE, 20 for PFC.
    pub const fn header_len(&self) -> usize {
        match self {
            Repr::Pause { .. } => PAUSE_LEN,
            Repr::Pfc { .. } => PFC_LEN,
        }
    }

    /// The bytes [`emit`](Self::emit) writes: always [`BODY_LEN`], padding included.
    pub const fn buffer_len(&self) -> usize {
        BODY_LEN
    }

    /// Write the body, zero padding included, into the first [`BODY_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        packet.buffer.as_mut()[..BODY_LEN].fill(0);
        match *self {
            Repr::Pause { quanta } => {
                packet.set_opcode(OPCODE_PAUSE);
                packet.set_pause_time(quanta);
            }
            Repr::Pfc {
                class_enable,
                quanta,
            } => {
                packet.set_opcode(OPCODE_PFC);
                packet.set_class_enable_vector(u16::from(class_enable));
                for p in Priority::all() {
                    packet.set_class_time(p, quanta[p.index()]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::pfc_repr;
    use proptest::prelude::*;

    // PFC pausing priority 3 for 0xffff quanta and resuming priority 4 (XON); the disabled
    // classes carry zero. Padded to 46 bytes.
    static PFC_BYTES: [u8; 46] = [
        0x01, 0x01, // opcode
        0x00, 0x18, // class-enable vector: priorities 3 and 4
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, // times 0-3
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // times 4-7
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, // padding
    ];
    static PAUSE_BYTES: [u8; 46] = [
        0x00, 0x01, 0x12, 0x34, // opcode, 0x1234 quanta
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // padding
    ];

    fn pfc() -> Repr {
        let mut quanta = [0; 8];
        quanta[3] = 0xffff;
        Repr::Pfc {
            class_enable: 0x18,
            quanta,
        }
    }

    #[test]
    fn test_deconstruct() {
        let p = Packet::new_checked(&PFC_BYTES[..]).unwrap();
        assert_eq!(p.opcode(), OPCODE_PFC);
        assert_eq!(p.class_enable_vector(), 0x0018);
        assert_eq!(p.class_time(Priority::of(3)), 0xffff);
        assert_eq!(p.class_time(Priority::of(4)), 0);
        let p = Packet::new_checked(&PAUSE_BYTES[..]).unwrap();
        assert_eq!(p.opcode(), OPCODE_PAUSE);
        assert_eq!(p.pause_time(), 0x1234);
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 46];
        let mut p = Packet::new_unchecked(&mut bytes);
        p.set_opcode(OPCODE_PFC);
        p.set_class_enable_vector(0x18);
        for prio in Priority::all() {
            p.set_class_time(prio, if prio.get() == 3 { 0xffff } else { 0 });
        }
        bytes[PFC_LEN..].fill(0);
        assert_eq!(bytes, PFC_BYTES);
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(&PFC_BYTES[..]).unwrap();
        let repr = Repr::parse(&p).unwrap();
        assert_eq!(repr, pfc());
        assert_eq!(repr.quanta_for(Priority::of(3)), Some(0xffff));
        assert_eq!(repr.quanta_for(Priority::of(4)), Some(0));
        assert_eq!(repr.quanta_for(Priority::of(0)), None);
        let p = Packet::new_checked(&PAUSE_BYTES[..]).unwrap();
        let pause = Repr::parse(&p).unwrap();
        assert_eq!(pause, Repr::Pause { quanta: 0x1234 });
        assert_eq!(pause.quanta_for(Priority::of(6)), Some(0x1234));
    }

    #[test]
    fn test_emit() {
        let mut bytes = vec![0xa5; 46];
        pfc().emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, PFC_BYTES);
        let mut bytes = vec![0xa5; 46];
        Repr::Pause { quanta: 0x1234 }.emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, PAUSE_BYTES);
    }

    #[test]
    fn test_builder() {
        let r = Repr::pfc([Priority::of(3)], 0xffff);
        assert_eq!(
            r,
            Repr::Pfc {
                class_enable: 0x08,
                quanta: [0, 0, 0, 0xffff, 0, 0, 0, 0]
            }
        );
    }

    #[test]
    fn test_truncated_and_unknown() {
        assert_eq!(
            Packet::new_checked(&PFC_BYTES[..1]),
            Err(Error::Truncated("MAC control opcode"))
        );
        assert_eq!(
            Packet::new_checked(&PFC_BYTES[..19]),
            Err(Error::Truncated("MAC control frame"))
        );
        assert_eq!(
            Packet::new_checked(&PAUSE_BYTES[..3]),
            Err(Error::Truncated("MAC control frame"))
        );
        // GATE (EPON, opcode 2) is well-formed MAC control we do not model.
        let p = Packet::new_checked(&[0x00, 0x02, 0, 0][..]).unwrap();
        assert!(matches!(Repr::parse(&p), Err(Error::Unsupported(_))));
    }

    #[test]
    fn test_pause_duration() {
        // 65535 quanta × 512 bits = 33,553,920 bits: 3.355392 ms at 10 Gb/s.
        assert_eq!(
            pause_duration(0xffff, Bandwidth::gbps(10)),
            SimDuration::from_ns(3_355_392)
        );
        assert_eq!(
            pause_duration(1, Bandwidth::gbps(100)),
            SimDuration::from_ps(5_120)
        );
        assert_eq!(pause_duration(0, Bandwidth::gbps(100)), SimDuration::ZERO);
    }

    proptest! {
        #[test]
        fn round_trip(r in pfc_repr()) {
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes));
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(r));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..48)) {
            if let Ok(p) = Packet::new_checked(&bytes[..]) {
                let _ = Repr::parse(&p);
            }
        }
    }
}
