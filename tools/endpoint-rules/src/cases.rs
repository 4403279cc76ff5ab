//! AWS's official S3 endpoint test cases (`testdata/endpoint-tests-1.json`), typed, for the
//! tests that run them through s3-wire's own addressing (s3-ops' `Endpoint`, the client's
//! configuration), and what a refusal of each error case must name.

use serde_json::Value as Json;

use crate::{ParamValue, Params};

/// One official case.
#[derive(Debug, Clone)]
pub struct Case {
    /// The case's `documentation` (its name).
    pub name: String,
    /// The rule-set parameters it sets.
    pub params: Params,
    /// The operation it names (`operationInputs[0]`), if any.
    pub operation: Option<Operation>,
    /// What AWS's rules give.
    pub expect: Expect,
}

/// The operation of a case and its parameters (`Bucket`, `Key`, `RequestRoute`, ...).
#[derive(Debug, Clone)]
pub struct Operation {
    /// `GetObject`, `ListBuckets`, `CreateBucket`, ...
    pub name: String,
    /// `operationParams`, the string ones.
    pub params: Vec<(String, String)>,
}

/// The expected outcome of a case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// An endpoint: its URL and the auth schemes in the SDKs' order of preference.
    Endpoint {
        /// `scheme://host[/path]`.
        url: String,
        /// At least one.
        auth: Vec<AuthScheme>,
    },
    /// An error with AWS's message.
    Error(String),
}

/// One entry of an endpoint's `authSchemes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthScheme {
    /// `sigv4`, `sigv4a` or `sigv4-s3express`.
    pub name: String,
    /// The signing service (`s3`, `s3express`, `s3-outposts`, `s3-object-lambda`).
    pub signing_name: String,
    /// SigV4's region.
    pub signing_region: Option<String>,
    /// SigV4a's region set, joined by `,`.
    pub signing_region_set: Option<String>,
}

impl Case {
    /// A boolean parameter (false when unset).
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.params.get(name), Some(ParamValue::Bool(true)))
    }

    /// A boolean parameter as set (`None` when unset).
    pub fn option(&self, name: &str) -> Option<bool> {
        match self.params.get(name) {
            Some(ParamValue::Bool(value)) => Some(*value),
            _ => None,
        }
    }

    /// A string parameter.
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.params.get(name) {
            Some(ParamValue::String(value)) => Some(value),
            _ => None,
        }
    }

    /// A string parameter of the case's operation.
    pub fn operation_param(&self, name: &str) -> Option<&str> {
        self.operation
            .as_ref()?
            .params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The operation the case stands for: the one it names, or for a case of parameters
    /// alone, the operation whose request sets them (GetObject for a bucket,
    /// WriteGetObjectResponse for Object Lambda's endpoint, a bucket-level operation for the
    /// S3 Express control endpoint or disabled access points).
    pub fn operation_name(&self) -> &str {
        if let Some(operation) = &self.operation {
            return &operation.name;
        }
        let bucket = self.text("Bucket");
        if self.flag("UseObjectLambdaEndpoint") {
            "WriteGetObjectResponse"
        } else if self.flag("UseS3ExpressControlEndpoint") || self.flag("DisableAccessPoints") {
            match bucket {
                None => "ListDirectoryBuckets",
                // No bucket-level operation creates an access point: HeadBucket is what a
                // bucket-level request to one is.
                Some(name) if name.ends_with("--xa-s3") => "HeadBucket",
                Some(_) => "CreateBucket",
            }
        } else if bucket.is_some() {
            "GetObject"
        } else {
            "ListBuckets"
        }
    }

    /// The object key of a GetObject (`key` where the case names none).
    pub fn key(&self) -> &str {
        self.text("Key")
            .or_else(|| self.operation_param("Key"))
            .unwrap_or("key")
    }

    /// WriteGetObjectResponse's request route (`route` where the case names none).
    pub fn request_route(&self) -> &str {
        self.operation_param("RequestRoute").unwrap_or("route")
    }

    /// The URL (without query) the case's operation sends to, for the rules' endpoint
    /// `url`: the key or WriteGetObjectResponse's path after it, the request route in front
    /// of the host; no trailing `/`.
    pub fn request_url(&self, url: &str) -> String {
        let mut request = url.trim_end_matches('/').to_owned();
        match self.operation_name() {
            "GetObject" => {
                request.push('/');
                request.push_str(self.key());
            }
            "WriteGetObjectResponse" => {
                let host = request.find("://").map_or(0, |i| i + 3);
                request.insert_str(
                    host,
                    &format!("{}.", self.request_route().to_ascii_lowercase()),
                );
                request.push_str("/WriteGetObjectResponse");
            }
            _ => {}
        }
        request
    }
}

