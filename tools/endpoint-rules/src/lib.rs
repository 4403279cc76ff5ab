//! An interpreter of Smithy endpoint rule sets, written for AWS's S3 rule set
//! (`endpoint-rule-set-1.json` from botocore).
//!
//! **What this is for.** This crate is a *test oracle* and a *measurement
//! prototype* for the s3-wire S3 client: it answers "which URL and which auth
//! scheme does AWS's own rule set give for these inputs?" so s3-wire's real
//! endpoint code can be checked against it, and it measures what evaluating
//! the rule set at run time would cost (binary size, parse time, work per
//! resolution). It is **not** s3-wire's runtime endpoint path.
//!
//! **How it works.** [`RuleSet::from_json`] parses the rule set once into an
//! evaluable tree: every variable (parameter or `assign`ed result) gets a
//! slot number, templates such as `https://{Bucket}.s3.{partitionResult#dnsSuffix}`
//! are split into literal and lookup parts, `getAttr` paths such as
//! `resourceId[1]` are pre-parsed, and references are checked to be in scope.
//! [`RuleSet::resolve`] walks the tree for one set of [`Params`]: the first
//! rule (depth first, in order) whose conditions all hold decides — an
//! endpoint rule gives an [`Endpoint`], an error rule gives `Err(message)`.
//!
//! **Semantics.** The Smithy rules-engine specification (standard library and
//! AWS library functions) is followed; details it leaves open are decided in
//! [`stdlib`] and noted there. Two evaluator choices worth knowing:
//! * a condition holds when its value is `true` or any non-empty value
//!   (an empty optional or `false` fails it);
//! * `booleanEquals` / `stringEquals` with an unset argument are `false`;
//!   every other type mismatch is reported as an error, as is a tree rule
//!   whose conditions hold but none of whose rules match (the spec requires
//!   rule sets to be exhaustive, so that would be a rule-set bug).

pub mod cases;
mod eval;
mod parse;
pub mod partitions;
pub mod stdlib;

use std::collections::BTreeMap;

pub use parse::RuleSet;

/// The value of one endpoint parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamValue {
    /// A string parameter (`Region`, `Bucket`, ...).
    String(String),
    /// A boolean parameter (`UseFIPS`, ...).
    Bool(bool),
}

impl From<&str> for ParamValue {
    fn from(value: &str) -> Self {
        ParamValue::String(value.to_owned())
    }
}

impl From<String> for ParamValue {
    fn from(value: String) -> Self {
        ParamValue::String(value)
    }
}

impl From<bool> for ParamValue {
    fn from(value: bool) -> Self {
        ParamValue::Bool(value)
    }
}

/// The type a rule set declares for a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    /// `string`.
    String,
    /// `boolean`.
    Boolean,
}

/// One entry of the rule set's `parameters` section.
#[derive(Debug, Clone)]
pub struct ParamDef {
    /// The parameter's name.
    pub name: String,
    /// Its type.
    pub kind: ParamType,
    /// Whether resolution needs it set (or defaulted).
    pub required: bool,
    /// Applied when the caller leaves the parameter unset.
    pub default: Option<ParamValue>,
    /// The SDK setting that feeds it, e.g. `AWS::Region` (informational).
    pub built_in: Option<String>,
}

/// Input parameters by name (`Region`, `Bucket`, `UseFIPS`, ...). Unset
/// parameters take the rule set's default, if it declares one.
#[derive(Debug, Clone, Default)]
pub struct Params {
    values: BTreeMap<String, ParamValue>,
}

impl Params {
    /// No parameters set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `name` (builder style).
    pub fn with(mut self, name: impl Into<String>, value: impl Into<ParamValue>) -> Self {
        self.set(name, value);
        self
    }

    /// Sets `name`, replacing any previous value.
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<ParamValue>) -> &mut Self {
        self.values.insert(name.into(), value.into());
        self
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&ParamValue> {
        self.values.get(name)
    }

    /// Every set parameter, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ParamValue)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// How many parameters are set.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether none is set.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// A resolved endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    /// The endpoint URL.
    pub url: String,
    /// The endpoint rule's `properties` with templates filled in, e.g.
    /// `{"authSchemes": [{"name": "sigv4", "signingName": "s3", ...}]}`;
    /// an empty object when the rule has none.
    pub properties: serde_json::Value,
    /// Header name to values; empty when the rule sets none.
    pub headers: BTreeMap<String, Vec<String>>,
}
