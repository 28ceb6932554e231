//! RDMA-CM's connection exchange on the wire: [`World::connect_rc_cm`] connects an RC QP on
//! each of two hosts with the InfiniBand connection manager's REQ → REP → RTU (IBTA Vol. 1
//! §12.6, §12.9), each a 256-byte MAD in a UD SEND Only between the hosts' QP1s
//! ([`wire::RoceFrame::gsi_mad`]), as Linux's `rdma_connect`/`rdma_accept` do on RoCE
//! (`drivers/infiniband/core/cma.c`, `cm.c`). The REQ's private data starts with the IP CM
//! header of IBTA Annex A11 and its service ID names the TCP port, so Wireshark's RDMA-CM
//! tracking (and through it its NVMe/RDMA dissector) recognises the QPs.
//!
//! What travels is real: each message is emitted as bytes, crosses the fabric (and the pcap)
//! like any frame, and the receiver parses what arrived; the QP attributes each side sets
//! come from the parsed message (the peer's QPN, starting PSN, GID, MTU, responder
//! resources and initiator depth), so a wrong byte shows as a broken connection.
//!
//! The QPs move as the IBTA CM state machine has them (§12.9.7): the passive side INIT→RTR on
//! a REQ (before it sends its REP), the active side RTR→RTS on the REP (before its RTU), the
//! passive side RTS on the RTU. (Linux's passive side already goes to RTS before sending the
//! REP; the active side's first packets would only meet an RTR QP here, which accepts them.)
//!
//! The CM lives in the kernel, so its work is charged as kernel CPU stages of the socket
//! path's costs, all counted as setup: an `rdma_connect`/`rdma_accept` is a `write()` on
//! `/dev/infiniband/rdma_cm` (librdmacm's ABI): syscall entry, the driver posting the MAD to
//! QP1 and ringing the doorbell, syscall exit; the NIC then fetches the WQE and the MAD by DMA
//! read behind the doorbell's MMIO write and passes its TX pipeline. A received MAD costs the
//! completion interrupt and the driver taking it off QP1's ring (the MAD layer and the CM's
//! state machine are assumed to fit in the driver RX stage's cost: no figure for them), then
//! waking the thread blocked in `rdma_get_cm_event` (its `write()` returns). The RTU is sent
//! by the kernel on the REP's arrival, without a syscall. The QP transitions are
//! `modify_qp` calls as the TCP exchange's are (each an ioctl and a firmware command).
//!
//! Not modelled: address and route resolution (`rdma_resolve_addr`/`route`: ARP and the path
//! record; the hosts' addresses are known), the CM's retransmission of a lost MAD (its
//! response timeout) and REJ, MRA, DREQ/DREP, and alternate paths.

use super::{APP_CORE, HostIx, SOFTIRQ_CORE};
use super::{Endpoint, PoolData, RcOptions, World, WorldError};
use engine::{Budget, Stage};
use fabric::{Ecn, EtherType, RoceHeaders, packet::host_ip};
use host::CpuWork;
use units::{SimDuration, SimTime};
use wire::Ipv4Address;
use wire::ib::cm::{self, IpCmHeader, Message, PathRepr, RepRepr, ReqRepr, RtuRepr};

/// What an RDMA-CM connection asks for: the service port and each side's private data.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct CmParams {
    /// The TCP port of the RDMA IP CM service the active side connects to (NVMe/RDMA: 4420,
    /// IANA's NVMe port). 1–65535.
    pub service_port: u16,
    /// The active side's private data, after the IP CM header in its REQ: at most
    /// [`IpCmHeader::CONSUMER_LEN`] (56) bytes.
    pub req_private: Vec<u8>,
    /// The passive side's private data in its REP: at most [`cm::REP_PRIVATE_LEN`] (196)
    /// bytes.
    pub rep_private: Vec<u8>,
}

impl CmParams {
    /// Checks every value; the error names the field and its allowed range.
    pub fn validate(&self) -> Result<(), WorldError> {
        if self.service_port == 0 {
            return Err(WorldError::Setup(
                "cm.service_port 0 is out of range: allowed 1–65535".into(),
            ));
        }
        if self.req_private.len() > IpCmHeader::CONSUMER_LEN {
            return Err(WorldError::Setup(format!(
                "cm.req_private is {} bytes: allowed 0–{} (92 of a REQ less the 36-byte IP CM header)",
                self.req_private.len(),
                IpCmHeader::CONSUMER_LEN
            )));
        }
        if self.rep_private.len() > cm::REP_PRIVATE_LEN {
            return Err(WorldError::Setup(format!(
                "cm.rep_private is {} bytes: allowed 0–{}",
                self.rep_private.len(),
                cm::REP_PRIVATE_LEN
            )));
        }
        Ok(())
    }
}

