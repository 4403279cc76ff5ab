//! Ctrl-C and SIGTERM: the first one stops new work and cancels the transfers running
//! (the library aborts their multipart uploads and removes partial downloads, bounded in
//! time), then s3w exits 128 + the signal's number (130 for SIGINT, 143 for SIGTERM, as
//! shells report them); a second one exits at once.

use std::future::Future;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use s3_wire::{DirectoryHandle, TransferHandle};
use tokio::sync::watch;

/// The exit status after SIGINT (Ctrl-C): 128 + 2.
const EXIT_SIGINT: i32 = 130;
/// The exit status after SIGTERM: 128 + 15.
#[cfg(unix)]
const EXIT_SIGTERM: i32 = 143;

/// The exit status of the signal received, once one was.
fn state() -> &'static watch::Sender<Option<i32>> {
    static STATE: OnceLock<watch::Sender<Option<i32>>> = OnceLock::new();
    STATE.get_or_init(|| watch::channel(None).0)
}

/// Listens for SIGINT and SIGTERM (within the runtime).
pub(crate) fn listen() {
    tokio::spawn(async {
        loop {
            let exit = signal().await;
            if requested() {
                eprintln!("s3w: interrupted again: quitting now");
                std::process::exit(exit);
            }
            eprintln!(
                "s3w: interrupted: stopping; cancelling the transfers in progress (multipart \
                 uploads are aborted, partial downloads removed). Ctrl-C again quits at once."
            );
            state().send_replace(Some(exit));
        }
    });
}

/// The next signal, as the exit status it calls for.
async fn signal() -> i32 {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut interrupt), Ok(mut terminate)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = interrupt.recv() => EXIT_SIGINT,
            _ = terminate.recv() => EXIT_SIGTERM,
        }
    }
    #[cfg(not(unix))]
    {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        EXIT_SIGINT
    }
}

/// The exit status of an interrupted run: 128 + the number of the first signal.
pub(crate) fn exit_code() -> i32 {
    state().borrow().unwrap_or(EXIT_SIGINT)
}

/// True once interrupted.
pub(crate) fn requested() -> bool {
    state().borrow().is_some()
}

/// Resolves once interrupted.
pub(crate) async fn wait() {
    let mut receiver = state().subscribe();
    let _ = receiver.wait_for(Option::is_some).await;
}

/// A transfer handle that can be cancelled.
pub(crate) trait Cancel: Future + Unpin {
    fn cancel(&self);
}

impl<T> Cancel for TransferHandle<T> {
    fn cancel(&self) {
        TransferHandle::cancel(self);
    }
}

impl Cancel for DirectoryHandle {
    fn cancel(&self) {
        DirectoryHandle::cancel(self);
    }
}

/// Transfers being awaited by [`cancellable`]: an interruption waits for their clean-up.
static CLEANING: AtomicUsize = AtomicUsize::new(0);

/// Awaits a transfer; an interruption cancels it, and its (cancelled) result is awaited:
/// by then its clean-up is done.
pub(crate) async fn cancellable<H: Cancel>(mut handle: H) -> H::Output {
    CLEANING.fetch_add(1, Ordering::SeqCst);
    let output = tokio::select! {
        output = &mut handle => Some(output),
        () = wait() => {
            handle.cancel();
            None
        }
    };
    let output = match output {
        Some(output) => output,
        None => handle.await,
    };
    CLEANING.fetch_sub(1, Ordering::SeqCst);
    output
}

/// Runs a command; interrupted, it ends at once unless a transfer is cleaning up (then its
/// clean-up is awaited: the command returns when it is done).
pub(crate) async fn run<T>(command: impl Future<Output = T>, interrupted: T) -> T {
    tokio::pin!(command);
    tokio::select! {
        output = &mut command => output,
        () = wait() => {
            if CLEANING.load(Ordering::SeqCst) > 0 {
                command.await
            } else {
                interrupted
            }
        }
    }
}
