//! NVMe/RDMA's initiator and target over RC QPs.
//!
//! Read first: NVMe over Fabrics 1.1 §7.3 (RDMA transport: capsules by SEND, data by the
//! controller's RDMA READ and WRITE with the host's keyed SGL), Linux
//! `drivers/nvme/host/rdma.c` (`nvme_rdma_map_data`: in-capsule data for writes up to the
//! controller's IOCCSZ, keyed SGL otherwise) and `drivers/nvme/target/rdma.c`
//! (`nvmet_rdma_handle_command`, `nvmet_rdma_queue_response`: the RDMA WRITE of a read's data
//! is chained before the response SEND; a write's data is fetched with RDMA READ first).
//!
//! Per queue (one job): the initiator owns a real-bytes command buffer (64 B per slot), a
//! response buffer (16 B per receive) and a synthetic data buffer (`bs` per slot) registered
//! for remote read and write; the target owns receive buffers (64 B + the inline size per
//! receive), response buffers and a synthetic data buffer. Command identifier = slot.

use super::FioConfig;
use super::capsule::{CQE_BYTES, CommandRepr, CompletionRepr, DataPtr, IoOpcode, SQE_BYTES};
use super::costs;
use super::device::DeviceCmd;
use super::run::{Job, Run, TARGET};
use super::workload::IoSpec;
use crate::world::{CmParams, Endpoint, RcOptions, World, WorldError};
use verbs::AccessFlags;
use verbs::wr::{RecvWr, SendWr, Sge};

/// The NVMe/RDMA subsystem port the host's RDMA-CM connects to.
/// source: IANA service names, "nvme" 4420 (NVMe over Fabrics; the RDMA IP CM service port
/// Linux's `NVME_RDMA_IP_PORT` names).
pub const NVME_RDMA_PORT: u16 = 4420;

/// The host's RDMA-CM REQ private data for an NVMe queue (NVMe-oF 1.1 §7.3, the RDMA_CM_REQUEST private data; Linux
/// `struct nvme_rdma_cm_req`): record format 0, the queue ID, the host's receive queue size
/// and its send queue size (0's based), the controller ID; 32 bytes, little-endian.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct CmReqPrivate {
    /// Queue ID: 0 the admin queue, 1.. the I/O queues.
    pub qid: u16,
    /// RDMA QP host receive queue size (entries).
    pub hrqsize: u16,
    /// RDMA QP host send queue size, 0's based.
    pub hsqsize: u16,
    /// Controller ID (0 here: the admin queue's Connect that assigns it is not modelled).
    pub cntlid: u16,
}

impl CmReqPrivate {
    /// Its 32 bytes.
    pub fn to_bytes(self) -> [u8; 32] {
        let mut b = [0u8; 32];
        b[2..4].copy_from_slice(&self.qid.to_le_bytes());
        b[4..6].copy_from_slice(&self.hrqsize.to_le_bytes());
        b[6..8].copy_from_slice(&self.hsqsize.to_le_bytes());
        b[8..10].copy_from_slice(&self.cntlid.to_le_bytes());
        b
    }

    /// Reads it back; `None` unless 32 bytes of record format 0.
    pub fn parse(b: &[u8]) -> Option<CmReqPrivate> {
        let b: &[u8; 32] = b.get(..32)?.try_into().ok()?;
        let le = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        (le(0) == 0).then(|| CmReqPrivate {
            qid: le(2),
            hrqsize: le(4),
            hsqsize: le(6),
            cntlid: le(8),
        })
    }
}

/// The controller's RDMA-CM REP private data (NVMe-oF 1.1 §7.3, the RDMA_CM_ACCEPT private data; Linux `struct
/// nvme_rdma_cm_rep`): record format 0 and its receive queue size; 32 bytes, little-endian.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct CmRepPrivate {
    /// RDMA QP controller receive queue size (entries).
    pub crqsize: u16,
}

impl CmRepPrivate {
    /// Its 32 bytes.
    pub fn to_bytes(self) -> [u8; 32] {
        let mut b = [0u8; 32];
        b[2..4].copy_from_slice(&self.crqsize.to_le_bytes());
        b
    }
}

/// Work request kinds, in the top bits of a wr_id.
const CMD_SEND: u64 = 1;
const RSP_RECV: u64 = 2;
const CMD_RECV: u64 = 3;
const DATA_READ: u64 = 4;
const DATA_WRITE: u64 = 5;
const RSP_SEND: u64 = 6;

fn wr_id(kind: u64, i: usize) -> u64 {
    (kind << 32) | i as u64
}

