//! The evaluable tree and its construction from the rule-set JSON.
//!
//! Parsing does all the work that does not depend on the inputs: variable
//! names become slot numbers (checked to be in scope where used), function
//! names become [`Func`] variants with their arity checked, templates are
//! split into parts, `getAttr` paths are split into steps, and endpoint
//! properties without placeholders are kept as ready-made JSON.

use std::collections::HashMap;

use serde_json::{Map, Value as Json};

use crate::{ParamDef, ParamType, ParamValue};

/// Index of a variable (parameter or `assign`ed value) in the evaluation scope.
pub(crate) type Slot = usize;

/// A parsed rule set, ready to [`resolve`](RuleSet::resolve) endpoints.
#[derive(Debug)]
pub struct RuleSet {
    pub(crate) version: String,
    /// Parameters in declaration order; parameter `i` lives in slot `i`.
    pub(crate) params: Vec<ParamDef>,
    /// Name of every slot (parameters first), for diagnostics.
    pub(crate) slot_names: Vec<String>,
    pub(crate) rules: Vec<Rule>,
}

#[derive(Debug)]
pub(crate) struct Rule {
    pub conditions: Vec<Condition>,
    pub body: Body,
}

#[derive(Debug)]
pub(crate) struct Condition {
    pub expr: Expr,
    pub assign: Option<Slot>,
}

#[derive(Debug)]
pub(crate) enum Body {
    Endpoint(EndpointSpec),
    Error(Expr),
    Tree(Vec<Rule>),
}

#[derive(Debug)]
pub(crate) struct EndpointSpec {
    pub url: Expr,
    pub properties: Prop,
    pub headers: Vec<(String, Vec<Expr>)>,
}

/// An endpoint property value: JSON in which strings are templates.
#[derive(Debug)]
pub(crate) enum Prop {
    /// A subtree without placeholders, cloned as is.
    Const(Json),
    Template(Template),
    Array(Vec<Prop>),
    Object(Vec<(String, Prop)>),
}

#[derive(Debug)]
pub(crate) enum Expr {
    /// A string literal without placeholders.
    Str(String),
    Bool(bool),
    Int(i64),
    Template(Template),
    Ref(Slot),
    Call(Box<Call>),
}

#[derive(Debug)]
pub(crate) struct Call {
    pub func: Func,
    pub args: Vec<Expr>,
}

#[derive(Debug)]
pub(crate) enum Func {
    IsSet,
    Not,
    BooleanEquals,
    StringEquals,
    /// `getAttr(value, "path")`: the literal path is pre-parsed; `args` holds
    /// only the value.
    GetAttr(Vec<Step>),
    Substring,
    UriEncode,
    ParseUrl,
    IsValidHostLabel,
    AwsPartition,
    AwsParseArn,
    AwsIsVirtualHostableS3Bucket,
}

/// A template string: literal text and `{var}` / `{var#path}` lookups.
#[derive(Debug)]
pub(crate) struct Template {
    pub parts: Vec<Part>,
}

#[derive(Debug)]
pub(crate) enum Part {
    Lit(String),
    /// `{var}` (empty path) or `{var#path}`.
    Var(Slot, Vec<Step>),
}

/// One step of a `getAttr` path.
#[derive(Debug)]
pub(crate) enum Step {
    Key(Attr),
    Index(usize),
}

/// Attribute names known to the standard library's structured values
/// (partition, URL, ARN); anything else is kept for the error message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Attr {
    // aws.partition
    Name,
    DnsSuffix,
    DualStackDnsSuffix,
    SupportsFips,
    SupportsDualStack,
    ImplicitGlobalRegion,
    // parseURL
    Scheme,
    Authority,
    Path,
    NormalizedPath,
    IsIp,
    // aws.parseArn
    Partition,
    Service,
    Region,
    AccountId,
    ResourceId,
    Unknown(String),
}

impl Attr {
    fn from_name(name: &str) -> Attr {
        match name {
            "name" => Attr::Name,
            "dnsSuffix" => Attr::DnsSuffix,
            "dualStackDnsSuffix" => Attr::DualStackDnsSuffix,
            "supportsFIPS" => Attr::SupportsFips,
            "supportsDualStack" => Attr::SupportsDualStack,
            "implicitGlobalRegion" => Attr::ImplicitGlobalRegion,
            "scheme" => Attr::Scheme,
            "authority" => Attr::Authority,
            "path" => Attr::Path,
            "normalizedPath" => Attr::NormalizedPath,
            "isIp" => Attr::IsIp,
            "partition" => Attr::Partition,
            "service" => Attr::Service,
            "region" => Attr::Region,
            "accountId" => Attr::AccountId,
            "resourceId" => Attr::ResourceId,
            other => Attr::Unknown(other.to_owned()),
        }
    }
}