/// What each side learned from the exchange, as its CM event hands it to the consumer.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct CmConnected {
    /// The active side's endpoint.
    pub active: Endpoint,
    /// The passive side's endpoint.
    pub passive: Endpoint,
    /// The consumer private data the passive side read from the REQ (after the IP CM header).
    pub req_private: Vec<u8>,
    /// The private data the active side read from the REP.
    pub rep_private: Vec<u8>,
    /// How long the exchange took, from the active side's `rdma_connect` to the passive
    /// side's ESTABLISHED event.
    pub took: SimDuration,
}

/// The CM's state on every host: the MADs delivered to QP1 and not yet taken, and the
/// counters its IDs come from.
#[derive(Debug, Default)]
pub(super) struct CmWorld {
    /// (host, MAD bytes) in arrival order.
    inbox: Vec<(HostIx, Vec<u8>)>,
    /// Connections set up so far: the low half of each transaction ID and the
    /// communication IDs.
    next: u32,
    /// Each host's QP1 send PSN (24 bits), by host.
    gsi_psn: std::collections::BTreeMap<HostIx, u32>,
}

/// The QP1 receive path: a frame to QP1 is a MAD for the host's CM (`rx_in` hands it here).
impl super::State {
    pub(super) fn cm_deliver(&mut self, h: HostIx, mad: Vec<u8>) {
        self.cm.inbox.push((h, mad));
    }
}

/// The first PSN of a QP set up through the CM. Linux picks it at random
/// (`cma.c`: `get_random_u32() & 0xffffff`); here it is a fixed function of the host and the
/// QPN (an assumption standing in for the random draw, so runs stay deterministic).
fn starting_psn(host: HostIx, qpn: u32) -> u32 {
    (host.get().wrapping_mul(0x9e37_79b9) ^ qpn.wrapping_mul(0x85eb_ca6b)) & 0x00ff_ffff
}

/// The IPv4 address in the last four bytes of a RoCEv2 GID.
fn gid_ipv4(g: &[u8; 16]) -> Ipv4Address {
    Ipv4Address::new(g[12], g[13], g[14], g[15])
}

/// IB MTU code (1 = 256 ... 5 = 4096) of `m`.
fn mtu_code(m: verbs::types::Mtu) -> u8 {
    m.value()
}

fn mtu_from_code(code: u8) -> Result<verbs::types::Mtu, WorldError> {
    verbs::types::Mtu::ALL
        .into_iter()
        .find(|m| m.value() == code)
        .ok_or_else(|| WorldError::Setup(format!("RDMA-CM REQ path MTU code {code}: allowed 1–5")))
}

impl World {
    /// Creates a PD, a CQ and an RC QP on hosts `a` (the active side, the client) and `b`
    /// (the passive side, listening on `cm.service_port`) and connects them with RDMA-CM's
    /// REQ → REP → RTU on the wire (module docs): the QPs reach RTS with each other's QPN and
    /// starting PSN as the messages carried them. Every stage counts as setup.
    pub fn connect_rc_cm(
        &mut self,
        a: impl Into<HostIx>,
        b: impl Into<HostIx>,
        o: &RcOptions,
        cm: &CmParams,
    ) -> Result<CmConnected, WorldError> {
        let (a, b): (HostIx, HostIx) = (a.into(), b.into());
        cm.validate()?;
        if self.is_partitioned() {
            // The CM's inbox and MADs are not yet kept per partition (ARCHITECTURE §9).
            return Err(WorldError::Setup(
                "RDMA-CM connects hosts of a world on one thread: run with --threads 1".into(),
            ));
        }
        let [ea, eb] = self.in_parallel(|w| w.rc_endpoints_init(a, b, o, [None, None]))?;
        for h in [a, b] {
            self.state.hosts[h.index()].cpu.set_setup_mode(true);
        }
        let r = self.cm_exchange(ea, eb, o, cm);
        for h in [a, b] {
            self.state.hosts[h.index()].cpu.set_setup_mode(false);
        }
        r
    }

