//! Evaluation of a parsed [`RuleSet`] against one set of parameters.
//!
//! Values borrow from the rule set and the caller's parameters wherever they
//! can (`Cow`), so the common path — comparing flags, checking a bucket name,
//! filling a URL template — allocates little beyond the result itself.
//! Arguments that are plain references are looked at in place rather than
//! cloned out of the scope.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::rc::Rc;

use serde_json::Value as Json;

use crate::parse::{
    Attr, Body, Call, EndpointSpec, Expr, Func, Part, Prop, Rule, RuleSet, Step, Template,
};
use crate::partitions::{Partition, partition_for};
use crate::{Endpoint, ParamType, ParamValue, Params, stdlib};

/// A runtime value. `'a` is the lifetime of the rule set and parameters.
#[derive(Debug, Clone)]
enum Value<'a> {
    Str(Cow<'a, str>),
    Bool(bool),
    Int(i64),
    Partition(&'static Partition),
    Url(Rc<Url<'a>>),
    Arn(Rc<Arn<'a>>),
    List(Rc<Vec<Value<'a>>>),
}

/// Result of `parseURL`.
#[derive(Debug)]
struct Url<'a> {
    scheme: Cow<'a, str>,
    authority: Cow<'a, str>,
    path: Cow<'a, str>,
    normalized_path: Cow<'a, str>,
    is_ip: bool,
}

/// Result of `aws.parseArn`.
#[derive(Debug)]
struct Arn<'a> {
    partition: Cow<'a, str>,
    service: Cow<'a, str>,
    region: Cow<'a, str>,
    account_id: Cow<'a, str>,
    resource_id: Vec<Cow<'a, str>>,
}

/// Variables by slot; `None` is unset (an empty optional).
type Scope<'a> = [Option<Value<'a>>];

/// An evaluation result: possibly empty, possibly borrowed from the scope.
type Eval<'s, 'a> = Result<Option<Cow<'s, Value<'a>>>, String>;

impl RuleSet {
    /// Resolves the endpoint for `params`. Unset parameters take their
    /// declared default. An error rule that matches yields `Err` with its
    /// message; so do unknown or mistyped parameters and rule-set faults.
    pub fn resolve(&self, params: &Params) -> Result<Endpoint, String> {
        let mut scope: Vec<Option<Value<'_>>> = vec![None; self.slot_names.len()];
        let mut used = 0;
        for (slot, def) in self.params.iter().enumerate() {
            let given = params.get(&def.name);
            used += usize::from(given.is_some());
            scope[slot] = match (given.or(def.default.as_ref()), def.kind) {
                (None, _) if def.required => {
                    return Err(format!("missing required parameter {}", def.name));
                }
                (None, _) => None,
                (Some(ParamValue::String(s)), ParamType::String) => {
                    Some(Value::Str(Cow::Borrowed(s)))
                }
                (Some(ParamValue::Bool(b)), ParamType::Boolean) => Some(Value::Bool(*b)),
                (Some(v), kind) => {
                    return Err(format!(
                        "parameter {} must be {kind:?}, got {v:?}",
                        def.name
                    ));
                }
            };
        }
        if used != params.len() {
            let unknown: Vec<&str> = params
                .iter()
                .map(|(k, _)| k)
                .filter(|k| !self.params.iter().any(|d| d.name == *k))
                .collect();
            return Err(format!("unknown parameter(s): {}", unknown.join(", ")));
        }
        match self.eval_rules(&self.rules, &mut scope)? {
            Some(endpoint) => Ok(endpoint),
            None => Err("no rule matched (the rule set should end with a fallback)".into()),
        }
    }

    /// The first result among `rules`, or `None` if no rule's conditions hold.
    fn eval_rules<'a>(
        &'a self,
        rules: &'a [Rule],
        scope: &mut Scope<'a>,
    ) -> Result<Option<Endpoint>, String> {
        for rule in rules {
            if let Some(endpoint) = self.eval_rule(rule, scope)? {
                return Ok(Some(endpoint));
            }
        }
        Ok(None)
    }

    fn eval_rule<'a>(
        &'a self,
        rule: &'a Rule,
        scope: &mut Scope<'a>,
    ) -> Result<Option<Endpoint>, String> {
        for (i, condition) in rule.conditions.iter().enumerate() {
            // Condition results are fresh values, so this does not copy.
            let value = self.eval(&condition.expr, scope)?.map(Cow::into_owned);
            let holds = match &value {
                None | Some(Value::Bool(false)) => false,
                Some(_) => true,
            };
            if !holds {
                // Assignments made by earlier conditions go out of scope.
                for c in &rule.conditions[..i] {
                    if let Some(slot) = c.assign {
                        scope[slot] = None;
                    }
                }
                return Ok(None);
            }
            if let Some(slot) = condition.assign {
                scope[slot] = value;
            }
        }
        // Every body ends the evaluation (endpoint or error), so the scope
        // needs no clean-up from here on.
        match &rule.body {
            Body::Endpoint(spec) => self.build_endpoint(spec, scope).map(Some),
            Body::Error(message) => Err(self.eval_string(message, scope)?),
            Body::Tree(rules) => match self.eval_rules(rules, scope)? {
                Some(endpoint) => Ok(Some(endpoint)),
                None => Err("rule-set fault: a tree rule matched but none of its rules did".into()),
            },
        }
    }

    fn build_endpoint<'a>(
        &'a self,
        spec: &'a EndpointSpec,
        scope: &Scope<'a>,
    ) -> Result<Endpoint, String> {
        let url = self.eval_string(&spec.url, scope)?;
        let properties = self.build_prop(&spec.properties, scope)?;
        let mut headers = BTreeMap::new();
        for (name, values) in &spec.headers {
            let values = values
                .iter()
                .map(|v| self.eval_string(v, scope))
                .collect::<Result<Vec<_>, _>>()?;
            headers.insert(name.clone(), values);
        }
        Ok(Endpoint {
            url,
            properties,
            headers,
        })
    }

    fn build_prop<'a>(&'a self, prop: &'a Prop, scope: &Scope<'a>) -> Result<Json, String> {
        Ok(match prop {
            Prop::Const(json) => json.clone(),
            Prop::Template(t) => {
                let mut s = String::new();
                self.render(t, scope, &mut s)?;
                Json::String(s)
            }
            Prop::Array(items) => Json::Array(
                items
                    .iter()
                    .map(|p| self.build_prop(p, scope))
                    .collect::<Result<_, _>>()?,
            ),
            Prop::Object(fields) => Json::Object(
                fields
                    .iter()
                    .map(|(k, p)| Ok((k.clone(), self.build_prop(p, scope)?)))
                    .collect::<Result<_, String>>()?,
            ),
        })
    }

    /// Evaluates an expression that must produce a string (URL, error
    /// message, header value).
    fn eval_string<'a>(&'a self, expr: &'a Expr, scope: &Scope<'a>) -> Result<String, String> {
        match self.eval(expr, scope)?.as_deref() {
            Some(Value::Str(s)) => Ok(s.clone().into_owned()),
            other => Err(format!("expected a string, got {other:?}")),
        }
    }

    fn render<'a>(
        &'a self,
        template: &'a Template,
        scope: &Scope<'a>,
        out: &mut String,
    ) -> Result<(), String> {
        for part in &template.parts {
            match part {
                Part::Lit(s) => out.push_str(s),
                Part::Var(slot, path) => {
                    let value = scope[*slot].as_ref();
                    let looked_up;
                    let value = if path.is_empty() {
                        value
                    } else {
                        looked_up = match value {
                            Some(v) => get_attr(v, path)?,
                            None => None,
                        };
                        looked_up.as_ref()
                    };
                    match value {
                        Some(Value::Str(s)) => out.push_str(s),
                        Some(Value::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
                        Some(Value::Int(i)) => {
                            write!(out, "{i}").expect("writing to a String cannot fail")
                        }
                        Some(other) => return Err(format!("template: cannot insert {other:?}")),
                        None => {
                            return Err(format!("template: `{}` is unset", self.slot_names[*slot]));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn eval<'s, 'a: 's>(&'a self, expr: &'a Expr, scope: &'s Scope<'a>) -> Eval<'s, 'a> {
        let owned = |v| Ok(Some(Cow::Owned(v)));
        match expr {
            Expr::Str(s) => owned(Value::Str(Cow::Borrowed(s))),
            Expr::Bool(b) => owned(Value::Bool(*b)),
            Expr::Int(i) => owned(Value::Int(*i)),
            Expr::Ref(slot) => Ok(scope[*slot].as_ref().map(Cow::Borrowed)),
            Expr::Template(t) => {
                let mut s = String::new();
                self.render(t, scope, &mut s)?;
                owned(Value::Str(Cow::Owned(s)))
            }
            Expr::Call(call) => self.call(call, scope),
        }
    }

    fn call<'s, 'a: 's>(&'a self, call: &'a Call, scope: &'s Scope<'a>) -> Eval<'s, 'a> {
        let args = &call.args;
        let arg = |i: usize| self.eval(&args[i], scope);
        let done = |v: Value<'a>| Ok(Some(Cow::Owned(v)));
        match &call.func {
            Func::IsSet => done(Value::Bool(arg(0)?.is_some())),
            Func::Not => match arg(0)?.as_deref() {
                Some(Value::Bool(b)) => done(Value::Bool(!b)),
                other => Err(format!("not: expected a boolean, got {other:?}")),
            },
            Func::BooleanEquals => {
                let equal = match (arg(0)?.as_deref(), arg(1)?.as_deref()) {
                    (Some(Value::Bool(a)), Some(Value::Bool(b))) => a == b,
                    (None, _) | (_, None) => false,
                    (a, b) => {
                        return Err(format!(
                            "booleanEquals: expected booleans, got {a:?} and {b:?}"
                        ));
                    }
                };
                done(Value::Bool(equal))
            }
            Func::StringEquals => {
                let equal = match (arg(0)?.as_deref(), arg(1)?.as_deref()) {
                    (Some(Value::Str(a)), Some(Value::Str(b))) => a == b,
                    (None, _) | (_, None) => false,
                    (a, b) => {
                        return Err(format!(
                            "stringEquals: expected strings, got {a:?} and {b:?}"
                        ));
                    }
                };
                done(Value::Bool(equal))
            }
            Func::GetAttr(path) => match arg(0)? {
                Some(value) => Ok(get_attr(&value, path)?.map(Cow::Owned)),
                None => Ok(None),
            },
            Func::Substring => {
                let input = arg(0)?;
                let (start, stop, reverse) =
                    match (arg(1)?.as_deref(), arg(2)?.as_deref(), arg(3)?.as_deref()) {
                        (
                            Some(Value::Int(start)),
                            Some(Value::Int(stop)),
                            Some(Value::Bool(reverse)),
                        ) => (*start, *stop, *reverse),
                        other => return Err(format!("substring: bad index arguments {other:?}")),
                    };
                let (Ok(start), Ok(stop)) = (usize::try_from(start), usize::try_from(stop)) else {
                    return Ok(None);
                };
                let Some(input) = string_arg("substring", input.as_deref())? else {
                    return Ok(None);
                };
                Ok(stdlib::substring(input, start, stop, reverse)
                    .map(|r| Cow::Owned(Value::Str(slice(input, r)))))
            }
            Func::UriEncode => {
                let input = arg(0)?;
                let Some(input) = string_arg("uriEncode", input.as_deref())? else {
                    return Ok(None);
                };
                let encoded = match input {
                    Cow::Borrowed(s) => stdlib::uri_encode(s),
                    Cow::Owned(s) => Cow::Owned(stdlib::uri_encode(s).into_owned()),
                };
                done(Value::Str(encoded))
            }
            Func::ParseUrl => {
                let input = arg(0)?;
                let Some(input) = string_arg("parseURL", input.as_deref())? else {
                    return Ok(None);
                };
                let Some(parts) = stdlib::parse_url(input) else {
                    return Ok(None);
                };
                let path = slice(input, parts.path);
                let normalized_path = match &path {
                    Cow::Borrowed(p) => stdlib::normalized_path(p),
                    Cow::Owned(p) => Cow::Owned(stdlib::normalized_path(p).into_owned()),
                };
                let url = Url {
                    scheme: slice(input, parts.scheme),
                    authority: slice(input, parts.authority),
                    path,
                    normalized_path,
                    is_ip: parts.is_ip,
                };
                done(Value::Url(Rc::new(url)))
            }
            Func::IsValidHostLabel | Func::AwsIsVirtualHostableS3Bucket => {
                let input = arg(0)?;
                let allow_sub_domains = match arg(1)?.as_deref() {
                    Some(Value::Bool(b)) => *b,
                    other => {
                        return Err(format!(
                            "host label check: expected a boolean, got {other:?}"
                        ));
                    }
                };
                let Some(input) = string_arg("host label check", input.as_deref())? else {
                    return done(Value::Bool(false));
                };
                let valid = if matches!(call.func, Func::IsValidHostLabel) {
                    stdlib::is_valid_host_label(input, allow_sub_domains)
                } else {
                    stdlib::is_virtual_hostable_s3_bucket(input, allow_sub_domains)
                };
                done(Value::Bool(valid))
            }
            Func::AwsPartition => {
                let input = arg(0)?;
                let Some(region) = string_arg("aws.partition", input.as_deref())? else {
                    return Ok(None);
                };
                done(Value::Partition(partition_for(region)))
            }
            Func::AwsParseArn => {
                let input = arg(0)?;
                let Some(input) = string_arg("aws.parseArn", input.as_deref())? else {
                    return Ok(None);
                };
                let Some(parts) = stdlib::parse_arn(input) else {
                    return Ok(None);
                };
                let arn = Arn {
                    partition: slice(input, parts.partition),
                    service: slice(input, parts.service),
                    region: slice(input, parts.region),
                    account_id: slice(input, parts.account_id),
                    resource_id: parts
                        .resource_id
                        .into_iter()
                        .map(|r| slice(input, r))
                        .collect(),
                };
                done(Value::Arn(Rc::new(arn)))
            }
        }
    }
}

/// The string inside an argument: `Ok(None)` when unset, an error when the
/// argument is not a string.
fn string_arg<'v, 'a>(
    func: &str,
    value: Option<&'v Value<'a>>,
) -> Result<Option<&'v Cow<'a, str>>, String> {
    match value {
        None => Ok(None),
        Some(Value::Str(s)) => Ok(Some(s)),
        Some(other) => Err(format!("{func}: expected a string, got {other:?}")),
    }
}

/// `s[range]`, borrowed from the original when `s` is borrowed.
fn slice<'a>(s: &Cow<'a, str>, range: Range<usize>) -> Cow<'a, str> {
    match s {
        Cow::Borrowed(b) => Cow::Borrowed(&b[range]),
        Cow::Owned(o) => Cow::Owned(o[range].to_owned()),
    }
}

/// `getAttr(value, path)`. An index past the end gives the empty optional;
/// a key the value does not have is a rule-set fault.
fn get_attr<'a>(value: &Value<'a>, path: &[Step]) -> Result<Option<Value<'a>>, String> {
    let str_ = |s: &Cow<'a, str>| Some(Value::Str(s.clone()));
    let static_str = |s: &'static str| Some(Value::Str(Cow::Borrowed(s)));
    let (first, rest) = match path.split_first() {
        None => return Ok(Some(value.clone())),
        Some(split) => split,
    };
    let next = match (value, first) {
        // The common ARN case `resourceId[i]`, without building the list.
        (Value::Arn(arn), Step::Key(Attr::ResourceId))
            if matches!(rest.first(), Some(Step::Index(_))) =>
        {
            let Some(Step::Index(i)) = rest.first() else {
                unreachable!()
            };
            let Some(element) = arn.resource_id.get(*i) else {
                return Ok(None);
            };
            return get_attr(&Value::Str(element.clone()), &rest[1..]);
        }
        (Value::Partition(p), Step::Key(attr)) => match attr {
            Attr::Name => static_str(p.id),
            Attr::DnsSuffix => static_str(p.dns_suffix),
            Attr::DualStackDnsSuffix => static_str(p.dual_stack_dns_suffix),
            Attr::SupportsFips => Some(Value::Bool(p.supports_fips)),
            Attr::SupportsDualStack => Some(Value::Bool(p.supports_dual_stack)),
            Attr::ImplicitGlobalRegion => static_str(p.implicit_global_region),
            other => return Err(format!("getAttr: a partition has no attribute {other:?}")),
        },
        (Value::Url(url), Step::Key(attr)) => match attr {
            Attr::Scheme => str_(&url.scheme),
            Attr::Authority => str_(&url.authority),
            Attr::Path => str_(&url.path),
            Attr::NormalizedPath => str_(&url.normalized_path),
            Attr::IsIp => Some(Value::Bool(url.is_ip)),
            other => return Err(format!("getAttr: a URL has no attribute {other:?}")),
        },
        (Value::Arn(arn), Step::Key(attr)) => match attr {
            Attr::Partition => str_(&arn.partition),
            Attr::Service => str_(&arn.service),
            Attr::Region => str_(&arn.region),
            Attr::AccountId => str_(&arn.account_id),
            Attr::ResourceId => Some(Value::List(Rc::new(
                arn.resource_id
                    .iter()
                    .map(|s| Value::Str(s.clone()))
                    .collect(),
            ))),
            other => return Err(format!("getAttr: an ARN has no attribute {other:?}")),
        },
        (Value::List(items), Step::Index(i)) => items.get(*i).cloned(),
        (other, step) => return Err(format!("getAttr: cannot apply {step:?} to {other:?}")),
    };
    match next {
        Some(next) => get_attr(&next, rest),
        None => Ok(None),
    }
}
