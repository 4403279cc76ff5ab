//! The hyper floor: the same HEAD request and the same TLS configuration as
//! `floor-reqwest` (rustls with `ring` + TLS 1.2, the platform verifier,
//! HTTP/1.1), over hyper-util's pooled client and hyper-rustls directly, as
//! s3-wire 0.1.1 does. With `--no-default-features --features webpki-roots`, the
//! compiled-in webpki roots instead, as 0.1.1 has them. `floor-hyper URL`; see
//! measurements/client-size.md.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url: hyper::Uri = std::env::args()
        .nth(1)
        .ok_or("usage: floor-hyper URL")?
        .parse()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        #[cfg(feature = "platform-verifier")]
        let https = {
            let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
            let verifier =
                std::sync::Arc::new(rustls_platform_verifier::Verifier::new(provider.clone())?);
            let tls = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()?
                .dangerous()
                .with_custom_certificate_verifier(verifier)
                .with_no_client_auth();
            hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(tls)
        };
        #[cfg(not(feature = "platform-verifier"))]
        let https = hyper_rustls::HttpsConnectorBuilder::new().with_webpki_roots();
        let https = https.https_or_http().enable_http1().build();
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build::<_, http_body_util::Empty<bytes::Bytes>>(https);
        let request = hyper::Request::head(url).body(http_body_util::Empty::new())?;
        let response = client.request(request).await?;
        println!("{} {:?}", response.status(), response.headers().get("etag"));
        Ok(())
    })
}