    fn cm_exchange(
        &mut self,
        ea: Endpoint,
        eb: Endpoint,
        o: &RcOptions,
        cm: &CmParams,
    ) -> Result<CmConnected, WorldError> {
        let start = self.now();
        let (a, b) = (ea.host, eb.host);
        self.state.cm.next = self.state.cm.next.wrapping_add(1);
        let n = self.state.cm.next;
        // ib_mad's transaction IDs: the agent's high 32 bits, a counter below.
        let tid = (u64::from(a.get()) + 1) << 32 | u64::from(n);
        let comm_id = |h: HostIx| (h.get() + 1) << 16 | (n & 0xffff);
        let psn_a = starting_psn(a, ea.qpn.get());
        let gid_a = self.local_gid(a).0;
        let gid_b = self.local_gid(b).0;
        let ip_cm = IpCmHeader {
            // The active side's port: rdma_cm binds an ephemeral one; the comm ID's low bits.
            src_port: 0xc000 | (n & 0x3fff) as u16,
            src_addr: gid_ipv4(&gid_a),
            dst_addr: gid_ipv4(&gid_b),
        };
        let private_data = ip_cm
            .private_data(&cm.req_private)
            .map_err(|e| WorldError::Setup(e.to_string()))?;
        let req = ReqRepr {
            local_comm_id: comm_id(a),
            service_id: cm::ip_cm_service_id(wire::Protocol::TCP, cm.service_port),
            local_ca_guid: ca_guid(a),
            local_qkey: 0,
            local_qpn: ea.qpn.get(),
            responder_resources: o.rd_atomic,
            initiator_depth: o.rd_atomic,
            // Linux cma.c CMA_CM_RESPONSE_TIMEOUT 20 (4.096 µs × 2^20 ≈ 4.3 s).
            remote_cm_response_timeout: 20,
            transport: cm::TransportService::Rc,
            end_to_end_flow_control: true,
            starting_psn: psn_a,
            local_cm_response_timeout: 20,
            retry_count: o.retry_cnt.min(7),
            pkey: wire::ib::DEFAULT_PKEY,
            path_mtu: mtu_code(o.mtu),
            rnr_retry_count: o.rnr_retry.min(7),
            // Linux cma.c CMA_MAX_CM_RETRIES 15.
            max_cm_retries: 15,
            srq: false,
            primary: PathRepr {
                // No LIDs on Ethernet: ib_cm writes the permissive LID for a routed path.
                local_lid: 0xffff,
                remote_lid: 0xffff,
                local_gid: gid_a,
                remote_gid: gid_b,
                flow_label: 0,
                packet_rate: 0,
                traffic_class: 0,
                hop_limit: 64,
                sl: 0,
                subnet_local: false,
                local_ack_timeout: o.timeout.min(31),
            },
            private_data,
        };
        // Active: rdma_connect.
        self.cm_send(a, b, &Message::Req(req), tid, true)?;
        // Passive: the REQ arrives; RTR from what it carries; rdma_accept sends the REP.
        let got = self.cm_receive(b, tid, "REQ")?;
        let Message::Req(req) = got else {
            return Err(cm_err("a REQ", &got));
        };
        if req.service_id != cm::ip_cm_service_id(wire::Protocol::TCP, cm.service_port) {
            return Err(WorldError::Setup(format!(
                "RDMA-CM REQ for service {:#018x}: host {b} listens on TCP port {}",
                req.service_id, cm.service_port
            )));
        }
        let (_, consumer) = IpCmHeader::parse(&req.private_data)
            .map_err(|e| WorldError::Setup(format!("RDMA-CM REQ private data: {e}")))?;
        let req_private = consumer[..cm.req_private.len()].to_vec();
        let resp_res = req.initiator_depth.min(o.rd_atomic);
        let init_depth = req.responder_resources.min(o.rd_atomic);
        self.rc_to_rtr(
            &eb,
            req.primary.local_gid,
            req.local_qpn,
            req.starting_psn,
            mtu_from_code(req.path_mtu)?,
            o,
            resp_res,
        )?;
        let psn_b = starting_psn(b, eb.qpn.get());
        let mut rep_pd = [0u8; cm::REP_PRIVATE_LEN];
        rep_pd[..cm.rep_private.len()].copy_from_slice(&cm.rep_private);
        let rep = RepRepr {
            local_comm_id: comm_id(b),
            remote_comm_id: req.local_comm_id,
            local_qkey: 0,
            local_qpn: eb.qpn.get(),
            starting_psn: psn_b,
            responder_resources: resp_res,
            initiator_depth: init_depth,
            // Linux cm.c: the device's ACK delay; an assumption (no figure): 15 (≈ 134 ms).
            target_ack_delay: 15,
            failover_accepted: 0,
            end_to_end_flow_control: true,
            rnr_retry_count: o.rnr_retry.min(7),
            srq: false,
            local_ca_guid: ca_guid(b),
            private_data: rep_pd,
        };
        self.cm_send(b, a, &Message::Rep(rep), tid, true)?;
        // Active: the REP arrives; RTR and RTS from it, then the kernel sends the RTU.
        let got = self.cm_receive(a, tid, "REP")?;
        let Message::Rep(rep) = got else {
            return Err(cm_err("a REP", &got));
        };
        if rep.remote_comm_id != req.local_comm_id {
            return Err(WorldError::Setup(format!(
                "RDMA-CM REP answers communication ID {:#x}, not the REQ's {:#x}",
                rep.remote_comm_id, req.local_comm_id
            )));
        }
        let rep_private = rep.private_data[..cm.rep_private.len()].to_vec();
        self.rc_to_rtr(
            &ea,
            gid_b,
            rep.local_qpn,
            rep.starting_psn,
            o.mtu,
            o,
            rep.initiator_depth.min(o.rd_atomic),
        )?;
        self.rc_to_rts(&ea, psn_a, o, rep.responder_resources.min(o.rd_atomic))?;
        let rtu = RtuRepr {
            local_comm_id: req.local_comm_id,
            remote_comm_id: rep.local_comm_id,
            private_data: [0; cm::RTU_PRIVATE_LEN],
        };
        self.cm_send(a, b, &Message::Rtu(rtu), tid, false)?;
        // Passive: the RTU arrives; RTS.
        let got = self.cm_receive(b, tid, "RTU")?;
        if !matches!(got, Message::Rtu(_)) {
            return Err(cm_err("an RTU", &got));
        }
        self.rc_to_rts(&eb, psn_b, o, init_depth)?;
        Ok(CmConnected {
            active: ea,
            passive: eb,
            req_private,
            rep_private,
            took: self.now() - start,
        })
    }

