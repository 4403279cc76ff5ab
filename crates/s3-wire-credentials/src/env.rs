//! Where environment variables and the home directory come from: the process, or a map.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;

/// Where environment variables and the home directory come from.
///
/// [`ProcessEnv`] reads the real process; [`MapEnv`] is a fixed map for tests and embedders.
pub trait Env: fmt::Debug + Send + Sync {
    /// The value of variable `name`, or `None` when unset or not valid UTF-8.
    fn var(&self, name: &str) -> Option<String>;

    /// The user's home directory: `HOME`, else `USERPROFILE`, else `HOMEDRIVE` + `HOMEPATH`.
    fn home_dir(&self) -> Option<PathBuf> {
        if let Some(home) = non_empty(self.var("HOME")) {
            return Some(PathBuf::from(home));
        }
        if let Some(profile) = non_empty(self.var("USERPROFILE")) {
            return Some(PathBuf::from(profile));
        }
        let drive = non_empty(self.var("HOMEDRIVE"))?;
        let path = non_empty(self.var("HOMEPATH"))?;
        Some(PathBuf::from(format!("{drive}{path}")))
    }
}

/// The real process environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

/// A fixed set of variables and an optional home directory.
///
/// ```
/// use s3_wire_credentials::{Env, MapEnv};
///
/// let env = MapEnv::new().with_var("AWS_REGION", "eu-west-1").with_home("/home/test");
/// assert_eq!(env.var("AWS_REGION").as_deref(), Some("eu-west-1"));
/// ```
#[derive(Clone, Default)]
pub struct MapEnv {
    vars: HashMap<String, String>,
    home: Option<PathBuf>,
}

impl MapEnv {
    /// An empty environment with no home directory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets variable `name` to `value`.
    pub fn with_var(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(name.into(), value.into());
        self
    }

    /// Sets the home directory (otherwise derived from `HOME`/`USERPROFILE` in the map).
    pub fn with_home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }
}

impl Env for MapEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }

    fn home_dir(&self) -> Option<PathBuf> {
        match &self.home {
            Some(home) => Some(home.clone()),
            None => {
                if let Some(home) = non_empty(self.var("HOME")) {
                    return Some(PathBuf::from(home));
                }
                non_empty(self.var("USERPROFILE")).map(PathBuf::from)
            }
        }
    }
}

impl fmt::Debug for MapEnv {
    // Values may be secrets: show only which variables are set.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.vars.keys().collect();
        names.sort();
        f.debug_struct("MapEnv")
            .field("vars", &names)
            .field("home", &self.home)
            .finish()
    }
}

/// Empty variables count as unset, as in the AWS CLI.
pub(crate) fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.is_empty())
}

pub(crate) fn env_var(env: &dyn Env, name: &str) -> Option<String> {
    non_empty(env.var(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared_file_paths;

    #[test]
    fn home_directory_fallbacks() {
        let env = MapEnv::new().with_var("HOME", "/home/a");
        assert_eq!(env.home_dir(), Some(PathBuf::from("/home/a")));
        let env = MapEnv::new().with_var("USERPROFILE", "C:\\Users\\a");
        assert_eq!(env.home_dir(), Some(PathBuf::from("C:\\Users\\a")));
        assert_eq!(MapEnv::new().home_dir(), None);
        assert_eq!(shared_file_paths(&MapEnv::new()), (None, None));
    }
}
