//! Input the user can fix — a file, a flag, a value out of range — as one error type: `main`
//! prints it as `rdmalab COMMAND: message` and exits with status 2, while a failure of the run
//! itself exits 1 (`rdmalab: ...`). Every subcommand refuses input through [`bad`].

use std::process::ExitCode;

/// A refusal of the user's input, naming the subcommand.
#[derive(Debug)]
pub struct BadInput {
    /// The subcommand, e.g. `run`; empty for a message that names its file and line itself.
    pub command: &'static str,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.command.is_empty() {
            // Already located (`FILE:LINE:COL: ...`): the message stands alone.
            f.write_str(&self.message)
        } else {
            write!(f, "rdmalab {}: {}", self.command, self.message)
        }
    }
}

impl std::error::Error for BadInput {}

/// Refuses the input of `command` with `message` (exit status 2).
pub fn bad(command: &'static str, message: impl std::fmt::Display) -> anyhow::Result<ExitCode> {
    Err(BadInput {
        command,
        message: message.to_string(),
    }
    .into())
}
