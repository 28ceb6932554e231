//! Output files that are never half-written and never replace what is not theirs.
//!
//! Every file rdmalab writes (a sweep's CSV, a pcap, JSON Lines, a chart, a host profile) goes
//! through [`Output`]:
//!
//! - A path that does not exist, or names a regular file, is written to a temporary file in the
//!   same directory (`.NAME.rdmalab-partial`) and renamed over the target only by
//!   [`Output::commit`], after the data is flushed and synced. A run that fails, panics or is
//!   killed never leaves a cut-off file under the final name. The temporary name is fixed per
//!   target, so a leftover from a killed run is found and replaced by the next run that writes
//!   the same target, and [`Output`]'s `Drop` removes it when a run fails.
//! - A symbolic link is followed: its target is replaced atomically and the link stays a link.
//!   A dangling link is refused (there is no file to replace and nowhere sure to create one).
//! - A FIFO, a character device or a socket (`/dev/stdout`, a named pipe, `/dev/null`) is written
//!   through, in place: renaming over it would replace the node with a regular file. A write
//!   error there (`/dev/full`) is reported with the path.
//! - A directory or a block device is refused with a message naming the path.
//!
//! What a test can observe of the model's simplifications: a kill between two writes of a
//! written-through FIFO leaves whatever the reader already read (there is nothing to roll back).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Why an output cannot be opened or finished; every message names the path.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The target is a directory, a block device or a dangling link.
    #[error("{path}: {why}")]
    Refused {
        /// The path as the user gave it.
        path: String,
        /// What it is and why it is not written.
        why: &'static str,
    },
    /// An I/O error creating, writing, syncing or renaming.
    #[error("{path}: {source}")]
    Io {
        /// The path as the user gave it.
        path: String,
        /// The error.
        #[source]
        source: io::Error,
    },
}

impl OutputError {
    fn io(path: &Path, source: io::Error) -> OutputError {
        OutputError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// One output file, opened by [`Output::create`] and made visible by [`Output::commit`].
#[derive(Debug)]
pub struct Output {
    /// The path the user gave (for messages).
    shown: PathBuf,
    file: File,
    mode: Mode,
}

#[derive(Debug)]
enum Mode {
    /// Written to `tmp`, renamed to `target` on commit; `tmp` removed on drop.
    Atomic {
        tmp: PathBuf,
        target: PathBuf,
        committed: bool,
    },
    /// Written in place (a FIFO, a character device, a socket).
    Through,
}

impl Output {
    /// Opens `path` for writing as the module doc describes.
    pub fn create(path: &Path) -> Result<Output, OutputError> {
        let refuse = |why| OutputError::Refused {
            path: path.display().to_string(),
            why,
        };
        let target = match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => path.to_path_buf(),
            Err(e) => return Err(OutputError::io(path, e)),
            Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(path) {
                Ok(t) => t,
                Err(_) => return Err(refuse("a symbolic link to nothing (not followed)")),
            },
            Ok(_) => path.to_path_buf(),
        };
        match std::fs::metadata(&target) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(OutputError::io(path, e)),
            Ok(m) if m.is_dir() => return Err(refuse("a directory (give a file name)")),
            Ok(m) if m.is_file() => {}
            Ok(m) => {
                use std::os::unix::fs::FileTypeExt as _;
                let t = m.file_type();
                if t.is_block_device() {
                    return Err(refuse("a block device (not written)"));
                }
                // A FIFO, character device or socket: write through.
                let file = OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .map_err(|e| OutputError::io(path, e))?;
                return Ok(Output {
                    shown: path.to_path_buf(),
                    file,
                    mode: Mode::Through,
                });
            }
        }
        let tmp = partial_path(&target);
        // A leftover of an earlier run that was killed: it is ours to replace.
        let _ = std::fs::remove_file(&tmp);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| OutputError::io(path, e))?;
        Ok(Output {
            shown: path.to_path_buf(),
            file,
            mode: Mode::Atomic {
                tmp,
                target,
                committed: false,
            },
        })
    }

    /// Checks that `path` can be written, as [`Output::create`] would write it, and leaves
    /// nothing behind: for commands that run long before they write (a sweep). A FIFO or
    /// device is not opened (opening a FIFO waits for its reader).
    pub fn probe(path: &Path) -> Result<(), OutputError> {
        use std::os::unix::fs::FileTypeExt as _;
        if let Ok(m) = std::fs::metadata(path) {
            let t = m.file_type();
            if t.is_fifo() || t.is_char_device() || t.is_socket() {
                return Ok(());
            }
        }
        Output::create(path).map(drop)
    }

    /// A buffered writer onto the file (a second handle: the writer may be handed to a
    /// simulation while this `Output` waits to be committed). Flush it before [`commit`].
    ///
    /// [`commit`]: Output::commit
    pub fn writer(&self) -> Result<OutputWriter, OutputError> {
        let f = self
            .file
            .try_clone()
            .map_err(|e| OutputError::io(&self.shown, e))?;
        Ok(OutputWriter {
            inner: io::BufWriter::with_capacity(1 << 16, f),
            path: self.shown.clone(),
        })
    }

    /// Writes all of `bytes` (for outputs built in memory, such as a CSV).
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), OutputError> {
        self.file
            .write_all(bytes)
            .map_err(|e| OutputError::io(&self.shown, e))
    }

    /// Syncs the data and renames the temporary file over the target.
    pub fn commit(mut self) -> Result<(), OutputError> {
        self.file
            .flush()
            .map_err(|e| OutputError::io(&self.shown, e))?;
        if let Mode::Atomic {
            tmp,
            target,
            committed,
        } = &mut self.mode
        {
            self.file
                .sync_all()
                .map_err(|e| OutputError::io(&self.shown, e))?;
            std::fs::rename(&*tmp, &*target).map_err(|e| OutputError::io(&self.shown, e))?;
            *committed = true;
        }
        Ok(())
    }

    /// The path as the user gave it.
    pub fn path(&self) -> &Path {
        &self.shown
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Mode::Atomic {
            tmp,
            committed: false,
            ..
        } = &self.mode
        {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// A buffered writer onto an [`Output`] whose errors name the file (a simulation that holds it
/// reports a full disk as `out.pcap: No space left on device`, not as a bare errno).
#[derive(Debug)]
pub struct OutputWriter {
    inner: io::BufWriter<File>,
    path: PathBuf,
}

impl OutputWriter {
    fn named(&self, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("{}: {e}", self.path.display()))
    }
}

impl Write for OutputWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf).map_err(|e| self.named(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().map_err(|e| self.named(e))
    }
}

