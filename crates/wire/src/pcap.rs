//! Classic pcap files with nanosecond timestamps: a writer for simulation traces and a small
//! reader for tests.
//!
//! Follows the libpcap file format (draft-ietf-opsawg-pcap, "PCAP Capture File Format"): a
//! 24-byte global header (magic, version 2.4, time zone 0, accuracy 0, snapshot length, link
//! type) and, per frame, a 16-byte record header (seconds, sub-second part, captured length,
//! original length) followed by the bytes. The magic `0xa1b23c4d` says the sub-second part
//! counts nanoseconds; Wireshark and tshark read it. Fields are written little-endian, and the
//! magic tells a reader which byte order it was written in.
//!
//! Timestamps come from [`SimTime`] (picoseconds since the start of the run) and are
//! truncated to whole nanoseconds. Frames are stored without FCS, link type 1 (Ethernet).

use std::io::{self, Read, Write};

use units::SimTime;

/// Magic number of a pcap file with nanosecond timestamps.
pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// Magic number of a pcap file with microsecond timestamps (the original format).
pub const MAGIC_MICROS: u32 = 0xa1b2_c3d4;
/// File format major version.
pub const VERSION_MAJOR: u16 = 2;
/// File format minor version.
pub const VERSION_MINOR: u16 = 4;
/// Link type of Ethernet frames (LINKTYPE_ETHERNET).
pub const LINKTYPE_ETHERNET: u32 = 1;
/// The snapshot length written: larger than any frame, so frames are never cut.
pub const SNAPLEN: u32 = 262_144;
/// Length of the global header.
pub const GLOBAL_HEADER_LEN: usize = 24;
/// Length of a record header.
pub const RECORD_HEADER_LEN: usize = 16;

const PS_PER_NS: u64 = 1_000;
const NS_PER_S: u64 = 1_000_000_000;

/// Writes frames to a pcap file (or any [`Write`]).
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
}

