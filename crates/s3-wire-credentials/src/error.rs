//! Why credentials, region or endpoint could not be resolved.

use std::error::Error as StdError;
use std::fmt;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

use super::documents::DocumentError;

/// Which credential source an error is about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// The `AWS_*` environment variables.
    Environment,
    /// A profile of the shared config/credentials files.
    Profile(String),
    /// The `credential_process` of a profile.
    Process {
        /// The profile.
        profile: String,
    },
    /// The SSO configuration (`sso_session` or legacy `sso_start_url`) of a profile.
    Sso {
        /// The profile.
        profile: String,
    },
    /// STS AssumeRole of a role (`role_arn` of a profile).
    AssumeRole {
        /// The role.
        role_arn: String,
    },
    /// STS AssumeRoleWithWebIdentity (`AWS_WEB_IDENTITY_TOKEN_FILE` or a profile's
    /// `web_identity_token_file`).
    WebIdentity {
        /// The role.
        role_arn: String,
    },
    /// The ECS/EKS container credentials endpoint.
    Container,
    /// EC2 instance metadata (IMDSv2).
    InstanceMetadata,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Environment => f.write_str("the environment"),
            Origin::Profile(name) => write!(f, "profile {name:?}"),
            Origin::Process { profile } => {
                write!(f, "the credential_process of profile {profile:?}")
            }
            Origin::Sso { profile } => write!(f, "the SSO login of profile {profile:?}"),
            Origin::AssumeRole { role_arn } => write!(f, "STS AssumeRole of {role_arn}"),
            Origin::WebIdentity { role_arn } => {
                write!(f, "STS AssumeRoleWithWebIdentity of {role_arn}")
            }
            Origin::Container => f.write_str("the container credentials endpoint"),
            Origin::InstanceMetadata => f.write_str("EC2 instance metadata (IMDSv2)"),
        }
    }
}

/// What was wrong with a line of a shared config or credentials file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A property line appears before any `[section]` header.
    PropertyOutsideSection,
    /// A line is neither a comment, a `[section]` header nor a `name = value` property.
    ExpectedProperty,
    /// A `[` line has no closing `]`.
    UnclosedSection,
    /// A property line has `=` but no name before it.
    EmptyPropertyName,
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ParseErrorKind::PropertyOutsideSection => {
                "property defined before any [section] header"
            }
            ParseErrorKind::ExpectedProperty => "expected `name = value`, a [section] or a comment",
            ParseErrorKind::UnclosedSection => "section header is missing its closing `]`",
            ParseErrorKind::EmptyPropertyName => "property has no name before `=`",
        })
    }
}

/// Why credentials, region or endpoint could not be resolved.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// No source had credentials.
    NoCredentials {
        /// The profile that was consulted after the environment.
        profile: String,
        /// The sources that were tried and failed on the way (an unreachable instance
        /// metadata service, say), in chain order.
        tried: Vec<Error>,
    },
    /// A source had some but not all of the required keys.
    Incomplete {
        /// Which source.
        origin: Origin,
        /// The name of the missing variable or property.
        missing: &'static str,
    },
    /// `AWS_PROFILE` (or an explicit profile name) names a profile neither file defines.
    ProfileNotFound {
        /// The profile asked for.
        profile: String,
    },
    /// The profile obtains credentials in a way this crate does not implement.
    UnsupportedProfile {
        /// The profile.
        profile: String,
        /// The setting that requires it (`role_arn`, `sso_session`, `credential_process`, …).
        setting: String,
    },
    /// A static lookup ([`SharedConfig::credentials`]) met a profile whose credentials must
    /// be fetched (it sets `role_arn`, `sso_session`, `credential_process`, …); use
    /// [`ProfileProvider`] or [`DefaultChain`].
    ///
    /// [`SharedConfig::credentials`]: super::SharedConfig::credentials
    /// [`ProfileProvider`]: super::ProfileProvider
    /// [`DefaultChain`]: super::DefaultChain
    FetchedCredentials {
        /// The profile.
        profile: String,
        /// The setting that selects the source.
        setting: &'static str,
    },
    /// A shared config or credentials file exists but could not be read.
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// A shared config or credentials file is malformed.
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        kind: ParseErrorKind,
    },
    /// A custom [`CredentialsProvider`](crate::CredentialsProvider) failed.
    Provider(Box<dyn StdError + Send + Sync>),
    /// A credential source was tried and failed.
    Source {
        /// The source.
        origin: Origin,
        /// Why.
        kind: SourceErrorKind,
    },
    /// The `source_profile` references of a profile lead back to a profile already on the
    /// way.
    ProfileCycle {
        /// The profiles in the order they were visited, ending with the repeated one.
        chain: Vec<String>,
    },
    /// An environment variable's value cannot be used as written.
    InvalidVariable {
        /// The variable.
        variable: &'static str,
        /// What is wrong and what to do.
        reason: String,
    },
    /// A profile's settings cannot be used as written.
    InvalidProfile {
        /// The profile.
        profile: String,
        /// The setting at fault.
        setting: &'static str,
        /// What is wrong and what to do.
        reason: String,
    },
}

