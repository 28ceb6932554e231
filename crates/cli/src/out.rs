//! Standard output for every subcommand: one writer that treats a closed pipe as the reader's
//! choice and any other write error as a failure.
//!
//! Rust's `println!` panics when stdout is gone (`rdmalab lab list | head -1` closes it after a
//! line), which exits 101 with a panic message. Every subcommand prints through [`print()`]
//! instead: a broken pipe becomes [`Closed`], which `main` turns into a quiet exit with the
//! status the command would have had; any other error (a full disk behind a redirect) is an
//! error naming standard output, exit 1.

use std::io::Write as _;

/// Standard output was closed by its reader (EPIPE).
#[derive(Debug)]
pub struct Closed;

impl std::fmt::Display for Closed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("standard output was closed")
    }
}

impl std::error::Error for Closed {}

/// Writes `text` to standard output and flushes it.
pub fn print(text: impl AsRef<str>) -> anyhow::Result<()> {
    let mut o = std::io::stdout().lock();
    match o
        .write_all(text.as_ref().as_bytes())
        .and_then(|()| o.flush())
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Closed.into()),
        Err(e) => Err(anyhow::Error::new(e).context("writing to standard output")),
    }
}

/// [`print()`] with a newline.
pub fn println(text: impl AsRef<str>) -> anyhow::Result<()> {
    let mut s = text.as_ref().to_string();
    s.push('\n');
    print(s)
}

/// Writes to standard error, ignoring errors (there is nowhere left to report them).
pub fn eprint(text: impl AsRef<str>) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(text.as_ref().as_bytes());
    let _ = e.write_all(b"\n");
}

/// Whether `e` is (caused by) a closed standard output.
pub fn is_closed(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<Closed>())
}

/// `println!` through [`println()`]: `outln!("{x}")?`.
macro_rules! outln {
    () => {
        $crate::out::println("")
    };
    ($($arg:tt)*) => {
        $crate::out::println(format!($($arg)*))
    };
}

/// `print!` through [`print()`]: `out!("{x}")?`.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::print(format!($($arg)*))
    };
}

/// `eprintln!` that cannot panic.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::out::eprint(format!($($arg)*))
    };
}