#[derive(Clone, Copy, Debug)]
struct Buf {
    va: u64,
    lkey: u32,
    rkey: u32,
}

/// One I/O queue: a QP pair and its buffers.
#[derive(Clone, Debug)]
struct Queue {
    init: Endpoint,
    tgt: Endpoint,
    cmd: Buf,
    rsp: Buf,
    data: Buf,
    rcv: Buf,
    out: Buf,
    tdata: Buf,
    /// The target's view of each slot's command.
    cmds: Vec<Option<CommandRepr>>,
}

/// Every queue of the run.
pub(super) struct Rdma {
    queues: Vec<Queue>,
    bs: u64,
    rcv_slot: u64,
    inline: u32,
}

fn err(e: impl std::fmt::Display) -> WorldError {
    WorldError::Setup(e.to_string())
}

fn cq_has(w: &World, e: &Endpoint) -> bool {
    w.host(e.host).verbs.cq(e.cq).is_some_and(|q| !q.is_empty())
}

impl Rdma {
    /// Connects one QP pair per job and posts every receive.
    pub(super) fn connect(
        w: &mut World,
        cfg: &FioConfig,
        jobs: &[Job],
    ) -> Result<Rdma, WorldError> {
        let qd = cfg.iodepth as u64;
        let o = RcOptions {
            cap: verbs::qp::QpCap {
                max_send_wr: (2 * qd + 16) as u32,
                max_recv_wr: (qd + 16) as u32,
                max_send_sge: 4,
                max_recv_sge: 4,
                max_inline_data: 256,
            },
            cqe: (4 * qd + 64) as u32,
            ..RcOptions::default()
        };
        let bs = cfg.bs as u64;
        let rcv_slot = (SQE_BYTES as u64 + cfg.inline_bytes as u64).next_multiple_of(64);
        let mut queues = Vec::new();
        let local = AccessFlags::LOCAL_WRITE;
        let remote =
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ | AccessFlags::REMOTE_WRITE;
        for (j, job) in jobs.iter().enumerate() {
            // NVMe/RDMA connects each queue through RDMA-CM to the subsystem's port, the
            // queue's ID and sizes in the REQ, the controller's receive queue size in the REP.
            let qid = u16::try_from(j + 1).map_err(err)?;
            let depth = u16::try_from(cfg.iodepth).map_err(err)?;
            let req = CmReqPrivate {
                qid,
                hrqsize: depth,
                hsqsize: depth - 1,
                cntlid: 0,
            };
            let params = CmParams {
                service_port: NVME_RDMA_PORT,
                req_private: req.to_bytes().to_vec(),
                rep_private: CmRepPrivate { crqsize: depth }.to_bytes().to_vec(),
            };
            let c = w.connect_rc_cm(job.host, TARGET, &o, &params)?;
            // The target takes the queue from what the REQ carried.
            let got = CmReqPrivate::parse(&c.req_private).ok_or_else(|| {
                WorldError::Setup(
                    "NVMe/RDMA: the CM REQ's private data is not an nvme_rdma_cm_req".into(),
                )
            })?;
            if got != req {
                return Err(WorldError::Setup(format!(
                    "NVMe/RDMA: the target read {got:?} from the CM REQ, the host sent {req:?}"
                )));
            }
            let (init, tgt) = (c.active, c.passive);
            let real = |w: &mut World, e: &Endpoint, len: u64| -> Result<Buf, WorldError> {
                let va = w.verbs(e.host).memory_mut().alloc(len).map_err(err)?;
                let mr = w.reg_mr(e.host, e.pd, va, len, local).map_err(err)?;
                Ok(Buf {
                    va,
                    lkey: mr.lkey,
                    rkey: mr.rkey,
                })
            };
            let cmd = real(w, &init, qd * SQE_BYTES as u64)?;
            let rsp = real(w, &init, qd * CQE_BYTES as u64)?;
            let rcv = real(w, &tgt, qd * rcv_slot)?;
            let out = real(w, &tgt, qd * CQE_BYTES as u64)?;
            let synth = |w: &mut World, e: &Endpoint, seed: u64| -> Result<Buf, WorldError> {
                let va = w
                    .verbs(e.host)
                    .memory_mut()
                    .alloc_synthetic(qd * bs, seed)
                    .map_err(err)?;
                let mr = w.reg_mr(e.host, e.pd, va, qd * bs, remote).map_err(err)?;
                Ok(Buf {
                    va,
                    lkey: mr.lkey,
                    rkey: mr.rkey,
                })
            };
            let data = synth(w, &init, cfg.seed ^ (2 * j as u64 + 1))?;
            let tdata = synth(w, &tgt, cfg.seed ^ (2 * j as u64 + 2))?;
            let q = Queue {
                init,
                tgt,
                cmd,
                rsp,
                data,
                rcv,
                out,
                tdata,
                cmds: vec![None; qd as usize],
            };
            for i in 0..qd as usize {
                post_recv(
                    w,
                    &q.init,
                    wr_id(RSP_RECV, i),
                    q.rsp,
                    i as u64 * CQE_BYTES as u64,
                    CQE_BYTES as u32,
                )?;
                post_recv(
                    w,
                    &q.tgt,
                    wr_id(CMD_RECV, i),
                    q.rcv,
                    i as u64 * rcv_slot,
                    rcv_slot as u32,
                )?;
            }
            queues.push(q);
        }
        Ok(Rdma {
            queues,
            bs,
            rcv_slot,
            inline: cfg.inline_bytes,
        })
    }

