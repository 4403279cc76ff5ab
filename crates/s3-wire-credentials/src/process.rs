//! `credential_process`: credentials printed by a program the profile names.
//!
//! The command line is split into the program and its arguments by POSIX shell-word rules
//! (quotes, backslashes) and run directly, never through a shell. The program inherits the
//! environment, reads nothing (standard input is null) and prints a version-1 document
//! ([`parse_process_output`]) on its standard output within the timeout; its standard error
//! is kept (the last [`STDERR_TAIL`] bytes) to explain a failure. Standard output holds the
//! secret, so no error ever quotes it.

use std::future::{Future, poll_fn};
use std::io;
use std::pin::pin;
use std::process::{ExitStatus, Stdio};
use std::task::Poll;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _};
use tokio::process::{Child, Command};

use super::documents::parse_process_output;
use super::{Error, ExpiringCredentials, ExpiringSource, FetchFuture, Origin, SourceErrorKind};

/// The most standard output accepted: real documents are 1–3 KiB.
pub(crate) const MAX_STDOUT: usize = 64 * 1024;

/// How much of the end of standard error an error keeps.
pub(crate) const STDERR_TAIL: usize = 4 * 1024;

/// Runs a profile's `credential_process`.
#[derive(Debug)]
pub struct ProcessProvider {
    command: String,
    profile: String,
    timeout: Duration,
}

impl ProcessProvider {
    /// The command line `command` of profile `profile` (for errors).
    pub fn new(command: impl Into<String>, profile: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            profile: profile.into(),
            timeout: Duration::from_secs(60),
        }
    }

    /// Kills the process after `timeout` (default 60 s).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    async fn run(&self) -> Result<ExpiringCredentials, SourceErrorKind> {
        let words = split_command(&self.command)?;
        let (program, arguments) = words.split_first().ok_or_else(empty_command)?;
        let mut child = Command::new(program)
            .args(arguments)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            // The program's name helps (it is the configuration, not the secret); the kind
            // of the I/O error is kept.
            .map_err(|error| {
                SourceErrorKind::Spawn(io::Error::new(error.kind(), format!("{program}: {error}")))
            })?;
        let output = tokio::time::timeout(self.timeout, collect(&mut child)).await;
        let (status, stdout, stderr) = match output {
            Ok(Ok(output)) => output,
            Ok(Err(kind)) => {
                kill(&mut child).await;
                return Err(kind);
            }
            Err(_) => {
                kill(&mut child).await;
                return Err(SourceErrorKind::ProcessTimeout(self.timeout));
            }
        };
        if !status.success() {
            return Err(SourceErrorKind::ProcessFailed {
                code: status.code(),
                stderr,
            });
        }
        parse_process_output(&stdout).map_err(SourceErrorKind::Document)
    }
}

impl ExpiringSource for ProcessProvider {
    fn fetch(&self) -> FetchFuture<'_> {
        Box::pin(async move {
            self.run().await.map_err(|kind| {
                Error::from_source(
                    Origin::Process {
                        profile: self.profile.clone(),
                    },
                    kind,
                )
            })
        })
    }
}

fn empty_command() -> SourceErrorKind {
    SourceErrorKind::Misconfigured {
        setting: "credential_process".to_owned(),
        reason: "the command line is empty".to_owned(),
    }
}

/// The program and its arguments, by POSIX shell-word rules.
fn split_command(command: &str) -> Result<Vec<String>, SourceErrorKind> {
    // The reason does not quote the command line: it may carry an argument the user would
    // not want in a log.
    let words = shlex::split(command).ok_or_else(|| SourceErrorKind::Misconfigured {
        setting: "credential_process".to_owned(),
        reason: "the command line cannot be split into words (an unclosed quote or a trailing \
                 backslash)"
            .to_owned(),
    })?;
    match words.first() {
        None => Err(empty_command()),
        Some(program) if program.is_empty() => Err(SourceErrorKind::Misconfigured {
            setting: "credential_process".to_owned(),
            reason: "the program name is empty".to_owned(),
        }),
        Some(_) => Ok(words),
    }
}

/// Reads standard output (bounded) and the end of standard error until both close, then
/// waits for the exit.
async fn collect(child: &mut Child) -> Result<(ExitStatus, Vec<u8>, String), SourceErrorKind> {
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(SourceErrorKind::Spawn(io::Error::other(
            "the process's output pipes are missing",
        )));
    };
    let mut stdout_read = pin!(read_bounded(stdout, MAX_STDOUT));
    let mut stderr_read = pin!(read_tail(stderr, STDERR_TAIL));
    let mut stdout_done = None;
    let mut stderr_done = None;
    // Both pipes at once (a process that fills one while we wait on the other would
    // block); an oversized standard output ends the wait at once.
    poll_fn(|cx| {
        if stdout_done.is_none()
            && let Poll::Ready(result) = stdout_read.as_mut().poll(cx)
        {
            stdout_done = Some(result);
        }
        if stderr_done.is_none()
            && let Poll::Ready(tail) = stderr_read.as_mut().poll(cx)
        {
            stderr_done = Some(tail);
        }
        match (&stdout_done, &stderr_done) {
            (Some(Err(_)), _) | (Some(_), Some(_)) => Poll::Ready(()),
            _ => Poll::Pending,
        }
    })
    .await;
    let stdout = match stdout_done {
        Some(result) => result?,
        None => Vec::new(),
    };
    let stderr = stderr_done.unwrap_or_default();
    let status = child.wait().await.map_err(SourceErrorKind::Spawn)?;
    Ok((status, stdout, stderr))
}

