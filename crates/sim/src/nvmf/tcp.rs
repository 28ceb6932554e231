//! NVMe/TCP's initiator and target over the World's kernel TCP sockets.
//!
//! Read first: NVMe over TCP 1.0 §3.3–§3.6 (a command capsule PDU per command; a read's data
//! in C2HData, then a CapsuleResp; a write's data in-capsule up to the controller's size, or
//! on the controller's R2T in H2CData) and Linux `drivers/nvme/target/tcp.c` (the default
//! in-capsule size, 4 × PAGE_SIZE).
//!
//! Each side is an application thread on core 0 reading its socket with blocking `read()`s
//! (the host model charges the syscall, the copy, the interrupt and the wake-up when data
//! arrives for a blocked reader) and writing PDUs with `write()`. PDUs are real bytes on the
//! stream, parsed back from it; data bytes are zeros (their digests are computed over them).

use super::FioConfig;
use super::capsule::{CommandRepr, CompletionRepr, DataPtr, IoOpcode};
use super::costs;
use super::device::DeviceCmd;
use super::pdu::{self, DataHeader, Digests, Pdu, R2tHeader};
use super::run::{Action, Job, Run, TARGET};
use super::workload::IoSpec;
use crate::world::{SocketId, TcpOptions, World, WorldError};
use units::SimDuration;

/// One end of a connection.
#[derive(Clone, Debug)]
struct End {
    host: u32,
    sock: SocketId,
    /// Bytes read and not yet parsed into whole PDUs.
    rx: Vec<u8>,
    /// Bytes the send buffer has not taken yet.
    out: Vec<u8>,
    /// A read is scheduled for when the reader wakes.
    scheduled: bool,
}

/// One I/O queue: a TCP connection.
#[derive(Clone, Debug)]
struct Queue {
    init: End,
    tgt: End,
    /// The target's view of each slot's command.
    cmds: Vec<Option<CommandRepr>>,
}

/// Every queue of the run.
pub(super) struct Tcp {
    queues: Vec<Queue>,
    dg: Digests,
    inline: u32,
    zeros: Vec<u8>,
    buf: Vec<u8>,
}

fn err(e: impl std::fmt::Display) -> WorldError {
    WorldError::Setup(e.to_string())
}

impl End {
    fn wants(&self, w: &World) -> bool {
        (!self.scheduled && w.tcp_bytes_readable(self.sock) > 0)
            || (!self.out.is_empty() && w.tcp_writable(self.sock) > 0)
    }
}

impl Tcp {
    /// Opens one connection per job, each side's reader blocked in `read()`.
    pub(super) fn connect(w: &mut World, cfg: &FioConfig, jobs: &[Job]) -> Result<Tcp, WorldError> {
        let mut queues = Vec::new();
        let opts = TcpOptions::default();
        for job in jobs {
            let (a, b) = w.tcp_connect(job.host, TARGET, &opts)?;
            let end = |host, sock| End {
                host,
                sock,
                rx: Vec::new(),
                out: Vec::new(),
                scheduled: false,
            };
            w.tcp_read(job.host, a, &mut []);
            w.tcp_read(TARGET, b, &mut []);
            queues.push(Queue {
                init: end(job.host, a),
                tgt: end(TARGET, b),
                cmds: vec![None; cfg.iodepth as usize],
            });
        }
        Ok(Tcp {
            queues,
            dg: cfg.digests,
            inline: cfg.inline_bytes,
            zeros: vec![0; cfg.bs as usize],
            buf: vec![0; 1 << 16],
        })
    }

    /// Whether a reader has bytes coming or a writer has room.
    pub(super) fn ready(&self, w: &World) -> bool {
        self.queues
            .iter()
            .any(|q| q.init.wants(w) || q.tgt.wants(w))
    }

    fn end(&mut self, j: usize, target: bool) -> &mut End {
        let q = &mut self.queues[j];
        if target { &mut q.tgt } else { &mut q.init }
    }

    /// Schedules the reads of woken readers and flushes writers with room.
    pub(super) fn poll(&mut self, run: &mut Run) -> Result<(), WorldError> {
        let now = run.w.now();
        for j in 0..self.queues.len() {
            for target in [false, true] {
                let e = self.end(j, target);
                if !e.scheduled && run.w.tcp_bytes_readable(e.sock) > 0 {
                    e.scheduled = true;
                    let at = run.w.tcp_ready_at(e.sock).max(now);
                    run.later(at, Action::ReadSock { conn: j, target });
                }
                self.flush(run, j, target);
            }
        }
        Ok(())
    }

    fn flush(&mut self, run: &mut Run, j: usize, target: bool) {
        let e = self.end(j, target);
        if e.out.is_empty() || run.w.tcp_writable(e.sock) == 0 {
            return;
        }
        let n = run.w.tcp_write(e.host, e.sock, &e.out);
        e.out.drain(..n);
    }

    fn send(&mut self, run: &mut Run, j: usize, target: bool, p: &Pdu, data_len: usize) {
        let dg = self.dg;
        let zeros = std::mem::take(&mut self.zeros);
        let e = self.end(j, target);
        pdu::emit(p, &zeros[..data_len], dg, &mut e.out);
        self.zeros = zeros;
        self.flush(run, j, target);
    }