    /// Whether a CQ holds a completion for an application to reap.
    pub(super) fn ready(&self, w: &World) -> bool {
        self.queues
            .iter()
            .any(|q| cq_has(w, &q.init) || cq_has(w, &q.tgt))
    }

    /// The initiator sends slot `slot`'s command capsule.
    pub(super) fn send_command(
        &mut self,
        run: &mut Run,
        job: usize,
        slot: usize,
        io: IoSpec,
    ) -> Result<(), WorldError> {
        let q = &self.queues[job];
        let inline = io.in_capsule(self.inline);
        let data_va = q.data.va + slot as u64 * self.bs;
        let cmd = io.command(
            slot as u16,
            self.inline,
            DataPtr::Keyed {
                addr: data_va,
                len: io.len,
                key: q.data.rkey,
            },
        );
        let mut b = [0u8; SQE_BYTES];
        cmd.emit(&mut b);
        let at = q.cmd.va + (slot * SQE_BYTES) as u64;
        let h = q.init.host;
        run.w.verbs(h).memory_mut().write(at, &b).map_err(err)?;
        let mut sges = vec![Sge {
            addr: at,
            length: SQE_BYTES as u32,
            lkey: q.cmd.lkey,
        }];
        if inline {
            sges.push(Sge {
                addr: data_va,
                length: io.len,
                lkey: q.data.lkey,
            });
        }
        run.w
            .post_send(
                h,
                q.init.qpn,
                &[SendWr::send(wr_id(CMD_SEND, slot), sges).signaled()],
            )
            .map_err(err)?;
        Ok(())
    }

