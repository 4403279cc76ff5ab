//! A bucket's cross-origin resource sharing rules: `<CORSConfiguration>`.

use crate::Error;
use crate::common::DecodeBody;
use crate::error::ErrorKind;
use crate::reader::XmlReader;
use crate::writer::XmlWriter;

/// One `<CORSRule>`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CorsRule {
    /// `ID`.
    pub id: Option<String>,
    /// `AllowedHeader` values: headers a preflight may ask for (`*` wildcards allowed).
    pub allowed_headers: Vec<String>,
    /// `AllowedMethod` values: `GET`, `PUT`, `POST`, `DELETE`, `HEAD` (at least one).
    pub allowed_methods: Vec<String>,
    /// `AllowedOrigin` values (at least one; one `*` wildcard each).
    pub allowed_origins: Vec<String>,
    /// `ExposeHeader` values: response headers scripts may read.
    pub expose_headers: Vec<String>,
    /// `MaxAgeSeconds`: how long a browser caches the preflight answer.
    pub max_age_seconds: Option<u32>,
}

impl CorsRule {
    /// A rule allowing `methods` from `origins`.
    pub fn new(
        origins: impl IntoIterator<Item = impl Into<String>>,
        methods: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            allowed_origins: origins.into_iter().map(Into::into).collect(),
            allowed_methods: methods.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }
}

/// `<CORSConfiguration>`: the body of PutBucketCors and the result of GetBucketCors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CorsConfiguration {
    /// The rules, in order (the first that matches a request applies; S3 takes up to 100).
    pub rules: Vec<CorsRule>,
}

impl CorsConfiguration {
    /// A configuration of these rules.
    pub fn new(rules: Vec<CorsRule>) -> Self {
        Self { rules }
    }

    pub(crate) fn encode(&self) -> Result<String, Error> {
        let mut w = XmlWriter::new("CORSConfiguration");
        for rule in &self.rules {
            w.open("CORSRule");
            w.leaf_opt("ID", rule.id.as_ref())?;
            for (element, values) in [
                ("AllowedHeader", &rule.allowed_headers),
                ("AllowedMethod", &rule.allowed_methods),
                ("AllowedOrigin", &rule.allowed_origins),
                ("ExposeHeader", &rule.expose_headers),
            ] {
                for value in values {
                    w.leaf(element, value)?;
                }
            }
            w.leaf_opt("MaxAgeSeconds", rule.max_age_seconds)?;
            w.close("CORSRule");
        }
        Ok(w.finish())
    }
}

impl DecodeBody for CorsConfiguration {
    const ROOT: &'static str = "CORSConfiguration";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        while let Some(child) = r.next_child()? {
            match child {
                "CORSRule" => out.rules.push(decode_rule(r)?),
                _ => r.skip()?,
            }
        }
        Ok(out)
    }
}

fn decode_rule(r: &mut XmlReader<'_>) -> Result<CorsRule, Error> {
    r.count_entry()?;
    let mut rule = CorsRule::default();
    while let Some(name) = r.next_child()? {
        let list = match name {
            "ID" => {
                r.put(&mut rule.id, "ID", XmlReader::string)?;
                continue;
            }
            "MaxAgeSeconds" => {
                r.put(
                    &mut rule.max_age_seconds,
                    "MaxAgeSeconds",
                    XmlReader::u32_value,
                )?;
                continue;
            }
            "AllowedHeader" => (&mut rule.allowed_headers, "AllowedHeader"),
            "AllowedMethod" => (&mut rule.allowed_methods, "AllowedMethod"),
            "AllowedOrigin" => (&mut rule.allowed_origins, "AllowedOrigin"),
            "ExposeHeader" => (&mut rule.expose_headers, "ExposeHeader"),
            _ => {
                r.skip()?;
                continue;
            }
        };
        r.count_entry()?;
        list.0.push(r.string(list.1)?);
    }
    let missing = |element| {
        r.error_here(ErrorKind::MissingElement {
            parent: "CORSRule",
            element,
        })
    };
    if rule.allowed_methods.is_empty() {
        return Err(missing("AllowedMethod"));
    }
    if rule.allowed_origins.is_empty() {
        return Err(missing("AllowedOrigin"));
    }
    Ok(rule)
}
