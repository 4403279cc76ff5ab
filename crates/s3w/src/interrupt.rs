//! Ctrl-C and SIGTERM: the first one stops new work and cancels the transfers running
//! (the library aborts their multipart uploads and removes partial downloads, bounded in
//! time), then s3w exits 130; a second one exits at once.

use std::future::Future;
use std::sync::OnceLock;

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

/// Awaits a transfer; an interruption cancels it, and its (cancelled) result is awaited:
/// by then its clean-up is done.
pub(crate) async fn cancellable<H: Cancel>(mut handle: H) -> H::Output {
    tokio::select! {
        output = &mut handle => return output,
        () = wait() => handle.cancel(),
    }
    handle.await
}