/// Every official case, in file order.
pub fn official() -> Vec<Case> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/endpoint-tests-1.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let document: Json = serde_json::from_str(&text).expect("the official cases are JSON");
    document["testCases"]
        .as_array()
        .expect("testCases")
        .iter()
        .map(case)
        .collect()
}

fn case(json: &Json) -> Case {
    let mut params = Params::new();
    for (name, value) in json["params"].as_object().expect("params") {
        match value {
            Json::String(s) => params.set(name.as_str(), s.as_str()),
            Json::Bool(b) => params.set(name.as_str(), *b),
            other => panic!("parameter {name}: {other}"),
        };
    }
    let operation = json["operationInputs"][0]
        .as_object()
        .map(|input| Operation {
            name: input["operationName"]
                .as_str()
                .expect("operationName")
                .to_owned(),
            params: input
                .get("operationParams")
                .and_then(Json::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(n, v)| Some((n.clone(), v.as_str()?.to_owned())))
                .collect(),
        });
    let expect = &json["expect"];
    let expect = match expect.get("error") {
        Some(message) => Expect::Error(message.as_str().expect("error text").to_owned()),
        None => Expect::Endpoint {
            url: expect["endpoint"]["url"].as_str().expect("url").to_owned(),
            auth: expect["endpoint"]["properties"]["authSchemes"]
                .as_array()
                .expect("authSchemes")
                .iter()
                .map(|scheme| AuthScheme {
                    name: scheme["name"].as_str().expect("name").to_owned(),
                    signing_name: scheme["signingName"]
                        .as_str()
                        .expect("signingName")
                        .to_owned(),
                    signing_region: scheme["signingRegion"].as_str().map(str::to_owned),
                    signing_region_set: scheme["signingRegionSet"].as_array().map(|set| {
                        set.iter()
                            .filter_map(Json::as_str)
                            .collect::<Vec<_>>()
                            .join(",")
                    }),
                })
                .collect(),
        },
    };
    Case {
        name: json["documentation"]
            .as_str()
            .expect("documentation")
            .to_owned(),
        params,
        operation,
        expect,
    }
}