/// `dir/.NAME.rdmalab-partial` for `dir/NAME`.
pub fn partial_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    target.with_file_name(format!(".{name}.rdmalab-partial"))
}

/// Writes `bytes` to `path` through an [`Output`] and commits it.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let mut o = Output::create(path)?;
    o.write_all(bytes)?;
    o.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_replaced_only_on_commit() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.csv");
        std::fs::write(&p, "old").unwrap();
        let mut o = Output::create(&p).unwrap();
        o.write_all(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        assert!(partial_path(&p).exists());
        o.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert!(!partial_path(&p).exists());
    }

    #[test]
    fn a_dropped_output_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.pcap");
        {
            let mut o = Output::create(&p).unwrap();
            o.write_all(b"half").unwrap();
        }
        assert!(!p.exists());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_leftover_partial_file_is_replaced() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.jsonl");
        std::fs::write(partial_path(&p), "from a killed run").unwrap();
        write_file(&p, b"whole").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "whole");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_symlink_stays_a_link_and_its_target_is_replaced() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real.csv");
        let link = d.path().join("link.csv");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_file(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    }

    #[test]
    fn directories_and_dangling_links_are_refused_by_name() {
        let d = tempfile::tempdir().unwrap();
        let e = Output::create(d.path()).unwrap_err().to_string();
        assert!(e.contains("a directory") && e.contains(&d.path().display().to_string()));
        let link = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("nowhere/x"), &link).unwrap();
        let e = Output::create(&link).unwrap_err().to_string();
        assert!(e.contains("symbolic link to nothing"), "{e}");
    }

    #[test]
    fn a_character_device_is_written_through_and_its_errors_name_it() {
        // /dev/null stays a device.
        write_file(Path::new("/dev/null"), b"gone").unwrap();
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
        // /dev/full fails on write, with the path; the node is untouched.
        if Path::new("/dev/full").exists() {
            let e = write_file(Path::new("/dev/full"), &[0u8; 1 << 16])
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("/dev/full:"), "{e}");
            assert!(!std::fs::metadata("/dev/full").unwrap().is_file());
        }
    }

    #[test]
    fn a_fifo_is_written_through() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&p).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("mkfifo is not available: skipped");
            return;
        }
        let reader = {
            let p = p.clone();
            std::thread::spawn(move || std::fs::read_to_string(p).unwrap())
        };
        write_file(&p, b"through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), "through the pipe");
        use std::os::unix::fs::FileTypeExt as _;
        assert!(std::fs::metadata(&p).unwrap().file_type().is_fifo());
    }
}
