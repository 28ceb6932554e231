//! Connection configuration: every knob, its unit, its default and where the default comes from.
//!
//! Defaults follow a current Linux kernel where Linux has a knob, and the RFC where it does not.
//! [`Config::validate`] checks every field; an out-of-range value is a [`ConfigError`] that
//! names the field, the value and the allowed range, so nothing fails later inside a run.
//! [`Connection::connect`](super::Connection::connect) and
//! [`Connection::listen`](super::Connection::listen) validate before they build anything.

use core::fmt;

use units::SimDuration;

use super::tso::TsoDefer;

/// A configuration value outside what the model accepts.
#[derive(Clone, Debug, Eq, PartialEq, thiserror::Error)]
#[error("tcp.{field} = {value} is out of range: allowed {allowed}")]
pub struct ConfigError {
    /// The field of [`Config`] (e.g. `min_rto`).
    pub field: &'static str,
    /// The rejected value, printed.
    pub value: String,
    /// What is allowed.
    pub allowed: String,
}

impl ConfigError {
    fn new(field: &'static str, value: impl ToString, allowed: impl ToString) -> ConfigError {
        ConfigError {
            field,
            value: value.to_string(),
            allowed: allowed.to_string(),
        }
    }
}

/// The congestion controller a connection runs (see [`congestion`](super::congestion)).
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub enum CongestionControl {
    /// CUBIC (RFC 9438), Linux's default since 2.6.19.
    #[default]
    Cubic,
    /// DCTCP (RFC 8257): needs [`Config::ecn`].
    Dctcp,
    /// NewReno (RFC 5681 and RFC 6582).
    NewReno,
}

impl fmt::Display for CongestionControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CongestionControl::Cubic => "CUBIC",
            CongestionControl::Dctcp => "DCTCP",
            CongestionControl::NewReno => "NewReno",
        })
    }
}

/// The largest window RFC 7323 §2.3 allows (shift 14): 65535 × 2^14 bytes, about 1 GiB.
pub const MAX_WINDOW_BYTES: usize = 65_535 << 14;

/// Linux's minimum MSS (`TCP_MIN_MSS`, include/net/tcp.h).
pub const MIN_MSS: u16 = 88;

/// The largest MSS an IPv4 packet can carry: 65535 − 20 (IPv4) − 20 (TCP).
pub const MAX_MSS: u16 = 65_495;