impl<W: Write> PcapWriter<W> {
    /// Write the global header to `out` and return a writer for the records.
    pub fn new(mut out: W) -> io::Result<PcapWriter<W>> {
        let mut header = [0u8; GLOBAL_HEADER_LEN];
        header[0..4].copy_from_slice(&MAGIC_NANOS.to_le_bytes());
        header[4..6].copy_from_slice(&VERSION_MAJOR.to_le_bytes());
        header[6..8].copy_from_slice(&VERSION_MINOR.to_le_bytes());
        // Bytes 8..16: time zone offset and timestamp accuracy, both zero.
        header[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
        header[20..24].copy_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        out.write_all(&header)?;
        Ok(PcapWriter { out })
    }

    /// Append one frame seen at `at`. Frames longer than [`SNAPLEN`] are cut to it, with
    /// the original length recorded.
    pub fn write_frame(&mut self, at: SimTime, frame: &[u8]) -> io::Result<()> {
        let ns = at.as_ps() / PS_PER_NS;
        // u64::MAX picoseconds is about 1.8e7 seconds, far below u32::MAX seconds.
        let secs = (ns / NS_PER_S) as u32;
        let nanos = (ns % NS_PER_S) as u32;
        let orig_len = u32::try_from(frame.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame over 4 GiB"))?;
        let incl_len = orig_len.min(SNAPLEN);
        let mut header = [0u8; RECORD_HEADER_LEN];
        header[0..4].copy_from_slice(&secs.to_le_bytes());
        header[4..8].copy_from_slice(&nanos.to_le_bytes());
        header[8..12].copy_from_slice(&incl_len.to_le_bytes());
        header[12..16].copy_from_slice(&orig_len.to_le_bytes());
        self.out.write_all(&header)?;
        self.out.write_all(&frame[..incl_len as usize])
    }

    /// Flush the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// One frame read back from a pcap file.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Record {
    /// Nanoseconds since the epoch of the file (the start of the run for rdmalab traces).
    pub time_ns: u64,
    /// The frame's length on the wire; more than `data.len()` if the capture cut it.
    pub orig_len: u32,
    /// The captured bytes.
    pub data: Vec<u8>,
}

impl Record {
    /// The timestamp as a [`SimTime`] (whole nanoseconds).
    pub fn time(&self) -> SimTime {
        SimTime::from_ps(self.time_ns.saturating_mul(PS_PER_NS))
    }
}

/// Reads a classic pcap file: either byte order, microsecond or nanosecond timestamps.
#[derive(Debug)]
pub struct PcapReader<R: Read> {
    input: R,
    big_endian: bool,
    nanos: bool,
    snaplen: u32,
    link_type: u32,
}

/// The largest record this reader accepts, whatever the file's snapshot length says; guards
/// against allocating gigabytes for a corrupt length field.
const MAX_RECORD_LEN: u32 = 1 << 24;

impl<R: Read> PcapReader<R> {
    /// Read and check the global header.
    pub fn new(mut input: R) -> io::Result<PcapReader<R>> {
        let mut header = [0u8; GLOBAL_HEADER_LEN];
        input.read_exact(&mut header)?;
        let magic_le = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let (big_endian, nanos) = match magic_le {
            MAGIC_NANOS => (false, true),
            MAGIC_MICROS => (false, false),
            m if m.swap_bytes() == MAGIC_NANOS => (true, true),
            m if m.swap_bytes() == MAGIC_MICROS => (true, false),
            _ => return Err(invalid("not a classic pcap file (bad magic)")),
        };
        let mut reader = PcapReader {
            input,
            big_endian,
            nanos,
            snaplen: 0,
            link_type: 0,
        };
        let major = reader.u16_of([header[4], header[5]]);
        if major != VERSION_MAJOR {
            return Err(invalid("unsupported pcap major version"));
        }
        reader.snaplen = reader.u32_of(&header[16..20]);
        reader.link_type = reader.u32_of(&header[20..24]);
        Ok(reader)
    }

    /// Whether timestamps have nanosecond resolution.
    pub fn is_nanosecond(&self) -> bool {
        self.nanos
    }

    /// The snapshot length from the global header.
    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }

    /// The link type from the global header (1 for Ethernet).
    pub fn link_type(&self) -> u32 {
        self.link_type
    }

    /// The next record, or `None` at a clean end of file.
    pub fn next_record(&mut self) -> io::Result<Option<Record>> {
        let mut header = [0u8; RECORD_HEADER_LEN];
        let mut filled = 0;
        while filled < header.len() {
            match self.input.read(&mut header[filled..]) {
                Ok(0) if filled == 0 => return Ok(None),
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let secs = u64::from(self.u32_of(&header[0..4]));
        let frac = u64::from(self.u32_of(&header[4..8]));
        let incl_len = self.u32_of(&header[8..12]);
        let orig_len = self.u32_of(&header[12..16]);
        if incl_len > MAX_RECORD_LEN {
            return Err(invalid("pcap record longer than 16 MiB"));
        }
        let sub_ns = if self.nanos { frac } else { frac * 1_000 };
        let mut data = vec![0; incl_len as usize];
        self.input.read_exact(&mut data)?;
        Ok(Some(Record {
            time_ns: secs * NS_PER_S + sub_ns,
            orig_len,
            data,
        }))
    }

    fn u16_of(&self, b: [u8; 2]) -> u16 {
        if self.big_endian {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }
    }

    fn u32_of(&self, b: &[u8]) -> u32 {
        let b = [b[0], b[1], b[2], b[3]];
        if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }
}

impl<R: Read> Iterator for PcapReader<R> {
    type Item = io::Result<Record>;

    fn next(&mut self) -> Option<io::Result<Record>> {
        self.next_record().transpose()
    }
}

fn invalid(what: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn global_and_record_header_bytes() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        // 1.5 s + 7 ns + 999 ps: the picoseconds are truncated.
        let at = SimTime::from_ps(1_500_000_007_999);
        w.write_frame(at, &[0xaa, 0xbb, 0xcc]).unwrap();
        let bytes = w.into_inner();
        let expected: Vec<u8> = [
            &[0x4d, 0x3c, 0xb2, 0xa1][..], // magic, little-endian
            &[2, 0, 4, 0],                 // version 2.4
            &[0; 8],                       // time zone, accuracy
            &[0x00, 0x00, 0x04, 0x00],     // snaplen 262144
            &[1, 0, 0, 0],                 // Ethernet
            &[1, 0, 0, 0],                 // 1 s
            &[0x07, 0x65, 0xcd, 0x1d],     // 500_000_007 ns = 0x1dcd6507
            &[3, 0, 0, 0],                 // captured length
            &[3, 0, 0, 0],                 // original length
            &[0xaa, 0xbb, 0xcc],
        ]
        .concat();
        assert_eq!(bytes, expected);
    }

    #[test]
    fn read_back() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.write_frame(SimTime::from_ps(1_234_567), &[1; 60])
            .unwrap();
        w.write_frame(SimTime::from_ps(3_000_000_000_001_000), &[2; 64])
            .unwrap();
        let bytes = w.into_inner();
        let mut r = PcapReader::new(&bytes[..]).unwrap();
        assert!(r.is_nanosecond());
        assert_eq!(r.link_type(), LINKTYPE_ETHERNET);
        assert_eq!(r.snaplen(), SNAPLEN);
        let a = r.next_record().unwrap().unwrap();
        assert_eq!(a.time_ns, 1_234);
        assert_eq!(a.time(), SimTime::from_ps(1_234_000));
        assert_eq!(a.data, vec![1; 60]);
        assert_eq!(a.orig_len, 60);
        let b = r.next_record().unwrap().unwrap();
        assert_eq!(b.time_ns, 3_000_000_000_001);
        assert_eq!(b.data, vec![2; 64]);
        assert!(r.next_record().unwrap().is_none());
    }

    #[test]
    fn reads_big_endian_microsecond_files() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&MAGIC_MICROS.to_be_bytes());
        bytes.extend_from_slice(&[0, 2, 0, 4]);
        bytes.extend_from_slice(&[0; 8]);
        bytes.extend_from_slice(&65535u32.to_be_bytes());
        bytes.extend_from_slice(&1u32.to_be_bytes());
        bytes.extend_from_slice(&2u32.to_be_bytes()); // 2 s
        bytes.extend_from_slice(&5u32.to_be_bytes()); // 5 µs
        bytes.extend_from_slice(&1u32.to_be_bytes());
        bytes.extend_from_slice(&1u32.to_be_bytes());
        bytes.push(0x42);
        let records: Vec<Record> = PcapReader::new(&bytes[..])
            .unwrap()
            .collect::<io::Result<_>>()
            .unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].time_ns, 2_000_005_000);
        assert_eq!(records[0].data, vec![0x42]);
    }

    #[test]
    fn errors_on_garbage() {
        assert!(PcapReader::new(&[0u8; 24][..]).is_err());
        assert!(PcapReader::new(&[0u8; 3][..]).is_err());
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.write_frame(SimTime::ZERO, &[9; 10]).unwrap();
        let bytes = w.into_inner();
        // A record cut in its header or its data is an error, not a clean end.
        for cut in [GLOBAL_HEADER_LEN + 5, bytes.len() - 1] {
            let mut r = PcapReader::new(&bytes[..cut]).unwrap();
            assert!(r.next_record().is_err());
        }
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..128)) {
            if let Ok(r) = PcapReader::new(&bytes[..]) {
                for rec in r.take(8) {
                    if rec.is_err() {
                        break;
                    }
                }
            }
        }

        #[test]
        fn timestamps_round_trip(ps in 0u64..(1 << 60), len in 0usize..100) {
            let mut w = PcapWriter::new(Vec::new()).unwrap();
            w.write_frame(SimTime::from_ps(ps), &vec![7; len]).unwrap();
            let bytes = w.into_inner();
            let rec = PcapReader::new(&bytes[..]).unwrap().next_record().unwrap().unwrap();
            prop_assert_eq!(rec.time_ns, ps / 1000);
            prop_assert_eq!(rec.data.len(), len);
        }
    }
}