impl RuleSet {
    /// Parses a rule-set document (`{"version", "parameters", "rules"}`).
    pub fn from_json(json: &str) -> Result<RuleSet, String> {
        let doc: Json =
            serde_json::from_str(json).map_err(|e| format!("rule set is not JSON: {e}"))?;
        let doc = doc.as_object().ok_or("rule set must be a JSON object")?;
        let version = doc
            .get("version")
            .and_then(Json::as_str)
            .ok_or("rule set has no string `version`")?;
        let params_json = doc
            .get("parameters")
            .and_then(Json::as_object)
            .ok_or("rule set has no `parameters` object")?;
        let rules_json = doc
            .get("rules")
            .and_then(Json::as_array)
            .ok_or("rule set has no `rules` array")?;

        let mut parser = Parser::default();
        let mut params = Vec::with_capacity(params_json.len());
        for (name, spec) in params_json {
            let def = parse_param(name, spec).map_err(|e| format!("parameter {name}: {e}"))?;
            let slot = parser.new_slot(name);
            parser.in_scope.push(slot);
            params.push(def);
        }
        let rules = rules_json
            .iter()
            .enumerate()
            .map(|(i, r)| parser.rule(r).map_err(|e| format!("rules[{i}]: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RuleSet {
            version: version.to_owned(),
            params,
            slot_names: parser.names,
            rules,
        })
    }

    /// The rule set's `version` field.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The declared parameters, in declaration order.
    pub fn parameters(&self) -> &[ParamDef] {
        &self.params
    }
}

fn parse_param(name: &str, spec: &Json) -> Result<ParamDef, String> {
    let spec = spec.as_object().ok_or("must be an object")?;
    let kind = match spec.get("type").and_then(Json::as_str) {
        Some(t) if t.eq_ignore_ascii_case("string") => ParamType::String,
        Some(t) if t.eq_ignore_ascii_case("boolean") => ParamType::Boolean,
        other => return Err(format!("unsupported type {other:?}")),
    };
    let default = match (spec.get("default"), kind) {
        (None, _) => None,
        (Some(Json::String(s)), ParamType::String) => Some(ParamValue::String(s.clone())),
        (Some(Json::Bool(b)), ParamType::Boolean) => Some(ParamValue::Bool(*b)),
        (Some(other), _) => return Err(format!("default {other} does not match its type")),
    };
    Ok(ParamDef {
        name: name.to_owned(),
        kind,
        required: spec
            .get("required")
            .and_then(Json::as_bool)
            .unwrap_or(false),
        default,
        built_in: spec
            .get("builtIn")
            .and_then(Json::as_str)
            .map(str::to_owned),
    })
}

/// Parse-time state: the name ↔ slot mapping (one slot per distinct name;
/// sibling rules that assign the same name share it) and the names visible
/// at the current point of the tree.
#[derive(Default)]
struct Parser {
    slots: HashMap<String, Slot>,
    names: Vec<String>,
    in_scope: Vec<Slot>,
}

impl Parser {
    fn new_slot(&mut self, name: &str) -> Slot {
        *self.slots.entry(name.to_owned()).or_insert_with(|| {
            self.names.push(name.to_owned());
            self.names.len() - 1
        })
    }

    fn lookup(&self, name: &str) -> Result<Slot, String> {
        match self.slots.get(name) {
            Some(&slot) if self.in_scope.contains(&slot) => Ok(slot),
            _ => Err(format!("reference to `{name}`, which is not in scope")),
        }
    }