/// Settings for one TCP endpoint. Build with `Config::default()` and change fields.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Config {
    /// The MSS option we announce, in bytes: the largest payload we accept in a segment whose
    /// TCP header has no options (RFC 9293 §3.7.1). Default 1460 (a 1500-byte MTU minus 40
    /// bytes of IPv4 and TCP headers). Allowed 88..=65495.
    pub mss: u16,
    /// Send buffer, in bytes: data the application wrote that is not yet acknowledged.
    /// Default 4 MiB, the maximum of Linux's `tcp_wmem` (autotuning is not modelled).
    /// Allowed 1..=MAX_WINDOW_BYTES.
    pub send_buffer: usize,
    /// Receive buffer, in bytes: in-order data the application has not read plus
    /// out-of-order data; the advertised window is its free space. Default 6 MiB, the maximum
    /// of Linux's `tcp_rmem`. Allowed 1..=MAX_WINDOW_BYTES.
    pub recv_buffer: usize,
    /// Offer the window-scale option (RFC 7323 §2). Default on, as Linux.
    pub window_scaling: bool,
    /// Offer SACK (RFC 2018) and use RFC 6675 loss recovery when both sides agree. Default on.
    pub sack: bool,
    /// Offer the timestamps option (RFC 7323 §3). Default on. The timestamp clock ticks in
    /// microseconds (as Linux's `tcp_usec_ts` route option), not milliseconds.
    pub timestamps: bool,
    /// Delay ACKs (RFC 5681 §4.2): acknowledge at least every second full-sized segment, or
    /// when [`delayed_ack_timeout`](Self::delayed_ack_timeout) runs out. Default on.
    pub delayed_ack: bool,
    /// How long a delayed ACK may wait. Default 40 ms: Linux's `TCP_DELACK_MIN` (HZ/25,
    /// include/net/tcp.h), the delay Linux starts from; RFC 9293 §3.8.6.3 requires < 0.5 s.
    /// Allowed 1 µs..=500 ms.
    pub delayed_ack_timeout: SimDuration,
    /// RTO before any RTT sample, also the SYN timeout. Default 1 s (RFC 6298 §2.1; Linux
    /// `TCP_TIMEOUT_INIT`). Allowed min_rto..=max_rto.
    pub initial_rto: SimDuration,
    /// Lower bound on the RTO. Default 200 ms (Linux `TCP_RTO_MIN`, HZ/5; RFC 6298 §2.4 asks
    /// for 1 s). See [`Config::datacenter`] for a data-centre value. Allowed 1 µs..=max_rto.
    pub min_rto: SimDuration,
    /// Upper bound on the RTO after backoff. Default 120 s (Linux `TCP_RTO_MAX`; RFC 6298 §2.5
    /// allows any value of at least 60 s). Allowed min_rto..=3600 s.
    pub max_rto: SimDuration,
    /// Initial congestion window, in segments. Default 10 (RFC 6928). Allowed 1..=1000.
    pub initial_cwnd: u32,
    /// The congestion controller. Default CUBIC, as Linux.
    pub congestion_control: CongestionControl,
    /// Negotiate ECN (RFC 3168 §6.1.1) and send data as ECT(0). Default off (Linux's
    /// `tcp_ecn = 2` answers ECN but does not ask for it). Required by DCTCP.
    pub ecn: bool,
    /// RACK-TLP loss detection (RFC 8985), Linux's default since 4.18 (RACK) and 3.10 (TLP).
    /// Default on. Takes effect only when SACK is negotiated, as in Linux.
    pub rack_tlp: bool,
    /// How long TIME-WAIT lasts (2·MSL). Default 60 s (Linux `TCP_TIMEWAIT_LEN`).
    /// Allowed 0..=240 s (RFC 9293 §3.4.2: MSL = 2 min).
    pub time_wait: SimDuration,
    /// SYN (and SYN-ACK) retransmissions before giving up. Default 6 (Linux
    /// `tcp_syn_retries`). Allowed 1..=255.
    pub syn_retries: u32,
    /// Consecutive retransmission timeouts on data before giving up. Default 15 (Linux
    /// `tcp_retries2`). Allowed 1..=255.
    pub max_retries: u32,
    /// TSO deferral (Linux `tcp_tso_should_defer`, see [`tso`](super::tso)): hold a small
    /// ACK-clocked piece of a large write until the next ACK so one large super-segment goes
    /// out. `None` (the default) sends every piece at once: the transport alone does not
    /// segment in a NIC; a host that offloads segmentation sets it.
    pub tso_defer: Option<TsoDefer>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            mss: 1460,
            send_buffer: 4 << 20,
            recv_buffer: 6 << 20,
            window_scaling: true,
            sack: true,
            timestamps: true,
            delayed_ack: true,
            delayed_ack_timeout: SimDuration::from_ms(40),
            initial_rto: SimDuration::from_secs(1),
            min_rto: SimDuration::from_ms(200),
            max_rto: SimDuration::from_secs(120),
            initial_cwnd: 10,
            congestion_control: CongestionControl::Cubic,
            ecn: false,
            rack_tlp: true,
            time_wait: SimDuration::from_secs(60),
            syn_retries: 6,
            max_retries: 15,
            tso_defer: None,
        }
    }
}

impl Config {
    /// The defaults with a data-centre minimum RTO of 1 ms, the smallest value Linux's per-route
    /// `rto_min` (`ip route ... rto_min 1ms`) takes in its usual millisecond form. Switches a
    /// lost tail from a 200 ms stall to a 1 ms one when RACK-TLP cannot help.
    pub fn datacenter() -> Config {
        Config {
            min_rto: SimDuration::from_ms(1),
            ..Config::default()
        }
    }