/// What a refusal of an error case must name, by AWS's message: one of the alternatives,
/// each a set of fragments that must all appear (case-insensitively) in the refusal.
pub fn refusal_must_name(aws_message: &str) -> &'static [&'static [&'static str]] {
    const CAUSES: &[(&str, &[&[&str]])] = &[
        (
            "A custom endpoint cannot be combined with FIPS",
            &[&["custom endpoint", "fips"]],
        ),
        (
            "A custom endpoint cannot be combined with S3 Accelerate",
            &[&["custom endpoint", "acceleration"]],
        ),
        ("A region must be set", &[&["region", "set"]]),
        (
            "Accelerate cannot be used with FIPS",
            &[&["acceleration", "fips"]],
        ),
        (
            "Access Points do not support S3 Accelerate",
            &[&["access point", "acceleration"]],
        ),
        (
            "Access points are not supported",
            &[&["access point", "not supported"]],
        ),
        (
            "Cannot set dual-stack in combination with a custom endpoint",
            &[&["dual-stack", "custom endpoint"]],
        ),
        ("Client was configured for partition", &[&["partition"]]),
        (
            "Custom endpoint `",
            &[&["custom endpoint", "not a valid url"]],
        ),
        (
            "Expected a endpoint to be specified",
            &[&["beta outpost", "endpoint"]],
        ),
        ("Expected an outpost type", &[&["outpost type"]]),
        ("Expected a 4-component resource", &[&["4-component"]]),
        ("but no name was provided", &[&["no name"]]),
        ("Missing account id", &[&["account id", "missing"]]),
        ("No ARN type specified", &[&["no resource type"]]),
        (
            "Object Lambda ARNs only support",
            &[&["object lambda", "accesspoint"]],
        ),
        (
            "single resource component",
            &[&["single resource component"]],
        ),
        ("was not for the S3 service", &[&["s3 service"]]),
        ("The Outpost Id was not set", &[&["outpost id", "not set"]]),
        (
            "The access point name may only contain",
            &[&["access point name"]],
        ),
        ("The account id may only contain", &[&["account id"]]),
        ("The outpost Id ", &[&["outpost id"]]),
        ("Unrecognized format", &[&["unrecognized arn"]]),
        ("was not a valid ARN", &[&["not a valid arn"]]),
        (
            "bucket ARN is missing a region",
            &[&["must name its region"]],
        ),
        ("expected an access point name", &[&["access point name"]]),
        (
            "Invalid Access Point Name",
            &[&["multi-region access point", "alias"]],
        ),
        ("contains sub resources", &[&["sub-resources"]]),
        (
            "Invalid Outposts Bucket alias",
            &[&["outposts access point alias", "valid bucket name"]],
        ),
        (
            "Multi-Region Access Point ARNs are disabled",
            &[&["multi-region access point", "disabled"]],
        ),
        (
            "UseArnRegion is `false`",
            &[&["does not match", "use_arn_region"]],
        ),
        ("Invalid region in ARN", &[&["arn", "region", "dns"]]),
        (
            "Invalid region: region was not a valid DNS name",
            &[&["invalid region", "dns"]],
        ),
        ("Partition does not support FIPS", &[&["partition", "fips"]]),
        (
            "Path-style addressing cannot be used with ARN buckets",
            // An ARN that is also malformed is refused for that first.
            &[&["path-style", "arn"], &["outpost type"]],
        ),
        (
            "Path-style addressing cannot be used with S3 Accelerate",
            &[&["path-style", "acceleration"]],
        ),
        (
            "S3 Accelerate cannot be used in this region",
            &[&["acceleration", "region"]],
        ),
        (
            "S3 MRAP does not support dual-stack",
            &[&["multi-region access point", "dual-stack"]],
        ),
        (
            "S3 MRAP does not support FIPS",
            &[&["multi-region access point", "fips"]],
        ),
        (
            "S3 MRAP does not support S3 Accelerate",
            &[&["multi-region access point", "acceleration"]],
        ),
        (
            "S3 Object Lambda does not support Dual-stack",
            &[&["object lambda", "dual-stack"]],
        ),
        (
            "S3 Object Lambda does not support S3 Accelerate",
            &[&["object lambda", "acceleration"]],
        ),
        (
            "S3 Outposts does not support Dual-stack",
            &[&["outposts", "dual-stack"]],
        ),
        (
            "S3 Outposts does not support FIPS",
            &[&["outposts", "fips"]],
        ),
        (
            "S3 Outposts does not support S3 Accelerate",
            &[&["outposts", "acceleration"]],
        ),
        (
            "S3Express bucket name is not a valid virtual hostable name",
            &[&["s3 express", "host label"]],
        ),
        (
            "S3Express does not support S3 Accelerate",
            &[&["s3 express", "acceleration"]],
        ),
        (
            "Unrecognized S3Express bucket name format",
            &[&["s3 express name format"]],
        ),
        ("Unrecognized hardware type", &[&["hardware type"]]),
    ];
    CAUSES
        .iter()
        .find(|(aws, _)| aws_message.contains(aws))
        .map(|(_, ours)| *ours)
        .unwrap_or_else(|| panic!("no cause listed for the AWS error {aws_message:?}"))
}

/// Whether `refusal` names what [`refusal_must_name`] asks for `aws_message`.
pub fn names_the_cause(aws_message: &str, refusal: &str) -> bool {
    let refusal = refusal.to_lowercase();
    refusal_must_name(aws_message)
        .iter()
        .any(|all| all.iter().all(|fragment| refusal.contains(fragment)))
}

/// AWS's S3 rule set (`testdata/endpoint-rule-set-1.json`), parsed.
pub fn s3_rule_set() -> crate::RuleSet {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/endpoint-rule-set-1.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    crate::RuleSet::from_json(&text).expect("the S3 rule set parses")
}
