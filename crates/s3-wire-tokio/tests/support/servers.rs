//! The two real S3 servers of the integration tests behind one type: the embedded
//! local-s3 (s3s-fs 0.14.1, verifies SigV4) and moto 5.2.5 in server mode (see `moto.rs`).

use super::moto::{self, Moto};

/// Which server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `tools/local-s3` (s3s-fs 0.14.1).
    LocalS3,
    /// moto 5.2.5, server mode.
    Moto,
}

impl Kind {
    /// Both servers, in matrix order.
    pub const ALL: [Kind; 2] = [Kind::LocalS3, Kind::Moto];

    /// A short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::LocalS3 => "local-s3",
            Kind::Moto => "moto",
        }
    }

    /// The name with the version, for tables.
    pub fn title(self) -> &'static str {
        match self {
            Kind::LocalS3 => "local-s3 (s3s-fs 0.14.1)",
            Kind::Moto => "moto 5.2.5",
        }
    }
}

enum Guard {
    LocalS3(local_s3::LocalS3),
    Moto(Moto),
}

/// A running server, its endpoint and keys; dropping it stops the server.
pub struct Server {
    /// Which one.
    pub kind: Kind,
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    /// The keys requests are signed with.
    pub access_key: String,
    /// See `access_key`.
    pub secret_key: String,
    /// The region to sign for.
    pub region: String,
    guard: Guard,
}

impl Server {
    /// Starts a server of `kind` (moto: creating the venv first if needed).
    pub async fn start(kind: Kind) -> Server {
        match kind {
            Kind::LocalS3 => {
                let server = tokio::task::spawn_blocking(|| {
                    local_s3::LocalS3::start().expect("start local-s3")
                })
                .await
                .expect("join");
                Server {
                    kind,
                    endpoint: server.endpoint().to_owned(),
                    access_key: server.access_key().to_owned(),
                    secret_key: server.secret_key().to_owned(),
                    region: server.region().to_owned(),
                    guard: Guard::LocalS3(server),
                }
            }
            Kind::Moto => {
                let server = moto::moto().await;
                Server {
                    kind,
                    endpoint: server.endpoint().to_owned(),
                    access_key: moto::ACCESS_KEY.to_owned(),
                    secret_key: moto::SECRET_KEY.to_owned(),
                    region: moto::REGION.to_owned(),
                    guard: Guard::Moto(server),
                }
            }
        }
    }

    /// A new client of this server.
    pub fn client(&self) -> s3_wire_tokio::Client {
        self.builder().build().expect("client")
    }

    /// A client builder set up for this server.
    pub fn builder(&self) -> s3_wire_tokio::ClientBuilder {
        s3_wire_tokio::Client::builder()
            .endpoint(self.endpoint.clone())
            .region(self.region.clone())
            .static_credentials(self.access_key.clone(), self.secret_key.clone(), None)
    }

    /// What moto logged (empty for local-s3).
    pub fn log_text(&self) -> String {
        match &self.guard {
            Guard::LocalS3(_) => String::new(),
            Guard::Moto(moto) => moto.log_text(),
        }
    }
}