    fn rule(&mut self, json: &Json) -> Result<Rule, String> {
        let obj = json.as_object().ok_or("rule must be an object")?;
        let scope_len = self.in_scope.len();
        let conditions = obj
            .get("conditions")
            .and_then(Json::as_array)
            .ok_or("rule has no `conditions` array")?
            .iter()
            .enumerate()
            .map(|(i, c)| {
                self.condition(c)
                    .map_err(|e| format!("conditions[{i}]: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let body = match obj.get("type").and_then(Json::as_str) {
            Some("endpoint") => {
                let endpoint = obj
                    .get("endpoint")
                    .and_then(Json::as_object)
                    .ok_or("endpoint rule has no `endpoint` object")?;
                Body::Endpoint(
                    self.endpoint(endpoint)
                        .map_err(|e| format!("endpoint: {e}"))?,
                )
            }
            Some("error") => {
                Body::Error(self.expr(obj.get("error").ok_or("error rule has no `error`")?)?)
            }
            Some("tree") => Body::Tree(
                obj.get("rules")
                    .and_then(Json::as_array)
                    .ok_or("tree rule has no `rules` array")?
                    .iter()
                    .enumerate()
                    .map(|(i, r)| self.rule(r).map_err(|e| format!("rules[{i}]: {e}")))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            other => return Err(format!("unknown rule type {other:?}")),
        };
        self.in_scope.truncate(scope_len);
        Ok(Rule { conditions, body })
    }

    fn condition(&mut self, json: &Json) -> Result<Condition, String> {
        let obj = json
            .as_object()
            .filter(|o| o.contains_key("fn"))
            .ok_or("condition must be a function call")?;
        let expr = Expr::Call(Box::new(self.call(obj)?));
        let assign = match obj.get("assign") {
            None => None,
            Some(Json::String(name)) => {
                if self.lookup(name).is_ok() {
                    return Err(format!(
                        "`assign: {name}` shadows a variable already in scope"
                    ));
                }
                let slot = self.new_slot(name);
                self.in_scope.push(slot);
                Some(slot)
            }
            Some(other) => return Err(format!("assign must be a string, not {other}")),
        };
        Ok(Condition { expr, assign })
    }

    fn endpoint(&mut self, obj: &Map<String, Json>) -> Result<EndpointSpec, String> {
        let url = self.expr(obj.get("url").ok_or("no `url`")?)?;
        let properties = match obj.get("properties") {
            None => Prop::Const(Json::Object(Map::new())),
            Some(p) => self.prop(p)?,
        };
        let mut headers = Vec::new();
        if let Some(h) = obj.get("headers") {
            for (name, values) in h.as_object().ok_or("`headers` must be an object")? {
                let values = values.as_array().ok_or("header values must be an array")?;
                let values = values
                    .iter()
                    .map(|v| self.expr(v))
                    .collect::<Result<Vec<_>, _>>()?;
                headers.push((name.clone(), values));
            }
        }
        Ok(EndpointSpec {
            url,
            properties,
            headers,
        })
    }

    fn prop(&mut self, json: &Json) -> Result<Prop, String> {
        let prop = match json {
            Json::String(s) => match self.template(s)? {
                Expr::Template(t) => Prop::Template(t),
                _ => Prop::Const(json.clone()),
            },
            Json::Array(items) => Prop::Array(
                items
                    .iter()
                    .map(|v| self.prop(v))
                    .collect::<Result<_, _>>()?,
            ),
            Json::Object(map) => Prop::Object(
                map.iter()
                    .map(|(k, v)| Ok((k.clone(), self.prop(v)?)))
                    .collect::<Result<_, String>>()?,
            ),
            _ => Prop::Const(json.clone()),
        };
        // Fold placeholder-free containers back into constants.
        Ok(match prop {
            Prop::Array(items) if items.iter().all(|p| matches!(p, Prop::Const(_))) => Prop::Const(
                Json::Array(items.into_iter().map(Prop::into_const).collect()),
            ),
            Prop::Object(fields) if fields.iter().all(|(_, p)| matches!(p, Prop::Const(_))) => {
                Prop::Const(Json::Object(
                    fields
                        .into_iter()
                        .map(|(k, p)| (k, p.into_const()))
                        .collect(),
                ))
            }
            other => other,
        })
    }

    fn expr(&mut self, json: &Json) -> Result<Expr, String> {
        match json {
            Json::String(s) => self.template(s),
            Json::Bool(b) => Ok(Expr::Bool(*b)),
            Json::Number(n) => n
                .as_i64()
                .map(Expr::Int)
                .ok_or_else(|| format!("unsupported number {n}")),
            Json::Object(obj) if obj.contains_key("fn") => {
                Ok(Expr::Call(Box::new(self.call(obj)?)))
            }
            Json::Object(obj) => match obj.get("ref") {
                Some(Json::String(name)) => Ok(Expr::Ref(self.lookup(name)?)),
                _ => Err(format!(
                    "expected a function call or reference, found {json}"
                )),
            },
            other => Err(format!("unsupported expression {other}")),
        }
    }

    fn call(&mut self, obj: &Map<String, Json>) -> Result<Call, String> {
        let name = obj
            .get("fn")
            .and_then(Json::as_str)
            .ok_or("`fn` must be a string")?;
        let argv = obj
            .get("argv")
            .and_then(Json::as_array)
            .ok_or_else(|| format!("{name}: no `argv` array"))?;
        let (func, arity) = match name {
            "isSet" => (Func::IsSet, 1),
            "not" => (Func::Not, 1),
            "booleanEquals" => (Func::BooleanEquals, 2),
            "stringEquals" => (Func::StringEquals, 2),
            "getAttr" => {
                let path = match argv.get(1) {
                    Some(Json::String(p)) if argv.len() == 2 => parse_path(p)?,
                    _ => return Err("getAttr takes a value and a literal path".into()),
                };
                let target = self.expr(&argv[0]).map_err(|e| format!("getAttr: {e}"))?;
                return Ok(Call {
                    func: Func::GetAttr(path),
                    args: vec![target],
                });
            }
            "substring" => (Func::Substring, 4),
            "uriEncode" => (Func::UriEncode, 1),
            "parseURL" => (Func::ParseUrl, 1),
            "isValidHostLabel" => (Func::IsValidHostLabel, 2),
            "aws.partition" => (Func::AwsPartition, 1),
            "aws.parseArn" => (Func::AwsParseArn, 1),
            "aws.isVirtualHostableS3Bucket" => (Func::AwsIsVirtualHostableS3Bucket, 2),
            other => return Err(format!("unsupported function `{other}`")),
        };
        if argv.len() != arity {
            return Err(format!(
                "{name} takes {arity} argument(s), found {}",
                argv.len()
            ));
        }
        let args = argv
            .iter()
            .map(|a| self.expr(a))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{name}: {e}"))?;
        Ok(Call { func, args })
    }

    /// Parses a template string. `{{` and `}}` stand for literal braces;
    /// `{name}` and `{name#path}` are lookups. Returns `Expr::Str` when the
    /// string has no lookups.
    fn template(&mut self, s: &str) -> Result<Expr, String> {
        if !s.contains(['{', '}']) {
            return Ok(Expr::Str(s.to_owned()));
        }
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut rest = s;
        while let Some(i) = rest.find(['{', '}']) {
            lit.push_str(&rest[..i]);
            let brace = rest.as_bytes()[i];
            rest = &rest[i + 1..];
            if rest.as_bytes().first() == Some(&brace) {
                lit.push(brace as char); // escaped `{{` or `}}`
                rest = &rest[1..];
                continue;
            }
            if brace == b'}' {
                return Err(format!("unmatched `}}` in template {s:?}"));
            }
            let end = rest
                .find('}')
                .ok_or_else(|| format!("unclosed `{{` in template {s:?}"))?;
            let placeholder = &rest[..end];
            rest = &rest[end + 1..];
            let (name, path) = match placeholder.split_once('#') {
                Some((name, path)) => (name, parse_path(path)?),
                None => (placeholder, Vec::new()),
            };
            if !lit.is_empty() {
                parts.push(Part::Lit(std::mem::take(&mut lit)));
            }
            parts.push(Part::Var(
                self.lookup(name)
                    .map_err(|e| format!("template {s:?}: {e}"))?,
                path,
            ));
        }
        lit.push_str(rest);
        if parts.is_empty() {
            return Ok(Expr::Str(lit));
        }
        if !lit.is_empty() {
            parts.push(Part::Lit(lit));
        }
        Ok(Expr::Template(Template { parts }))
    }
}

impl Prop {
    fn into_const(self) -> Json {
        match self {
            Prop::Const(json) => json,
            _ => unreachable!("only called on constants"),
        }
    }
}

/// Parses a `getAttr` path (`key`, `key.key`, `key[3]`, `[3]`): split on `.`,
/// each part a key optionally followed by one `[index]`.
fn parse_path(path: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, index) = match part.split_once('[') {
            Some((key, rest)) => {
                let digits = rest
                    .strip_suffix(']')
                    .ok_or_else(|| format!("bad index in path {path:?}"))?;
                let index = digits
                    .parse::<usize>()
                    .map_err(|_| format!("bad index in path {path:?}"))?;
                (key, Some(index))
            }
            None => (part, None),
        };
        if !key.is_empty() {
            steps.push(Step::Key(Attr::from_name(key)));
        } else if index.is_none() {
            return Err(format!("empty key in path {path:?}"));
        }
        if let Some(index) = index {
            steps.push(Step::Index(index));
        }
    }
    Ok(steps)
}
