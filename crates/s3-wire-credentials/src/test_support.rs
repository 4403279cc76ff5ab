//! What the unit tests of the shared files, the environment and the chain share: a
//! temporary home directory, and small helpers.

use std::future::Future;
use std::path::Path;

use crate::{Credentials, Error, MapEnv, ProfileSet};

/// A temporary home directory with `.aws/config` and `.aws/credentials`.
pub(crate) struct Home {
    pub(crate) dir: tempfile::TempDir,
}

impl Home {
    pub(crate) fn new(config: &str, credentials: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let aws = dir.path().join(".aws");
        std::fs::create_dir(&aws).expect("mkdir .aws");
        std::fs::write(aws.join("config"), config).expect("write config");
        std::fs::write(aws.join("credentials"), credentials).expect("write credentials");
        Self { dir }
    }

    /// The home directory, with instance metadata off: a chain that finds nothing
    /// must not go looking on the network.
    pub(crate) fn env(&self) -> MapEnv {
        MapEnv::new()
            .with_home(self.dir.path())
            .with_var("AWS_EC2_METADATA_DISABLED", "true")
    }
}

pub(crate) fn keys(credentials: &Credentials) -> (String, String, Option<String>) {
    (
        credentials.access_key_id().to_owned(),
        credentials.secret_access_key().to_owned(),
        credentials.session_token().map(str::to_owned),
    )
}

pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(future)
}

pub(crate) fn parse(config: &str, credentials: &str) -> Result<ProfileSet, Error> {
    ProfileSet::parse(
        config,
        Path::new("config"),
        credentials,
        Path::new("credentials"),
    )
}