    /// The initiator sends slot `slot`'s CapsuleCmd (with the data of a small write).
    pub(super) fn send_command(
        &mut self,
        run: &mut Run,
        job: usize,
        slot: usize,
        io: IoSpec,
    ) -> Result<(), WorldError> {
        let inline = io.in_capsule(self.inline);
        let cmd = io.command(slot as u16, self.inline, DataPtr::Transport { len: io.len });
        let data_len = if inline { io.len } else { 0 };
        self.send(
            run,
            job,
            false,
            &Pdu::CapsuleCmd { cmd, data_len },
            data_len as usize,
        );
        Ok(())
    }

    /// A woken reader reads everything there is and handles each whole PDU.
    pub(super) fn read_sock(
        &mut self,
        run: &mut Run,
        j: usize,
        target: bool,
    ) -> Result<(), WorldError> {
        let mut buf = std::mem::take(&mut self.buf);
        let mut got = 0;
        {
            let e = self.end(j, target);
            e.scheduled = false;
            loop {
                let n = run.w.tcp_read(e.host, e.sock, &mut buf);
                if n == 0 {
                    break;
                }
                got += n;
                e.rx.extend_from_slice(&buf[..n]);
            }
            if got == 0 && run.w.tcp_bytes_readable(e.sock) > 0 {
                // Not woken yet after all: try again when it is.
                e.scheduled = true;
                let at = run
                    .w
                    .tcp_ready_at(e.sock)
                    .max(run.w.now() + SimDuration::from_ns(1));
                run.later(at, Action::ReadSock { conn: j, target });
            }
        }
        self.buf = buf;
        loop {
            let e = self.end(j, target);
            let Some(p) = pdu::parse(&e.rx).map_err(err)? else {
                break;
            };
            e.rx.drain(..p.len);
            if target {
                self.target_pdu(run, j, p.pdu)?;
            } else {
                self.initiator_pdu(run, j, p.pdu)?;
            }
        }
        Ok(())
    }

    fn initiator_pdu(&mut self, run: &mut Run, j: usize, p: Pdu) -> Result<(), WorldError> {
        match p {
            // The data was copied to the IO's buffer by the read.
            Pdu::C2HData(_) => {}
            Pdu::CapsuleResp(r) => {
                let slot = r.cid as usize;
                run.complete(j, slot);
                if let Some((io, _)) = run.issue(j, slot) {
                    self.send_command(run, j, slot, io)?;
                }
            }
            Pdu::R2T(r) => {
                let d = DataHeader {
                    cccid: r.cccid,
                    ttag: r.ttag,
                    offset: r.offset,
                    len: r.len,
                    last: true,
                    success: false,
                };
                self.send(run, j, false, &Pdu::H2CData(d), r.len as usize);
            }
            other => {
                return Err(err(format!(
                    "the initiator got an unexpected {:?}",
                    other.pdu_type()
                )));
            }
        }
        Ok(())
    }

    fn target_pdu(&mut self, run: &mut Run, j: usize, p: Pdu) -> Result<(), WorldError> {
        match p {
            Pdu::CapsuleCmd { cmd, data_len } => {
                let (_, ready) =
                    run.w
                        .app_work(TARGET, costs::TARGET_SUBMIT, engine::Stage::NvmetSubmit);
                let cid = cmd.cid as usize;
                *self.queues[j]
                    .cmds
                    .get_mut(cid)
                    .ok_or_else(|| err("command identifier beyond the queue"))? = Some(cmd);
                if cmd.opcode == IoOpcode::Write && data_len == 0 {
                    let r = R2tHeader {
                        cccid: cmd.cid,
                        ttag: cmd.cid,
                        offset: 0,
                        len: cmd.data.len(),
                    };
                    self.send(run, j, true, &Pdu::R2T(r), 0);
                } else {
                    run.device.submit(
                        ready,
                        DeviceCmd {
                            tag: Run::tag(j, cid),
                            op: cmd.opcode,
                            bytes: cmd.data.len(),
                        },
                    );
                }
            }
            Pdu::H2CData(d) => {
                let cmd = self.queues[j].cmds[d.cccid as usize]
                    .ok_or_else(|| err("H2CData for no command"))?;
                if d.last {
                    let now = run.w.now();
                    run.device.submit(
                        now,
                        DeviceCmd {
                            tag: Run::tag(j, d.cccid as usize),
                            op: cmd.opcode,
                            bytes: cmd.data.len(),
                        },
                    );
                }
            }
            other => {
                return Err(err(format!(
                    "the target got an unexpected {:?}",
                    other.pdu_type()
                )));
            }
        }
        Ok(())
    }

    /// The device completed queue `j`'s command `cid`: C2HData for a read, then CapsuleResp.
    pub(super) fn device_done(
        &mut self,
        run: &mut Run,
        j: usize,
        cid: usize,
    ) -> Result<(), WorldError> {
        run.w
            .app_work(TARGET, costs::TARGET_COMPLETE, engine::Stage::NvmetComplete);
        let cmd = self.queues[j].cmds[cid].ok_or_else(|| err("completion for no command"))?;
        if cmd.opcode == IoOpcode::Read {
            let d = DataHeader {
                cccid: cmd.cid,
                ttag: 0,
                offset: 0,
                len: cmd.data.len(),
                last: true,
                success: false,
            };
            self.send(run, j, true, &Pdu::C2HData(d), d.len as usize);
        }
        let r = CompletionRepr {
            result: 0,
            sq_head: cid as u16,
            sq_id: j as u16 + 1,
            cid: cmd.cid,
            status: 0,
        };
        self.send(run, j, true, &Pdu::CapsuleResp(r), 0);
        Ok(())
    }
}
