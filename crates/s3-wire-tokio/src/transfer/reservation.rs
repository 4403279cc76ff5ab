//! Memory a caller holds outside the managed transfers, counted in the same budget as theirs
//! (the budget itself is `crate::memory`).

use crate::client::Client;
use crate::memory::Admission;
use crate::transfer::upload::budget_error;

/// Bytes of a client's memory budget held outside its managed transfers, from
/// [`Client::reserve_transfer_memory`](crate::Client::reserve_transfer_memory); given back
/// when dropped.
///
/// For code that keeps part data of its own in flight (an adapter that uploads the parts its
/// caller hands it) and should share the limit of the client's transfers, so that together
/// they never hold more than [`ClientBuilder::transfer_memory`](crate::ClientBuilder::transfer_memory).
#[derive(Debug)]
pub struct TransferMemory {
    admission: Admission,
}

impl TransferMemory {
    /// The bytes held.
    pub fn bytes(&self) -> u64 {
        self.admission.bytes()
    }
}

impl Client {
    /// Waits until `bytes` fit the client's memory budget, in turn with its managed
    /// transfers (first come, first served), and holds them until the returned
    /// [`TransferMemory`] is dropped. Fails at once with
    /// [`TransferErrorKind::MemoryBudget`](crate::TransferErrorKind::MemoryBudget) if
    /// `bytes` exceed the whole budget: they could never fit.
    pub async fn reserve_transfer_memory(
        &self,
        bytes: u64,
    ) -> Result<TransferMemory, crate::Error> {
        let admission = self
            .inner
            .transfer_memory
            .admit(bytes)
            .await
            .map_err(budget_error)?;
        Ok(TransferMemory { admission })
    }
}

#[cfg(test)]
mod reservation_tests {
    use std::time::Duration;

    use crate::{Client, ErrorKind, TransferErrorKind};

    fn client_with_budget(bytes: u64) -> Client {
        Client::builder()
            .endpoint("http://127.0.0.1:9")
            .static_credentials("AKID", "secret", None)
            .transfer_memory(bytes)
            .build()
            .unwrap()
    }

    #[tokio::test]
    async fn a_reservation_shares_the_budget_of_the_transfers_and_waits_its_turn() {
        let client = client_with_budget(100);
        let first = client.reserve_transfer_memory(60).await.unwrap();
        assert_eq!(first.bytes(), 60);
        assert_eq!(client.transfer_memory().in_use, 60);

        let waiting = tokio::spawn({
            let client = client.clone();
            async move { client.reserve_transfer_memory(50).await.unwrap().bytes() }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !waiting.is_finished(),
            "50 more bytes do not fit beside 60 of 100"
        );
        drop(first);
        assert_eq!(waiting.await.unwrap(), 50);
        assert_eq!(client.transfer_memory().in_use, 0, "dropped, given back");
        assert_eq!(client.transfer_memory().high_water, 60);
    }

    #[tokio::test]
    async fn a_reservation_larger_than_the_budget_fails_at_once() {
        let client = client_with_budget(100);
        let error = client.reserve_transfer_memory(101).await.unwrap_err();
        assert!(
            matches!(
                error.kind(),
                ErrorKind::Transfer(TransferErrorKind::MemoryBudget {
                    needed: 101,
                    capacity: 100
                })
            ),
            "{error:?}"
        );
    }
}