    /// Host `from`'s CM sends `msg` to `to`'s QP1: with `syscall`, inside a `write()` on the
    /// rdma_cm device (entry, the driver posting to QP1, exit); without, from the kernel (the
    /// driver's post only). The NIC fetches the WQE and the MAD behind the doorbell and passes
    /// its pipeline; then the frame goes to the port.
    fn cm_send(
        &mut self,
        from: HostIx,
        to: HostIx,
        msg: &Message,
        tid: u64,
        syscall: bool,
    ) -> Result<(), WorldError> {
        let mad = msg
            .to_mad(tid)
            .map_err(|e| WorldError::Setup(format!("RDMA-CM {}: {e}", msg.attribute().name())))?;
        let now = self.now();
        let host = &self.state.hosts[from.index()];
        let (sock, pcie, nic) = (host.profile.socket, host.profile.pcie, host.profile.nic);
        let app_ready = host.app_ready.max(now);
        let mut stages = Vec::new();
        if syscall {
            stages.push((Stage::WriteEntry, sock.syscall));
        }
        stages.push((Stage::DriverTx, sock.driver_tx.time(mad.len() as u64)));
        if syscall {
            stages.push((Stage::WriteExit, sock.syscall));
        }
        let mut end = app_ready;
        let mut posted = end;
        for (stage, cost) in stages {
            end = self.cm_cpu(from, APP_CORE, end, cost, stage);
            if stage == Stage::DriverTx {
                posted = end;
            }
        }
        self.state.hosts[from.index()].app_ready = end;
        // The doorbell's MMIO write, the NIC's DMA read of the WQE and the MAD, its pipeline.
        let leaves = posted + pcie.posted_write + pcie.dma_read_rtt + nic.pipeline;
        self.run_until(leaves, &Budget::UNLIMITED)?;
        let psn = {
            let p = self.state.cm.gsi_psn.entry(from).or_insert(0);
            let v = *p;
            *p = (v + 1) & 0x00ff_ffff;
            v
        };
        // The fabric carries the transport headers; the capture writes the link and IP ones.
        let frame = wire::RoceFrame::gsi_mad(
            wire::Link::new(wire::EthernetAddress([0; 6]), wire::EthernetAddress([0; 6])),
            wire::Ip::new(
                Ipv4Address(host_ip(from.get())),
                Ipv4Address(host_ip(to.get())),
            ),
            // rxe's QP1 source port: 0xc000 plus the QPN's hash (QP 1).
            0xc000 | 1,
            psn,
        );
        let hdr = RoceHeaders {
            bth: frame.bth,
            ext: frame.ext,
            udp_src_port: frame.udp_src_port,
        };
        let data = super::store_data(&mut self.state.pool, PoolData::Bytes(mad.to_vec()));
        let spec = super::rdma_tx::roce_spec(
            (from, wire::ib::mad::GSI_QP),
            (to, self.state.host_nodes[to.index()]),
            hdr,
            (wire::ib::mad::MAD_LEN as u32, data),
            (self.state.roce_priority, Ecn::Ect0),
            EtherType::Ipv4,
            super::rdma_tx::roce_ecmp_hash(from, to, frame.udp_src_port),
        );
        let node = self.state.hosts[from.index()].node;
        let sent = self.state.fabric.send(node, spec, &mut self.sched);
        if let Err(e) = sent {
            self.state.free_data(data);
            return Err(WorldError::Fabric(e));
        }
        Ok(())
    }

