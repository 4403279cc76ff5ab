//! The global flags that reach stores a plain client cannot: `--no-sign-request`,
//! `--request-payer requester`, `--ca-bundle` and `--no-verify-ssl`, seen on what s3w
//! sends (a recording proxy) and against local-s3 behind TLS with a private CA.

mod support;

#[path = "../../s3-wire-tokio/tests/support/base64.rs"]
mod base64_encoding;
#[path = "../../s3-wire-tokio/tests/support/pki.rs"]
#[allow(dead_code)]
mod pki;

// pki.rs writes PEM with its parent's `base64`.
use base64_encoding::base64;

use std::sync::Arc;

use support::proxy::{Proxy, Verdict};
use support::{Env, write};

/// The header `name` of a recorded request head, if present.
fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().skip(1).find_map(|line| {
        let (n, value) = line.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

#[test]
fn request_payer_goes_with_every_request_and_no_sign_request_signs_nothing() {
    let env = Env::new();
    let proxy = Proxy::start(env.server.endpoint(), |_| Verdict::Forward);
    env.ok(&["mb", "s3://payer-b"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.bin");
    write(&file, &[7u8; 3000]);

    // Requester Pays: an upload, a listing and a download, each request naming the payer.
    let via = ["--endpoint-url", proxy.endpoint.as_str()];
    let with_payer = |args: &[&str]| {
        let mut all = via.to_vec();
        all.extend(["--request-payer", "requester"]);
        all.extend(args);
        env.ok(&all)
    };
    with_payer(&["cp", file.to_str().unwrap(), "s3://payer-b/f.bin"]);
    assert!(with_payer(&["ls", "s3://payer-b/"]).contains("f.bin"));
    let back = dir.path().join("back.bin");
    with_payer(&["cp", "s3://payer-b/f.bin", back.to_str().unwrap()]);
    assert_eq!(std::fs::read(&back).unwrap(), [7u8; 3000]);
    let heads = std::mem::take(&mut *proxy.heads.lock().unwrap());
    assert!(heads.len() >= 3, "{heads:?}");
    for head in &heads {
        assert_eq!(
            header(head, "x-amz-request-payer"),
            Some("requester"),
            "{head}"
        );
    }
    // Without the flag, no request carries it.
    env.ok(&[via[0], via[1], "ls", "s3://payer-b/"]);
    let heads = std::mem::take(&mut *proxy.heads.lock().unwrap());
    assert!(
        heads
            .iter()
            .all(|h| header(h, "x-amz-request-payer").is_none())
    );

    // Anonymous: no credentials are looked up (none are set) and nothing is signed;
    // local-s3 serves no anonymous reader, so its refusal is what comes back.
    let refused = env
        .cmd(&[
            via[0],
            via[1],
            "--no-sign-request",
            "cat",
            "s3://payer-b/f.bin",
        ])
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("access denied") && stderr.contains("unsigned"),
        "the refusal says the request was unsigned: {stderr}"
    );
    let heads = std::mem::take(&mut *proxy.heads.lock().unwrap());
    assert!(!heads.is_empty());
    for head in &heads {
        assert!(header(head, "authorization").is_none(), "{head}");
        assert!(header(head, "x-amz-security-token").is_none(), "{head}");
    }
}

/// local-s3 behind a TLS terminator presenting a certificate for 127.0.0.1 from `ca`.
fn tls_front(upstream: &str, ca: &pki::TestCa) -> String {
    let leaf = ca.issue(&["127.0.0.1"]);
    let config = Arc::new(pki::server_config(&leaf, pki::DEFAULT_VERSIONS, &[]));
    let upstream = upstream.trim_start_matches("http://").to_owned();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let acceptor = tokio_rustls::TlsAcceptor::from(config);
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let (acceptor, upstream) = (acceptor.clone(), upstream.clone());
                tokio::spawn(async move {
                    // A client that refuses the certificate ends the handshake here.
                    let Ok(mut tls) = acceptor.accept(stream).await else {
                        return;
                    };
                    let Ok(mut plain) = tokio::net::TcpStream::connect(&upstream).await else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
    });
    format!("https://{address}")
}

#[test]
fn a_private_ca_is_trusted_with_ca_bundle_and_no_verify_ssl_warns() {
    let env = Env::new();
    let ca = pki::TestCa::new("s3w test CA");
    let endpoint = tls_front(env.server.endpoint(), &ca);
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("ca.pem");
    std::fs::write(&bundle, ca.pem()).unwrap();
    let bundle = bundle.to_str().unwrap();
    let https = ["--endpoint-url", endpoint.as_str()];

    // Untrusted: a TLS failure that names the way out, and nothing sent.
    let refused = env.run(&[https[0], https[1], "ls"]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("TLS") && stderr.contains("--ca-bundle"),
        "{stderr}"
    );

    // --ca-bundle: a round trip over TLS.
    let file = dir.path().join("f.bin");
    let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    write(&file, &data);
    let trusted = |args: &[&str]| {
        let mut all = vec![https[0], https[1], "--ca-bundle", bundle];
        all.extend(args);
        env.ok(&all)
    };
    trusted(&["mb", "s3://tls-b"]);
    trusted(&["cp", file.to_str().unwrap(), "s3://tls-b/f.bin"]);
    let back = dir.path().join("back.bin");
    trusted(&["cp", "s3://tls-b/f.bin", back.to_str().unwrap()]);
    assert_eq!(std::fs::read(&back).unwrap(), data);

    // AWS_CA_BUNDLE does the same; a missing bundle file is named.
    let listed = env
        .cmd(&[https[0], https[1], "ls", "s3://tls-b/"])
        .env("AWS_CA_BUNDLE", bundle)
        .output()
        .unwrap();
    assert!(listed.status.success(), "{listed:?}");
    assert!(String::from_utf8_lossy(&listed.stdout).contains("f.bin"));
    let missing = dir.path().join("missing.pem");
    let refused = env.run(&[
        https[0],
        https[1],
        "--ca-bundle",
        missing.to_str().unwrap(),
        "ls",
    ]);
    assert_ne!(refused.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("missing.pem"), "{stderr}");

    // --no-verify-ssl: works, and says loudly what it gives up.
    let insecure = env.run(&[https[0], https[1], "--no-verify-ssl", "ls", "s3://tls-b/"]);
    assert!(insecure.status.success(), "{insecure:?}");
    let stderr = String::from_utf8_lossy(&insecure.stderr);
    assert!(
        stderr.contains("warning: --no-verify-ssl"),
        "the warning is printed: {stderr}"
    );
}

/// The S3 addressing settings the AWS CLI reads from the environment and the profile reach
/// the wire: the legacy `us-east-1` global endpoint, FIPS, dual-stack and Transfer
/// Acceleration (seen in the `CONNECT` an HTTPS proxy receives), Multi-Region Access Points turned off (refused before anything is sent, the
/// access point given as an `s3://arn:...` URL), S3 Express session auth turned off (no
/// CreateSession, the caller's keys signed for `s3express`).
#[test]
fn addressing_settings_of_the_environment_and_profile_reach_the_wire() {
    let env = Env::new();
    let refuse = |_: &str| {
        Verdict::Answer(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n".to_vec())
    };
    let proxy = Proxy::start(env.server.endpoint(), refuse);
    let config = env.home.path().join("config");
    let on_aws = |variable: Option<(&str, &str)>, profile: &str| {
        write(&config, profile.as_bytes());
        let mut command = env.cmd(&["ls", "s3://photos/"]);
        command
            .env_remove("AWS_ENDPOINT_URL")
            .env("AWS_REGION", "us-east-1")
            .env("AWS_CONFIG_FILE", &config)
            .env("HTTPS_PROXY", &proxy.endpoint);
        if let Some((name, value)) = variable {
            command.env(name, value);
        }
        let _ = command.output().expect("run s3w");
        let heads = std::mem::take(&mut *proxy.heads.lock().unwrap());
        // Each attempt (the proxy refuses them all) asks for the same tunnel.
        let mut lines: Vec<String> = heads
            .iter()
            .map(|head| head.lines().next().unwrap_or_default().to_owned())
            .collect();
        lines.dedup();
        lines
    };
    let regional = "CONNECT photos.s3.us-east-1.amazonaws.com:443 HTTP/1.1";
    let global = "CONNECT photos.s3.amazonaws.com:443 HTTP/1.1";
    assert_eq!(on_aws(None, ""), [regional]);
    let legacy = Some(("AWS_S3_US_EAST_1_REGIONAL_ENDPOINT", "legacy"));
    assert_eq!(on_aws(legacy, ""), [global]);
    let profile = "[default]\ns3_us_east_1_regional_endpoint = legacy\n";
    assert_eq!(on_aws(None, profile), [global]);
    // The environment wins over the profile.
    let regional_env = Some(("AWS_S3_US_EAST_1_REGIONAL_ENDPOINT", "regional"));
    assert_eq!(on_aws(regional_env, profile), [regional]);
    // FIPS, dual-stack and Transfer Acceleration, each from the environment or the profile.
    let fips = "CONNECT photos.s3-fips.us-east-1.amazonaws.com:443 HTTP/1.1";
    let dual_stack = "CONNECT photos.s3.dualstack.us-east-1.amazonaws.com:443 HTTP/1.1";
    let both = "CONNECT photos.s3-fips.dualstack.us-east-1.amazonaws.com:443 HTTP/1.1";
    let accelerated = "CONNECT photos.s3-accelerate.amazonaws.com:443 HTTP/1.1";
    assert_eq!(on_aws(Some(("AWS_USE_FIPS_ENDPOINT", "true")), ""), [fips]);
    assert_eq!(
        on_aws(None, "[default]\nuse_fips_endpoint = true\n"),
        [fips]
    );
    assert_eq!(
        on_aws(Some(("AWS_USE_DUALSTACK_ENDPOINT", "true")), ""),
        [dual_stack]
    );
    assert_eq!(
        on_aws(
            Some(("AWS_USE_FIPS_ENDPOINT", "true")),
            "[default]\nuse_dualstack_endpoint = true\n"
        ),
        [both]
    );
    let accelerate = "[default]\ns3 =\n  use_accelerate_endpoint = true\n";
    assert_eq!(on_aws(None, accelerate), [accelerated]);

    let mrap = "s3://arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap/k";
    for (variable, profile) in [
        (
            Some(("AWS_S3_DISABLE_MULTIREGION_ACCESS_POINTS", "true")),
            "",
        ),
        (
            None,
            "[default]\ns3_disable_multiregion_access_points = true\n",
        ),
    ] {
        write(&config, profile.as_bytes());
        let mut command = env.cmd(&["cat", mrap]);
        command
            .env_remove("AWS_ENDPOINT_URL")
            .env("AWS_CONFIG_FILE", &config)
            .env("HTTPS_PROXY", &proxy.endpoint);
        if let Some((name, value)) = variable {
            command.env(name, value);
        }
        let out = command.output().expect("run s3w");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            stderr.contains("Multi-Region Access Point ARNs are disabled"),
            "{stderr}"
        );
        assert!(proxy.heads.lock().unwrap().is_empty(), "sent anyway");
    }

    // S3 Express through a custom endpoint (path-style on an IP address): CreateSession
    // first by default; with session auth off, none, and the caller's keys for s3express.
    let express = "s3://data--usw2-az1--x-s3/";
    for (session_auth, variable) in [(true, None), (false, Some("true"))] {
        let mut command = env.cmd(&["ls", express]);
        command
            .env("AWS_ENDPOINT_URL", &proxy.endpoint)
            .env("AWS_REGION", "us-west-2");
        if let Some(value) = variable {
            command.env("AWS_S3_DISABLE_EXPRESS_SESSION_AUTH", value);
        }
        let _ = command.output().expect("run s3w");
        let heads = std::mem::take(&mut *proxy.heads.lock().unwrap());
        let first = heads.first().expect("a request");
        assert_eq!(
            first
                .lines()
                .next()
                .unwrap_or_default()
                .contains("?session"),
            session_auth,
            "{first}"
        );
        if !session_auth {
            let authorization = header(first, "authorization").unwrap_or_default();
            assert!(
                authorization.contains("/us-west-2/s3express/aws4_request"),
                "{first}"
            );
            assert!(header(first, "x-amz-s3session-token").is_none());
        }
    }
}
