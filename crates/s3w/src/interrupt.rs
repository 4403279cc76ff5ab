//! Ctrl-C and SIGTERM: the first one stops new work and cancels the transfers running
//! (the library aborts their multipart uploads and removes partial downloads, bounded in
//! time), then s3w exits 130; a second one exits at once.

use std::future::Future;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use s3_wire::{DirectoryHandle, TransferHandle};
use tokio::sync::watch;

/// The exit status after an interruption (128 + SIGINT).
pub(crate) const EXIT_INTERRUPTED: i32 = 130;

fn state() -> &'static watch::Sender<bool> {
    static STATE: OnceLock<watch::Sender<bool>> = OnceLock::new();
    STATE.get_or_init(|| watch::channel(false).0)
}

/// Listens for SIGINT and SIGTERM (within the runtime).
pub(crate) fn listen() {
    tokio::spawn(async {
        let mut signals = 0;
        loop {
            signal().await;
            signals += 1;
            if signals > 1 {
                eprintln!("s3w: interrupted again: quitting now");
                std::process::exit(EXIT_INTERRUPTED);
            }
            eprintln!(
                "s3w: interrupted: stopping; cancelling the transfers in progress (multipart \
                 uploads are aborted, partial downloads removed). Ctrl-C again quits at once."
            );
            state().send_replace(true);
        }
    });
}

async fn signal() {
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
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// True once interrupted.
pub(crate) fn requested() -> bool {
    *state().borrow()
}

/// Resolves once interrupted.
pub(crate) async fn wait() {
    let mut receiver = state().subscribe();
    let _ = receiver.wait_for(|interrupted| *interrupted).await;
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