impl Error {
    /// Wraps the failure of a custom provider.
    pub fn provider(source: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        Error::Provider(source.into())
    }

    pub(crate) fn from_source(origin: Origin, kind: SourceErrorKind) -> Self {
        Error::Source { origin, kind }
    }

    /// True if trying again later may succeed: the source was unreachable, timed out, or
    /// answered with a server error or a throttling status. A [`CachingProvider`]
    /// keeps serving its last credentials through such failures for a grace period.
    ///
    /// [`CachingProvider`]: super::CachingProvider
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Source { kind, .. } => kind.is_transient(),
            _ => false,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoCredentials { profile, tried } => {
                write!(
                    f,
                    "no credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, \
                     configure profile {profile:?} in the shared config or credentials file, \
                     or run where a web identity, container or instance role is available"
                )?;
                for error in tried {
                    write!(f, "; tried {error}")?;
                }
                Ok(())
            }
            Error::Incomplete { origin, missing } => {
                write!(
                    f,
                    "incomplete credentials in {origin}: {missing} is not set"
                )
            }
            Error::ProfileNotFound { profile } => write!(
                f,
                "profile {profile:?} is not defined in the shared config or credentials file"
            ),
            Error::UnsupportedProfile { profile, setting } => write!(
                f,
                "profile {profile:?} sets {setting}, which this crate does not support: use \
                 static keys, a role, SSO, a web identity or a credential_process, or plug in \
                 a CredentialsProvider"
            ),
            Error::FetchedCredentials { profile, setting } => write!(
                f,
                "profile {profile:?} sets {setting}: its credentials must be fetched, which \
                 the static lookup does not do (ProfileProvider and DefaultChain do)"
            ),
            Error::ReadFile { path, .. } => write!(f, "cannot read {}", path.display()),
            Error::Parse { path, line, kind } => {
                write!(f, "{}, line {line}: {kind}", path.display())
            }
            Error::Provider(_) => f.write_str("the credentials provider failed"),
            Error::Source { origin, kind } => write!(f, "{origin}: {kind}"),
            Error::ProfileCycle { chain } => write!(
                f,
                "the source_profile references form a cycle: {}",
                chain.join(" -> ")
            ),
            Error::InvalidProfile {
                profile,
                setting,
                reason,
            } => write!(f, "profile {profile:?}, {setting}: {reason}"),
            Error::InvalidVariable { variable, reason } => write!(f, "{variable}: {reason}"),
        }
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            Error::ReadFile { source, .. } => Some(source),
            Error::Provider(source) => Some(source.as_ref()),
            Error::Source { kind, .. } => kind.source(),
            _ => None,
        }
    }
}