    /// Runs until host `h`'s QP1 holds a MAD of transaction `tid`, then charges its receipt
    /// (completion interrupt, driver RX, waking the CM event reader) and returns when the
    /// reader has it, with the message.
    fn cm_receive(&mut self, h: HostIx, tid: u64, what: &str) -> Result<Message, WorldError> {
        let budget = self.step_budget();
        self.run_until_cond(SimTime::MAX, &budget, |w| {
            w.state.cm.inbox.iter().any(|(to, _)| *to == h)
        })?;
        let Some(i) = self.state.cm.inbox.iter().position(|(to, _)| *to == h) else {
            return Err(WorldError::Setup(format!(
                "RDMA-CM {what} never reached host {h} (lost on the fabric? the CM's retransmission is not modelled)"
            )));
        };
        let (_, bytes) = self.state.cm.inbox.remove(i);
        let (hdr, msg) = Message::parse_mad(&bytes)
            .map_err(|e| WorldError::Setup(format!("RDMA-CM {what} at host {h}: {e}")))?;
        if hdr.transaction_id != tid {
            return Err(WorldError::Setup(format!(
                "RDMA-CM {what} at host {h} has transaction ID {:#x}, not {tid:#x}",
                hdr.transaction_id
            )));
        }
        let now = self.now();
        let host = &self.state.hosts[h.index()];
        let (sock, ctl) = (host.profile.socket, host.profile.control);
        let mut end = self.cm_cpu(
            h,
            SOFTIRQ_CORE,
            now,
            ctl.interrupt,
            Stage::CompletionInterrupt,
        );
        end = self.cm_cpu(
            h,
            SOFTIRQ_CORE,
            end,
            sock.driver_rx.time(bytes.len() as u64),
            Stage::DriverRx,
        );
        end = self.cm_cpu(h, APP_CORE, end, ctl.wakeup, Stage::WakeUp);
        end = self.cm_cpu(h, APP_CORE, end, sock.syscall, Stage::WriteExit);
        self.state.hosts[h.index()].app_ready = end;
        self.run_until(end, &Budget::UNLIMITED)?;
        Ok(msg)
    }

    /// One kernel stage of the CM on host `h`'s `core`, ready at `ready`; returns its end.
    fn cm_cpu(
        &mut self,
        h: HostIx,
        core: u16,
        ready: SimTime,
        cost: SimDuration,
        stage: Stage,
    ) -> SimTime {
        let now = self.now();
        let host = &mut self.state.hosts[h.index()];
        host.cpu
            .run(
                &mut self.state.tracer,
                now,
                CpuWork {
                    core,
                    ready,
                    cost,
                    stage,
                    setup: true,
                },
            )
            .1
    }
}

/// A CA GUID for host `h`: an EUI-64 made from a locally administered MAC (02:00:00 then
/// the host), as a NIC's node GUID is made from its MAC.
fn ca_guid(h: HostIx) -> u64 {
    0x0200_00ff_fe00_0000 | u64::from(h.get() & 0x00ff_ffff)
}

fn cm_err(want: &str, got: &Message) -> WorldError {
    WorldError::Setup(format!(
        "RDMA-CM: expected {want}, got a {}",
        got.attribute().name()
    ))
}
