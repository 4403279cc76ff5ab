//! The reqwest floor: one HEAD request over reqwest configured exactly as
//! s3-wire-tokio configures it (reqwest 0.13 `rustls-no-provider`, rustls with
//! `ring` + TLS 1.2, the platform verifier, HTTP/1.1, no redirects) and no S3
//! code at all: the smallest binary any reqwest-based client can reach.
//! `floor-reqwest URL`; see measurements/client-size.md.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args().nth(1).ok_or("usage: floor-reqwest URL")?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let verifier =
            std::sync::Arc::new(rustls_platform_verifier::Verifier::new(provider.clone())?);
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .http1_only()
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let response = client.head(url).send().await?;
        println!("{} {:?}", response.status(), response.headers().get("etag"));
        Ok(())
    })
}