/// How a credential source failed. Never holds a secret: documents and process output are
/// described, not quoted (except a process's standard error, which is its own message to
/// the user).
#[derive(Debug)]
#[non_exhaustive]
pub enum SourceErrorKind {
    /// The endpoint could not be reached, or the connection broke.
    Transport(Box<dyn StdError + Send + Sync>),
    /// The endpoint did not answer within the limit.
    Timeout(Duration),
    /// The endpoint answered with an error status.
    Status {
        /// The HTTP status.
        status: u16,
        /// The service's error code (`AccessDenied`, `ExpiredTokenException`, …), if any.
        code: Option<String>,
        /// The service's error message, if any.
        message: Option<String>,
        /// The request id, for the provider's support.
        request_id: Option<String>,
    },
    /// The answer is longer than the bound for its kind.
    TooLarge {
        /// The bound in bytes.
        limit: usize,
    },
    /// The answer is not a valid JSON credential document.
    Document(DocumentError),
    /// The answer is not a valid STS document.
    Xml(s3_xml::Error),
    /// The configured endpoint is refused: plain HTTP to a host that is not loopback (or,
    /// for the container endpoint, not one of the ECS/EKS addresses), or not a URL.
    ForbiddenEndpoint {
        /// The URL.
        url: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// A file the source needs (a token file, the SSO token cache) could not be read or
    /// written.
    File {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The `credential_process` could not be started.
    Spawn(io::Error),
    /// The `credential_process` exited unsuccessfully.
    ProcessFailed {
        /// Its exit code (`None`: ended by a signal).
        code: Option<i32>,
        /// The end of its standard error (at most 4 KiB), where processes explain themselves.
        stderr: String,
    },
    /// The `credential_process` did not finish within the limit (it was killed).
    ProcessTimeout(Duration),
    /// The cached SSO token is missing, expired and not refreshable, or refused.
    SsoLoginRequired {
        /// What was found.
        reason: String,
        /// The command that fixes it (`aws sso login --profile …`).
        remedy: String,
    },
    /// The source is turned off by a variable (`AWS_EC2_METADATA_DISABLED`).
    Disabled {
        /// The variable.
        variable: &'static str,
    },
    /// A variable or setting that configures the source has an invalid value.
    Misconfigured {
        /// The variable or profile setting.
        setting: String,
        /// What is wrong and what is accepted.
        reason: String,
    },
}

impl SourceErrorKind {
    /// See [`Error::is_transient`].
    pub fn is_transient(&self) -> bool {
        match self {
            SourceErrorKind::Transport(_) | SourceErrorKind::Timeout(_) => true,
            SourceErrorKind::Status { status, code, .. } => {
                *status >= 500
                    || *status == 429
                    || code.as_deref().is_some_and(|code| {
                        matches!(
                            code,
                            "Throttling" | "ThrottlingException" | "IDPCommunicationError"
                        )
                    })
            }
            _ => false,
        }
    }

    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            SourceErrorKind::Transport(source) => Some(source.as_ref()),
            SourceErrorKind::Document(source) => Some(source),
            SourceErrorKind::Xml(source) => Some(source),
            SourceErrorKind::File { source, .. } | SourceErrorKind::Spawn(source) => Some(source),
            _ => None,
        }
    }
}

impl fmt::Display for SourceErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceErrorKind::Transport(error) => {
                write!(f, "could not reach the endpoint ({error})")
            }
            SourceErrorKind::Timeout(limit) => write!(f, "no answer within {limit:?}"),
            SourceErrorKind::Status {
                status,
                code,
                message,
                request_id,
            } => {
                write!(f, "HTTP {status}")?;
                if let Some(code) = code {
                    write!(f, " {code}")?;
                }
                if let Some(message) = message {
                    write!(f, ": {message}")?;
                }
                if let Some(id) = request_id {
                    write!(f, " (request id {id})")?;
                }
                Ok(())
            }
            SourceErrorKind::TooLarge { limit } => {
                write!(f, "the answer is longer than {limit} bytes")
            }
            SourceErrorKind::Document(error) => write!(f, "{error}"),
            SourceErrorKind::Xml(error) => write!(f, "malformed STS answer: {error}"),
            SourceErrorKind::ForbiddenEndpoint { url, reason } => {
                write!(f, "endpoint {url:?} refused: {reason}")
            }
            SourceErrorKind::File { path, source } => {
                write!(f, "{}: {source}", path.display())
            }
            SourceErrorKind::Spawn(error) => write!(f, "the process could not be started: {error}"),
            SourceErrorKind::ProcessFailed { code, stderr } => {
                match code {
                    Some(code) => write!(f, "the process exited with status {code}")?,
                    None => f.write_str("the process was ended by a signal")?,
                }
                let stderr = stderr.trim();
                if !stderr.is_empty() {
                    write!(f, "; its standard error: {stderr}")?;
                }
                Ok(())
            }
            SourceErrorKind::ProcessTimeout(limit) => {
                write!(
                    f,
                    "the process did not finish within {limit:?} and was killed"
                )
            }
            SourceErrorKind::SsoLoginRequired { reason, remedy } => {
                write!(f, "{reason}; run `{remedy}`")
            }
            SourceErrorKind::Disabled { variable } => write!(f, "turned off by {variable}"),
            SourceErrorKind::Misconfigured { setting, reason } => {
                write!(f, "{setting} is invalid: {reason}")
            }
        }
    }
}