/// All of `reader`, or `TooLarge` as soon as it exceeds `limit` bytes.
async fn read_bounded(
    mut reader: impl AsyncRead + Unpin,
    limit: usize,
) -> Result<Vec<u8>, SourceErrorKind> {
    let mut output = Vec::new();
    let mut chunk = [0u8; 8 * 1024];
    loop {
        // A failure to read the pipe is reported as the process's I/O failing (there is no
        // closer kind); it does not quote anything read.
        let read = reader
            .read(&mut chunk)
            .await
            .map_err(SourceErrorKind::Spawn)?;
        if read == 0 {
            return Ok(output);
        }
        if output.len() + read > limit {
            return Err(SourceErrorKind::TooLarge { limit });
        }
        output.extend_from_slice(chunk.get(..read).unwrap_or_default());
    }
}

/// The last `keep` bytes of `reader` (from a character boundary), as text.
async fn read_tail(mut reader: impl AsyncRead + Unpin, keep: usize) -> String {
    let mut tail: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 4 * 1024];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(read) => {
                tail.extend_from_slice(chunk.get(..read).unwrap_or_default());
                if tail.len() > keep {
                    tail.drain(..tail.len() - keep);
                }
            }
        }
    }
    // The cut may fall inside a UTF-8 sequence: skip its continuation bytes.
    let start = tail
        .iter()
        .take(3)
        .take_while(|byte| (**byte & 0b1100_0000) == 0b1000_0000)
        .count();
    String::from_utf8_lossy(tail.get(start..).unwrap_or_default()).into_owned()
}

/// Kills the process (if it still runs) and reaps it.
async fn kill(child: &mut Child) {
    let _ = child.start_kill();
    let _ = child.wait().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_split_by_shell_word_rules() {
        assert_eq!(
            split_command(r#"/opt/bin/tool --name "a b" 'c "d"' e\ f"#).unwrap(),
            ["/opt/bin/tool", "--name", "a b", "c \"d\"", "e f"]
        );
        // No shell: its operators are plain words.
        assert_eq!(
            split_command("tool; rm -rf / && $HOME | x").unwrap(),
            ["tool;", "rm", "-rf", "/", "&&", "$HOME", "|", "x"]
        );
        for (line, expected) in [
            ("", "empty"),
            ("   \t ", "empty"),
            ("tool 'unclosed", "cannot be split"),
            ("tool trailing\\", "cannot be split"),
            ("'' arg", "program name is empty"),
        ] {
            match split_command(line) {
                Err(SourceErrorKind::Misconfigured { setting, reason }) => {
                    assert_eq!(setting, "credential_process");
                    assert!(reason.contains(expected), "{line:?}: {reason}");
                }
                other => panic!("{line:?}: {other:?}"),
            }
        }
    }

    fn block_on<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(future)
    }

    #[test]
    fn bounded_reads_and_stderr_tails() {
        let exact = vec![b'x'; MAX_STDOUT];
        assert_eq!(
            block_on(read_bounded(&exact[..], MAX_STDOUT))
                .unwrap()
                .len(),
            MAX_STDOUT
        );
        let over = vec![b'x'; MAX_STDOUT + 1];
        assert!(matches!(
            block_on(read_bounded(&over[..], MAX_STDOUT)),
            Err(SourceErrorKind::TooLarge { limit: MAX_STDOUT })
        ));

        let mut long = "ignored ".repeat(2_000).into_bytes();
        long.extend_from_slice(b"the real reason");
        let tail = block_on(read_tail(&long[..], STDERR_TAIL));
        assert_eq!(tail.len(), STDERR_TAIL);
        assert!(tail.ends_with("the real reason"));
        // A cut inside a multi-byte character drops its remains.
        let text = "ééééé".as_bytes();
        assert_eq!(block_on(read_tail(text, 5)), "éé");
        assert_eq!(block_on(read_tail(&b"short"[..], STDERR_TAIL)), "short");
    }

    #[cfg(unix)]
    #[test]
    fn runs_the_program_without_a_shell() {
        // The words reach the program verbatim: nothing expands `$HOME` or splits at `;`.
        let provider = ProcessProvider::new("sh -c 'printf %s \"$0\" >&2; exit 4' '$HOME;'", "p");
        match block_on(provider.fetch()) {
            Err(Error::Source {
                kind: SourceErrorKind::ProcessFailed { code, stderr },
                ..
            }) => {
                assert_eq!(code, Some(4));
                assert_eq!(stderr, "$HOME;");
            }
            other => panic!("{other:?}"),
        }
    }
}