    /// Reaps every CQ that holds completions and acts on them.
    pub(super) fn poll(&mut self, run: &mut Run) -> Result<(), WorldError> {
        for j in 0..self.queues.len() {
            while cq_has(&run.w, &self.queues[j].init) {
                let q = &self.queues[j];
                let wcs = run.w.poll_cq(q.init.host, q.init.cq, 32).map_err(err)?;
                for wc in wcs {
                    check(&wc)?;
                    if wc.wr_id >> 32 != RSP_RECV {
                        continue;
                    }
                    let i = (wc.wr_id & 0xffff_ffff) as usize;
                    let q = &self.queues[j];
                    let mut b = [0u8; CQE_BYTES];
                    let at = q.rsp.va + (i * CQE_BYTES) as u64;
                    run.w
                        .verbs_ref(q.init.host)
                        .memory()
                        .read(at, &mut b)
                        .map_err(err)?;
                    let r = CompletionRepr::parse(&b).map_err(err)?;
                    post_recv(
                        &mut run.w,
                        &q.init,
                        wc.wr_id,
                        q.rsp,
                        (i * CQE_BYTES) as u64,
                        CQE_BYTES as u32,
                    )?;
                    run.complete(j, r.cid as usize);
                    if let Some((io, _)) = run.issue(j, r.cid as usize) {
                        self.send_command(run, j, r.cid as usize, io)?;
                    }
                }
            }
            while cq_has(&run.w, &self.queues[j].tgt) {
                let q = &self.queues[j];
                let wcs = run.w.poll_cq(TARGET, q.tgt.cq, 32).map_err(err)?;
                for wc in wcs {
                    check(&wc)?;
                    let i = (wc.wr_id & 0xffff_ffff) as usize;
                    match wc.wr_id >> 32 {
                        CMD_RECV => self.target_command(run, j, i)?,
                        DATA_READ => {
                            let cmd =
                                self.queues[j].cmds[i].ok_or_else(|| err("READ for no command"))?;
                            let now = run.w.now();
                            run.device.submit(
                                now,
                                DeviceCmd {
                                    tag: Run::tag(j, i),
                                    op: cmd.opcode,
                                    bytes: cmd.data.len(),
                                },
                            );
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }

    /// The target takes the command in receive `i` of queue `j`.
    fn target_command(&mut self, run: &mut Run, j: usize, i: usize) -> Result<(), WorldError> {
        let q = &self.queues[j];
        let at = q.rcv.va + i as u64 * self.rcv_slot;
        let mut b = [0u8; SQE_BYTES];
        run.w
            .verbs_ref(TARGET)
            .memory()
            .read(at, &mut b)
            .map_err(err)?;
        let cmd = CommandRepr::parse(&b).map_err(err)?;
        post_recv(
            &mut run.w,
            &q.tgt,
            wr_id(CMD_RECV, i),
            q.rcv,
            i as u64 * self.rcv_slot,
            self.rcv_slot as u32,
        )?;
        let (_, ready) = run
            .w
            .app_work(TARGET, costs::TARGET_SUBMIT, engine::Stage::NvmetSubmit);
        let cid = cmd.cid as usize;
        self.queues[j].cmds[cid] = Some(cmd);
        let q = &self.queues[j];
        match (cmd.opcode, cmd.data) {
            (IoOpcode::Write, DataPtr::Keyed { addr, len, key }) => {
                // Fetch the host's data first.
                let sge = vec![Sge {
                    addr: q.tdata.va + cid as u64 * self.bs,
                    length: len,
                    lkey: q.tdata.lkey,
                }];
                run.w
                    .post_send(
                        TARGET,
                        q.tgt.qpn,
                        &[SendWr::read(wr_id(DATA_READ, cid), sge, addr, key).signaled()],
                    )
                    .map_err(err)?;
            }
            _ => run.device.submit(
                ready,
                DeviceCmd {
                    tag: Run::tag(j, cid),
                    op: cmd.opcode,
                    bytes: cmd.data.len(),
                },
            ),
        }
        Ok(())
    }

    /// The device completed queue `j`'s command `cid`: the target returns data and response.
    pub(super) fn device_done(
        &mut self,
        run: &mut Run,
        j: usize,
        cid: usize,
    ) -> Result<(), WorldError> {
        run.w
            .app_work(TARGET, costs::TARGET_COMPLETE, engine::Stage::NvmetComplete);
        let q = &self.queues[j];
        let cmd = q.cmds[cid].ok_or_else(|| err("completion for no command"))?;
        let r = CompletionRepr {
            result: 0,
            sq_head: cid as u16,
            sq_id: j as u16 + 1,
            cid: cmd.cid,
            status: 0,
        };
        let mut b = [0u8; CQE_BYTES];
        r.emit(&mut b);
        let at = q.out.va + (cid * CQE_BYTES) as u64;
        run.w
            .verbs(TARGET)
            .memory_mut()
            .write(at, &b)
            .map_err(err)?;
        let rsp = SendWr::send(
            wr_id(RSP_SEND, cid),
            vec![Sge {
                addr: at,
                length: CQE_BYTES as u32,
                lkey: q.out.lkey,
            }],
        )
        .signaled();
        let mut wrs = Vec::with_capacity(2);
        if let (IoOpcode::Read, DataPtr::Keyed { addr, len, key }) = (cmd.opcode, cmd.data) {
            let sge = vec![Sge {
                addr: q.tdata.va + cid as u64 * self.bs,
                length: len,
                lkey: q.tdata.lkey,
            }];
            wrs.push(SendWr::write(wr_id(DATA_WRITE, cid), sge, addr, key).signaled());
        }
        wrs.push(rsp);
        run.w.post_send(TARGET, q.tgt.qpn, &wrs).map_err(err)?;
        Ok(())
    }
}

fn check(wc: &verbs::Wc) -> Result<(), WorldError> {
    if wc.status != verbs::WcStatus::Success {
        return Err(err(format!(
            "NVMe/RDMA work request {:#x} completed with {:?}",
            wc.wr_id, wc.status
        )));
    }
    Ok(())
}

fn post_recv(
    w: &mut World,
    e: &Endpoint,
    id: u64,
    buf: Buf,
    off: u64,
    len: u32,
) -> Result<(), WorldError> {
    let sge = vec![Sge {
        addr: buf.va + off,
        length: len,
        lkey: buf.lkey,
    }];
    w.post_recv(e.host, e.qpn, &[RecvWr::new(id, sge)])
        .map_err(err)?;
    Ok(())
}