    /// Check every field; the first field out of range is the error.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let in_range = |field, v: u64, lo: u64, hi: u64| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(ConfigError::new(field, v, format!("{lo}..={hi}")))
            }
        };
        let span_in = |field, v: SimDuration, lo: SimDuration, hi: SimDuration| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(ConfigError::new(field, v, format!("{lo}..={hi}")))
            }
        };
        in_range(
            "mss",
            u64::from(self.mss),
            u64::from(MIN_MSS),
            u64::from(MAX_MSS),
        )?;
        in_range(
            "send_buffer",
            self.send_buffer as u64,
            1,
            MAX_WINDOW_BYTES as u64,
        )?;
        in_range(
            "recv_buffer",
            self.recv_buffer as u64,
            1,
            MAX_WINDOW_BYTES as u64,
        )?;
        span_in(
            "delayed_ack_timeout",
            self.delayed_ack_timeout,
            SimDuration::from_us(1),
            SimDuration::from_ms(500),
        )?;
        span_in(
            "max_rto",
            self.max_rto,
            SimDuration::from_us(1),
            SimDuration::from_secs(3600),
        )?;
        span_in(
            "min_rto",
            self.min_rto,
            SimDuration::from_us(1),
            self.max_rto,
        )?;
        span_in("initial_rto", self.initial_rto, self.min_rto, self.max_rto)?;
        in_range("initial_cwnd", u64::from(self.initial_cwnd), 1, 1000)?;
        span_in(
            "time_wait",
            self.time_wait,
            SimDuration::ZERO,
            SimDuration::from_secs(240),
        )?;
        in_range("syn_retries", u64::from(self.syn_retries), 1, 255)?;
        in_range("max_retries", u64::from(self.max_retries), 1, 255)?;
        if let Some(t) = self.tso_defer {
            in_range("tso_defer.max_bytes", u64::from(t.max_bytes), 1, 65_536)?;
            in_range("tso_defer.win_divisor", u64::from(t.win_divisor), 1, 64)?;
        }
        if self.congestion_control == CongestionControl::Dctcp && !self.ecn {
            return Err(ConfigError::new(
                "ecn",
                false,
                "true when congestion_control = DCTCP (RFC 8257 §3 reacts to ECN marks)",
            ));
        }
        Ok(())
    }

    /// The window-scale shift we announce: the smallest that lets the receive buffer fit in
    /// the 16-bit window field, at most 14 (RFC 7323 §2.3).
    pub(crate) fn window_shift(&self) -> u8 {
        let mut shift = 0u8;
        while shift < 14 && (self.recv_buffer >> shift) > 65_535 {
            shift += 1;
        }
        shift
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        Config::default().validate().unwrap();
        Config::datacenter().validate().unwrap();
        assert_eq!(Config::default().window_shift(), 7);
    }

    #[test]
    fn errors_name_the_field_and_range() {
        let c = Config {
            mss: 0,
            ..Config::default()
        };
        let e = c.validate().unwrap_err();
        assert_eq!(e.field, "mss");
        assert_eq!(e.allowed, "88..=65495");
        assert_eq!(
            e.to_string(),
            "tcp.mss = 0 is out of range: allowed 88..=65495"
        );

        let c = Config {
            recv_buffer: 0,
            ..Config::default()
        };
        assert_eq!(c.validate().unwrap_err().field, "recv_buffer");

        let c = Config {
            min_rto: SimDuration::from_secs(200),
            ..Config::default()
        };
        let e = c.validate().unwrap_err();
        assert_eq!(e.field, "min_rto");
        assert_eq!(e.allowed, "1 µs..=120 s");

        let c = Config {
            congestion_control: CongestionControl::Dctcp,
            ..Config::default()
        };
        assert_eq!(c.validate().unwrap_err().field, "ecn");

        let c = Config {
            delayed_ack_timeout: SimDuration::from_secs(1),
            ..Config::default()
        };
        assert_eq!(c.validate().unwrap_err().field, "delayed_ack_timeout");
    }

    #[test]
    fn window_shift_fits_the_buffer() {
        for (buf, shift) in [
            (65_535, 0),
            (65_536, 1),
            (1 << 20, 5),
            (MAX_WINDOW_BYTES, 14),
        ] {
            let c = Config {
                recv_buffer: buf,
                ..Config::default()
            };
            assert_eq!(c.window_shift(), shift, "buffer {buf}");
        }
    }
}
